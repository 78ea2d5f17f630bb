import Foundation
import SAMEverything
import SAMFiles
import SAMImage
import SAMImageFiles

/// The photos of a segment-everything dataset run, in the one order every process agrees on.
///
/// From a folder: its PNG and JPEG files, told by extension (`.png`, `.jpg`, `.jpeg`, any case), not
/// recursive; names starting with `.` are skipped, as are files with other extensions. From a list
/// file: one path a line (relative paths resolved against the list file's folder, leading and
/// trailing whitespace trimmed, blank lines and lines starting with `#` skipped).
///
/// Every image is checked before any work: it must be a regular file (links followed) starting with a
/// PNG or JPEG signature and declaring a size within `ImageLimits` (`ImageIO.header`). Images are
/// sorted by name, comparing UTF-8 bytes, and each maps to `<stem>.json` (the file name without its
/// last extension); two images whose stems differ only in case (`a.png`, `a.jpg`, `A.png`) are an
/// error naming both, so the outputs stay distinct on case-insensitive file systems too.
public struct ImageDataset: Sendable {
    public struct Image: Sendable, Equatable {
        /// As listed: a folder's file name, or a list file's line (COCO's `file_name`).
        public var name: String
        /// The path read.
        public var path: String
        /// The file name without its last extension: the image's output is `<stem>.json`.
        public var stem: String
        /// Format and size, from the file's header.
        public var header: ImageHeader

        public var outputName: String { stem + ".json" }
    }

    public enum Source: Sendable, Equatable {
        case folder(String)
        case list(String)

        public var path: String {
            switch self {
            case .folder(let path), .list(let path): path
            }
        }
    }

    /// Extensions that make a folder's file an image (compared lowercased).
    public static let imageExtensions: Set<String> = ["png", "jpg", "jpeg"]
    /// How many problems an error lists before it counts the rest.
    static let problemsShown = 10

    public let source: Source
    /// Every image, sorted by name (UTF-8 byte order).
    public let images: [Image]

    /// A folder of images or a list file, told apart by what `path` is.
    public init(_ path: String, limits: ImageLimits = .default) throws(EverythingError) {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) else {
            throw .dataset("\(path): no such folder or list file")
        }
        if isFolder.boolValue {
            try self.init(folder: path, limits: limits)
        } else {
            try self.init(listFile: path, limits: limits)
        }
    }

    /// The PNG and JPEG files of `folder` (not its subfolders).
    public init(folder: String, limits: ImageLimits = .default) throws(EverythingError) {
        let names: [String]
        do { names = try FileManager.default.contentsOfDirectory(atPath: folder) } catch {
            throw .dataset("\(folder): cannot list the folder: \(error.localizedDescription)")
        }
        let listed = names.filter { name in
            guard !name.hasPrefix("."), let dot = name.lastIndex(of: "."), dot != name.startIndex else { return false }
            return Self.imageExtensions.contains(name[name.index(after: dot)...].lowercased())
        }
        let base = folder.hasSuffix("/") ? folder : folder + "/"
        try self.init(source: .folder(folder), entries: listed.map { (name: $0, path: base + $0, origin: base + $0) }, limits: limits)
    }

    /// The images a list file names, one path a line.
    public init(listFile: String, limits: ImageLimits = .default) throws(EverythingError) {
        let data: Data
        do {
            try RegularFile.requireForDataset(listFile)
            data = try Data(contentsOf: URL(fileURLWithPath: listFile))
        } catch let error as EverythingError {
            throw error
        } catch {
            throw .dataset("\(listFile): cannot read the list file: \(error.localizedDescription)")
        }
        let bytes = [UInt8](data.prefix(8))
        if ImageIO.sniff(bytes) != nil {
            throw .dataset("\(listFile) is an image, not a folder or a list of image paths")
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw .dataset("\(listFile): not UTF-8 text (a list file holds one image path a line)")
        }
        let folder = URL(fileURLWithPath: listFile).deletingLastPathComponent().path
        var entries: [(name: String, path: String, origin: String)] = []
        for (index, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = rawLine.trimmingCharacters(in: .whitespacesAndNewlines)
            if line.isEmpty || line.hasPrefix("#") { continue }
            let path = line.hasPrefix("/") ? line : (folder.hasSuffix("/") ? folder : folder + "/") + line
            entries.append((name: line, path: path, origin: "\(listFile) line \(index + 1): \(line)"))
        }
        try self.init(source: .list(listFile), entries: entries, limits: limits)
    }

    /// Checks every entry (headers, limits, distinct stems) and sorts them.
    init(source: Source, entries: [(name: String, path: String, origin: String)], limits: ImageLimits) throws(EverythingError) {
        self.source = source
        guard !entries.isEmpty else {
            switch source {
            case .folder(let folder):
                throw .dataset("\(folder): no images (a folder's images are its *.png, *.jpg and *.jpeg files)")
            case .list(let list):
                throw .dataset("\(list): no images (the list names no image paths)")
            }
        }
        var problems: [String] = []
        var images: [Image] = []
        images.reserveCapacity(entries.count)
        for entry in entries {
            do {
                let header = try ImageIO.header(entry.path)
                if header.width > ImageIO.maxDimension || header.height > ImageIO.maxDimension
                    || header.width.multipliedReportingOverflow(by: header.height).overflow
                    || header.width * header.height > limits.maxPixels {
                    problems.append("\(entry.origin): \(header.format.rawValue.uppercased()) declares \(header.width)x\(header.height); "
                                    + "the limit is \(limits.maxPixels) pixels, \(ImageIO.maxDimension) a side (--max-pixels)")
                    continue
                }
                images.append(Image(name: entry.name, path: entry.path, stem: Self.stem(of: entry.name), header: header))
            } catch {
                let message = error.file == entry.path ? error.message : "\(error.file): \(error.message)"
                problems.append(entry.origin == entry.path ? "\(entry.path): \(message)" : "\(entry.origin): \(message) (\(entry.path))")
            }
        }
        if !problems.isEmpty { throw .dataset(Self.listing(problems, what: "image(s) cannot be used")) }
        images.sort { Self.precedes($0.name, $1.name) }
        var byStem: [String: Image] = [:]
        var clashes: [String] = []
        for image in images {
            let key = image.stem.lowercased()
            if let first = byStem[key] {
                clashes.append("\(first.name) and \(image.name) both map to \(image.stem).json")
            } else {
                byStem[key] = image
            }
        }
        if !clashes.isEmpty {
            throw .dataset(Self.listing(clashes, what: "output name(s) taken twice (rename or leave out one image of each pair)"))
        }
        self.images = images
    }

    /// An image's name without its folder and last extension.
    public static func stem(of name: String) -> String {
        let file = name.split(separator: "/", omittingEmptySubsequences: true).last.map(String.init) ?? name
        guard let dot = file.lastIndex(of: "."), dot != file.startIndex else { return file }
        return String(file[..<dot])
    }

    /// The dataset's order: names compared as UTF-8 bytes (Python's `sorted(names, key=str.encode)`).
    public static func precedes(_ a: String, _ b: String) -> Bool {
        a.utf8.lexicographicallyPrecedes(b.utf8)
    }

    /// The images of `shard`, with their positions in the whole dataset.
    public func images(in shard: DatasetShard) -> [(position: Int, image: Image)] {
        images.enumerated().filter { shard.contains($0.offset) }.map { (position: $0.offset, image: $0.element) }
    }

    /// Every file the dataset reads: the list file (if any) and the images.
    public var inputPaths: [String] {
        var paths = images.map(\.path)
        if case .list(let list) = source { paths.append(list) }
        return paths
    }

    static func listing(_ problems: [String], what: String) -> String {
        let shown = problems.prefix(problemsShown).map { "\n  " + $0 }.joined()
        let more = problems.count > problemsShown ? "\n  ... and \(problems.count - problemsShown) more" : ""
        return "\(problems.count) \(what):" + shown + more
    }
}

