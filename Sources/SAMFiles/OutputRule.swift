import CFaultContainment
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What may stand at an output's name, checked by every writer of this package (`AtomicFileWriter`,
/// `StagedFolder`) and by the tools before they start work:
///
/// - nothing, or a regular file the tool replaces atomically (`existing: .replace`); with
///   `existing: .keep` ("kept unless --force") only nothing, and that is held up to the final rename;
/// - never a directory, a device, a FIFO, a socket or a symbolic link: those are refused, named, and
///   left as they are;
/// - never one of the run's own inputs (the model, a reference file, an image), also not through a
///   link or another hard link to the same file.
public struct OutputPolicy: Sendable {
    /// What an existing regular file at the output's name means.
    public enum Existing: Sendable {
        /// A regular file at the name is replaced.
        case replace
        /// Anything at the name is an error, also when it appears while the output is being written.
        case keep
    }

    /// Whether a regular file at the name is replaced or refused.
    public var existing: Existing
    /// Files the run reads; the output must be none of them.
    public var inputs: [String]
    /// How the tool's user names this output in messages ("--json", "--out"), if it is an option.
    public var option: String?

    /// A policy; the defaults replace a regular file and compare with no inputs.
    public init(existing: Existing = .replace, inputs: [String] = [], option: String? = nil) {
        self.existing = existing
        self.inputs = inputs
        self.option = option
    }

    /// Replace a regular file, no inputs to compare with.
    public static let replace = OutputPolicy()
}

/// A file's identity: device and inode (what two names of one file share).
package struct FileIdentity: Hashable, Sendable {
    package let device: UInt64
    package let inode: UInt64

    /// The identity of the file `path` names, links followed; nil when there is none.
    package init?(path: String) {
        var status = stat()
        guard stat(path, &status) == 0 else { return nil }
        device = UInt64(status.st_dev)
        inode = UInt64(status.st_ino)
    }

    init(_ status: stat) {
        device = UInt64(status.st_dev)
        inode = UInt64(status.st_ino)
    }
}