/// One part of a dataset for one process: the images whose position in the sorted list leaves
/// remainder `index` when divided by `count` (0-based, `0 <= index < count`). Shards `0/N ... (N-1)/N`
/// together cover every image once, and image i is in shard `i % N` however the work is spread.
public struct DatasetShard: Sendable, Equatable, CustomStringConvertible {
    public let index: Int
    public let count: Int

    public init(index: Int, count: Int) throws(EverythingError) {
        guard count >= 1 else { throw .dataset("--shard \(index)/\(count): N must be at least 1") }
        guard (0..<count).contains(index) else {
            throw .dataset("--shard \(index)/\(count): I must be in 0...\(count - 1) (shards are numbered from 0)")
        }
        self.init(checkedIndex: index, count: count)
    }

    private init(checkedIndex index: Int, count: Int) {
        self.index = index
        self.count = count
    }

    /// `I/N`, digits only (`$SLURM_ARRAY_TASK_ID/$SLURM_ARRAY_TASK_COUNT`).
    public init(parsing text: String) throws(EverythingError) {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        func number(_ part: Substring) -> Int? {
            let digits = part.drop { $0 == "-" }
            guard !digits.isEmpty, digits.count <= 18, digits.allSatisfy({ $0.isASCII && $0.isNumber }),
                  part.count - digits.count <= 1 else { return nil }
            return Int(part)
        }
        guard parts.count == 2, let index = number(parts[0]), let count = number(parts[1]) else {
            throw .dataset("--shard '\(text)' is not I/N (shard I of N, 0 <= I < N, e.g. 0/4)")
        }
        try self.init(index: index, count: count)
    }

    /// The whole dataset in one process.
    public static let whole = DatasetShard(checkedIndex: 0, count: 1)

    public func contains(_ position: Int) -> Bool { position % count == index }

    public var description: String { "\(index)/\(count)" }
}

extension RegularFile {
    /// `require`, as a dataset error.
    static func requireForDataset(_ path: String) throws(EverythingError) {
        do { try require(path) } catch { throw .dataset("\(path): \(error.message)") }
    }
}