package enum OutputRule {
    /// What stands at a name, without following a link.
    package enum Entry: Equatable, Sendable {
        case nothing
        case regularFile
        case other(String)
    }

    package static func entry(at path: String) throws(FormatError) -> Entry {
        var status = stat()
        if lstat(path, &status) != 0 {
            if errno == ENOENT { return .nothing }
            throw FormatError(.writeFailed, file: path, "cannot look at the output's name: \(String(cString: strerror(errno)))")
        }
        return kind(status.st_mode).map(Entry.other) ?? .regularFile
    }

    /// nil for a regular file, else what the mode says it is ("a FIFO", "a directory", ...).
    package static func kind(_ mode: mode_t) -> String? {
        switch mode & S_IFMT {
        case S_IFREG: nil
        case S_IFDIR: "a directory"
        case S_IFLNK: "a symbolic link"
        case S_IFCHR: "a character device"
        case S_IFBLK: "a block device"
        case S_IFIFO: "a FIFO"
        case S_IFSOCK: "a socket"
        default: "not a regular file"
        }
    }

    /// Checks that `path` may be written under `policy`; throws `.outputRefused` naming the output
    /// (and what stands there, or which input it is) otherwise. Touches nothing.
    package static func check(_ path: String, _ policy: OutputPolicy) throws(FormatError) {
        let label = policy.option.map { "\($0) \(path)" } ?? path
        var status = stat()
        if lstat(path, &status) != 0 {
            guard errno == ENOENT else {
                throw FormatError(.outputRefused, file: path, "\(label): cannot look at the output's name: \(String(cString: strerror(errno)))")
            }
            return
        }
        if let kind = kind(status.st_mode) {
            throw FormatError(.outputRefused, file: path,
                              "\(label) is \(kind); an output may only replace a regular file (nothing was touched)")
        }
        if policy.existing == .keep {
            throw FormatError(.outputRefused, file: path, "\(label) exists; pass --force to replace it (nothing was touched)")
        }
        let identity = FileIdentity(status)
        for input in policy.inputs where FileIdentity(path: input) == identity {
            throw FormatError(.outputRefused, file: path,
                              "\(label) is the input \(input)\(input == path ? "" : " (the same file)"); "
                                + "an output never replaces one of the run's inputs (nothing was touched)")
        }
    }

    // MARK: - Renames

    /// Renames `source` to `target`, which must not exist: `renameat2(RENAME_NOREPLACE)` where the
    /// kernel and filesystem support it, else a hard link and an unlink of `source` (`link` fails when
    /// the name is taken). Returns false, with errno set, when it cannot.
    package static func renameNoReplace(_ source: String, _ target: String) -> Bool {
        #if canImport(Glibc)
        if let renameat2 = Self.renameat2 {
            if renameat2(AT_FDCWD, source, AT_FDCWD, target, 1 /* RENAME_NOREPLACE */) == 0 { return true }
            // EINVAL: the filesystem does not support the flag; ENOSYS: the kernel lacks the call.
            guard errno == EINVAL || errno == ENOSYS else { return false }
        }
        #endif
        guard link(source, target) == 0 else { return false }
        unlink(source)
        return true
    }

    #if canImport(Glibc)
    typealias RenameAt2 = @convention(c) (Int32, UnsafePointer<CChar>, Int32, UnsafePointer<CChar>, UInt32) -> Int32
    /// glibc's `renameat2` (2.28 and later); looked up at run time, as Swift's Glibc module does not
    /// declare it.
    static let renameat2: RenameAt2? = {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "renameat2") else { return nil }
        return unsafeBitCast(symbol, to: RenameAt2.self)
    }()
    #endif

    // MARK: - Temporaries

    /// `<name>.tmp-<pid>-<random hex>`: a temporary of the output `path`, made by process `pid`.
    package static func temporaryName(for path: String) -> String {
        path + ".tmp-\(getpid())-" + String(UInt64.random(in: 1...UInt64.max), radix: 16)
    }

    /// Removes temporaries of `path` (`<name>.tmp-<pid>-<hex>`) left by processes that no longer
    /// run (a conversion killed with SIGKILL). Only regular files and folders of them are removed
    /// (`removeTemporary`); a temporary of a live process is left alone.
    package static func removeStaleTemporaries(of path: String) {
        let slash = path.lastIndex(of: "/")
        let folder = slash.map { String(path[..<$0]) } ?? "."
        let base = slash.map { String(path[path.index(after: $0)...]) } ?? path
        guard !base.isEmpty, let directory = opendir(folder.isEmpty ? "/" : folder) else { return }
        var stale: [String] = []
        while let entry = readdir(directory) {
            let name = entryName(entry)
            guard name.hasPrefix(base + ".tmp-") else { continue }
            let parts = name.dropFirst(base.count + 5).split(separator: "-", omittingEmptySubsequences: false)
            guard parts.count == 2, let pid = Int32(parts[0]), pid > 0, UInt64(parts[1], radix: 16) != nil,
                  pid != getpid(), kill(pid, 0) != 0, errno == ESRCH else { continue }
            stale.append((folder.isEmpty ? "" : folder) + "/" + name)
        }
        closedir(directory)
        for temporary in stale { removeTemporary(temporary) }
    }

    /// A directory entry's name, read in place up to its NUL. Not through `entry.pointee.d_name`: that
    /// copies the whole 256-byte array, and glibc sizes each entry to its name (`d_reclen`), so the
    /// copy reads past the last entry of readdir's buffer.
    private static func entryName(_ entry: UnsafeMutablePointer<dirent>) -> String {
        let name = UnsafeRawPointer(entry) + MemoryLayout<dirent>.offset(of: \.d_name)!
        return String(cString: name.assumingMemoryBound(to: CChar.self))
    }

    /// Unlinks a regular file, or removes a folder with the regular files and folders in it (folders
    /// up to 4 levels down; samtrack stages masks/<frame>/); leaves links and anything else, and so the
    /// folders holding them. The same code as fault containment's signal handlers remove a temporary with.
    static func removeTemporary(_ path: String) { sam_fault_remove_temporary(path) }
}
