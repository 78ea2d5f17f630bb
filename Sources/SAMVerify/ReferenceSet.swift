import Foundation
import SAMFiles
import SAMFormats

/// A folder of PyTorch reference outputs in the layout `converters/export_reference.py` writes and the
/// `mobilesam-seed0` set ships (and any other set of that layout):
///
///     manifest.json                          optional: case order, module dumps, tolerances
///     references/input_image.npy             image encoder input   -> case "image_encoder"
///     references/image_embeddings.npy        image encoder output, and every decoder case's input
///     references/<case>/onnx_*.npy           official decoder inputs and outputs
///     references/<case>/split_*.npy          split prompt-encoder + mask-decoder inputs and outputs
///     references/modules/<path>.npy          per-module dumps of the encoder (listed in the manifest)
///     image.png, references/decoded_image.npy, references/resized_image.npy
///                                            the photo and its preprocessing stages -> case "preprocess"
///     references/<case>/modules/<path>.npy   per-module dumps of a case's official decoder run
///
/// Cases are recognised from the files, so a full-size set needs nothing added; `--references` may name the
/// set's folder or its `references/` folder.
public struct ReferenceSet: Sendable {
    public static let imageEncoderCase = "image_encoder"
    public static let preprocessCase = "preprocess"

    /// The folder holding `references/` and (when there is one) `manifest.json`.
    public let root: String
    /// `root/references` (or the folder named, when it holds the files directly).
    public let referencesFolder: String
    /// `referencesFolder` relative to `root` ("references").
    public let referencesPrefix: String
    public let manifest: JSONValue?
    /// The image encoder case first (when the set has one), then the decoder cases in manifest order,
    /// then decoder case folders the manifest does not list, by name.
    public let cases: [ReferenceCase]
    /// `manifest.tolerances` {atol, rtol}: for every case.
    public let setTolerance: ToleranceOverride
    /// `manifest.tolerances.outputs.<output>` {atol, rtol}: for an output of every case.
    public let setOutputTolerances: [String: ToleranceOverride]
    /// `manifest.tolerances.modules.<module>` {atol, rtol}: for a module's dump in the first-divergence walk.
    public let moduleTolerances: [String: ToleranceOverride]
    /// Where the tolerances and task thresholds were read: "manifest", or "tolerance file" (`--tolerances`,
    /// which replaces what the manifest says about them).
    public let toleranceSource: String
    /// `manifest.task_thresholds`, or the defaults.
    public let taskThresholds: TaskThresholds
    /// `manifest.mask_threshold` (logits above it are inside a mask), else 0 as upstream's `Sam.mask_threshold`.
    public let maskThreshold: Float
    /// The photo the references were made from (relative to `root`: `image.png`, `image.jpg`), when the set has it.
    public let photo: String?

    public var caseNames: [String] { cases.map(\.name) }

    /// The reference image embeddings every decoder case takes as input, relative to `root`.
    public var imageEmbeddingsFile: String { referencesPrefix + "/image_embeddings.npy" }

    /// `root` with every link resolved: what every file the set reads must lie under.
    public let resolvedRoot: String

    /// `relative` (as the manifest writes paths, e.g. "references/point1/onnx_point_coords.npy") under `root`.
    public func path(_ relative: String) -> String { root + "/" + relative }

    /// `relative` under `root`, or why it may not be read: an absolute path, a `..` component, or a path
    /// that resolves (through links) outside the set. A path that does not exist is returned as it is,
    /// for the reader to report.
    public func resolve(_ relative: String) -> Result<String, PathOutsideSet> {
        if relative.hasPrefix("/") {
            return .failure(PathOutsideSet(path: relative, reason: "is an absolute path; paths in a reference set are relative to it"))
        }
        if relative.split(separator: "/").contains("..") {
            return .failure(PathOutsideSet(path: relative, reason: "climbs out with '..'"))
        }
        let full = path(relative)
        guard let real = Self.realPath(full) else { return .success(full) }
        guard real == resolvedRoot || real.hasPrefix(resolvedRoot == "/" ? "/" : resolvedRoot + "/") else {
            return .failure(PathOutsideSet(path: relative, reason: "resolves through a link to \(real), outside the set \(resolvedRoot)"))
        }
        return .success(full)
    }

    /// A path a manifest or a link names that leads out of the reference set.
    public struct PathOutsideSet: Error, CustomStringConvertible, Sendable {
        public let path: String
        public let reason: String
        public var description: String { "\(path) \(reason)" }
    }

    static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// Every tolerance the manifest sets, set-wide first, then by case and output.
    public var manifestTolerances: [ManifestTolerance] {
        var found: [ManifestTolerance] = []
        let source = toleranceSource
        if !setTolerance.isEmpty { found.append(ManifestTolerance(scope: source, setTolerance)) }
        for (output, override) in setOutputTolerances.sorted(by: { $0.key < $1.key }) where !override.isEmpty {
            found.append(ManifestTolerance(scope: "\(source) output \(output)", override))
        }
        for referenceCase in cases {
            if !referenceCase.tolerance.isEmpty {
                found.append(ManifestTolerance(scope: "\(source) case \(referenceCase.name)", referenceCase.tolerance))
            }
            for (output, override) in referenceCase.outputTolerances.sorted(by: { $0.key < $1.key }) where !override.isEmpty {
                found.append(ManifestTolerance(scope: "\(source) case \(referenceCase.name) output \(output)", override))
            }
        }
        if !moduleTolerances.isEmpty {
            let loosest = moduleTolerances.values.reduce(ToleranceOverride()) { worst, next in
                ToleranceOverride(atol: max(worst.atol ?? 0, next.atol ?? 0), rtol: max(worst.rtol ?? 0, next.rtol ?? 0))
            }
            found.append(ManifestTolerance(scope: "\(source) modules (\(moduleTolerances.count), loosest)", loosest))
        }
        return found
    }

    /// What was found, for the reports.
    public var layoutDescription: String {
        let decoderCount = cases.filter { $0.kind == .decoder }.count
        var parts = [manifest == nil ? "no manifest.json" : "manifest.json"]
        parts.append(cases.contains { $0.kind == .imageEncoder } ? "image encoder case" : "no image encoder case")
        parts.append("\(decoderCount) decoder case\(decoderCount == 1 ? "" : "s")")
        let dumped = cases.filter { $0.dumps != nil }.map(\.name)
        parts.append(dumped.isEmpty ? "no per-module dumps" : "per-module dumps for " + dumped.joined(separator: ", "))
        return parts.joined(separator: "; ")
    }

    /// Recognises the layout at `path` (the set's folder or its `references/` folder). `tolerancesFile`
    /// (a manifest `samverify --calibrate` wrote) replaces what the set's manifest says about tolerances and
    /// task thresholds.
    public static func open(_ path: String, tolerancesFile: String? = nil) throws(VerifyError) -> ReferenceSet {
        let manager = FileManager.default
        let given = URL(fileURLWithPath: path).standardizedFileURL.path
        guard isDirectory(given) else {
            throw VerifyError(.unreadableReferences, manager.fileExists(atPath: given)
                              ? "references: \(path) is a file, not a reference folder"
                              : "references: \(path) does not exist")
        }
        let root: String, referencesFolder: String
        if isDirectory(given + "/references") {
            (root, referencesFolder) = (given, given + "/references")
        } else if ["input_image.npy", "image_embeddings.npy"].contains(where: { manager.fileExists(atPath: given + "/" + $0) }) {
            (root, referencesFolder) = (URL(fileURLWithPath: given).deletingLastPathComponent().path, given)
        } else {
            throw VerifyError(.unreadableReferences, """
                references: \(path) is not a reference set: it has no references/ folder and no image_embeddings.npy \
                (expected the layout of converters/export_reference.py and the mobilesam-seed0 set: manifest.json, \
                references/input_image.npy, references/image_embeddings.npy, references/<case>/onnx_*.npy)
                """)
        }
        guard manager.isReadableFile(atPath: referencesFolder),
              let entries = try? manager.contentsOfDirectory(atPath: referencesFolder) else {
            throw VerifyError(.unreadableReferences, "references: cannot list \(referencesFolder)")
        }
        let folderPrefix = referencesFolder == root + "/references" ? "references" :
            String(referencesFolder.dropFirst(root.count).drop(while: { $0 == "/" }))

        var manifest: JSONValue?
        let manifestPath = root + "/manifest.json"
        let resolvedRoot = realPath(root) ?? root
        if ((try? OutputRule.entry(at: manifestPath)) ?? .nothing) != .nothing {
            if let real = realPath(manifestPath), !real.hasPrefix(resolvedRoot + "/") {
                throw VerifyError(.unreadableReferences, "references: \(manifestPath) resolves to \(real), outside the set")
            }
            // Only a regular file is read (MappedFile refuses anything else without blocking on a FIFO).
            let data: Data
            do {
                let file = try MappedFile(path: manifestPath)
                data = withExtendedLifetime(file) { Data(file.bytes) }
            } catch {
                throw VerifyError(.unreadableReferences, "references: cannot read \(manifestPath): \(error.message)")
            }
            do { manifest = try JSONDecoder().decode(JSONValue.self, from: data) } catch {
                throw VerifyError(.unreadableReferences, "references: \(manifestPath) is not valid JSON: \(error)")
            }
        }

        var toleranceSource = "manifest"
        var tolerances = manifest?["tolerances"]
        var thresholdsJSON = manifest?["task_thresholds"]
        if let tolerancesFile {
            let file = try readJSON(tolerancesFile, label: "--tolerances")
            (toleranceSource, tolerances, thresholdsJSON) = ("tolerance file", file["tolerances"], file["task_thresholds"])
        }
        let fromFile = tolerancesFile != nil
        let caseTolerances = tolerances?["cases"]?.objectValue ?? [:]
        let taskThresholds = try TaskThresholds(json: thresholdsJSON, source: toleranceSource)
        var manifestCases: [(name: String, entry: JSONValue)] = []
        for entry in manifest?["cases"]?.arrayValue ?? [] {
            if let name = entry["name"]?.stringValue { manifestCases.append((name, entry)) }
        }

        var cases: [ReferenceCase] = []
        let topFiles = npyNames(in: referencesFolder)
        if topFiles.contains("input_image") {
            var dumps: ModuleDumps?
            if let rows = manifest?["module_outputs"]?[imageEncoderCase]?.arrayValue {
                dumps = ModuleDumps(rows: rows, source: "manifest.json module_outputs.\(imageEncoderCase)")
            } else if isDirectory(referencesFolder + "/modules") {
                dumps = ModuleDumps(folder: folderPrefix + "/modules")
            }
            let entry = manifestCases.first { $0.name == imageEncoderCase }?.entry
            cases.append(ReferenceCase(
                name: imageEncoderCase, kind: .imageEncoder, folder: folderPrefix, files: topFiles,
                listedInManifest: entry != nil,
                problem: nil,  // a missing image_embeddings.npy is reported on its check, naming the file
                tolerance: Self.caseTolerance(caseTolerances[imageEncoderCase], fromFile ? nil : entry),
                outputTolerances: Self.outputTolerances(caseTolerances[imageEncoderCase], fromFile ? nil : entry),
                dumps: dumps))
        }

        // Decoder cases: folders holding official (onnx_*) or split (split_*) files.
        let folders = entries.filter { $0 != "modules" && isDirectory(referencesFolder + "/" + $0) }
        var decoderFolders: [String: Set<String>] = [:]
        for folder in folders {
            let names = npyNames(in: referencesFolder + "/" + folder)
            if names.contains(where: { $0.hasPrefix("onnx_") || $0.hasPrefix("split_") }) { decoderFolders[folder] = names }
        }
        let listed = manifestCases.map(\.name).filter { $0 != imageEncoderCase }
        let unlisted = decoderFolders.keys.filter { !listed.contains($0) }.sorted()
        for name in listed + unlisted {
            let entry = manifestCases.first { $0.name == name }?.entry
            let folder = folderPrefix + "/" + name
            var dumps: ModuleDumps?
            if let rows = entry?["module_outputs"]?.arrayValue, !rows.isEmpty {
                dumps = ModuleDumps(rows: rows, source: "manifest.json cases[\(name)].module_outputs")
            } else if isDirectory(referencesFolder + "/" + name + "/modules") {
                dumps = ModuleDumps(folder: folder + "/modules")
            }
            var problem: String?
            if decoderFolders[name] == nil {
                problem = isDirectory(referencesFolder + "/" + name)
                    ? "the manifest lists case \(name), but \(folder)/ holds no onnx_*.npy or split_*.npy files"
                    : "the manifest lists case \(name), but \(folder)/ does not exist"
            }
            cases.append(ReferenceCase(
                name: name, kind: .decoder, folder: folder, files: decoderFolders[name] ?? [],
                listedInManifest: entry != nil, problem: problem,
                tolerance: Self.caseTolerance(caseTolerances[name], fromFile ? nil : entry),
                outputTolerances: Self.outputTolerances(caseTolerances[name], fromFile ? nil : entry),
                dumps: dumps))
        }
        // Preprocessing, apart from the model: each stage the set has, from the stage before it.
        let photo = ["image.png", "image.jpg", "image.jpeg"].first { manager.fileExists(atPath: root + "/" + $0) }
        let stages = (photo != nil && topFiles.contains("resized_image")) || topFiles.isSuperset(of: ["resized_image", "input_image"])
            || (photo != nil && topFiles.contains("decoded_image"))
        if stages {
            cases.append(ReferenceCase(
                name: preprocessCase, kind: .preprocess, folder: folderPrefix, files: topFiles, listedInManifest: false,
                problem: nil, tolerance: Self.caseTolerance(caseTolerances[preprocessCase], nil),
                outputTolerances: Self.outputTolerances(caseTolerances[preprocessCase], nil), dumps: nil))
        }
        let threshold = manifest?["mask_threshold"]?.numberValue ?? 0
        guard threshold.isFinite else {
            throw VerifyError(.unreadableReferences, "references: \(manifestPath) mask_threshold must be a finite number")
        }
        let set = ReferenceSet(root: root, referencesFolder: referencesFolder, referencesPrefix: folderPrefix, manifest: manifest,
                               cases: cases, setTolerance: ToleranceOverride(json: tolerances),
                               setOutputTolerances: Self.namedTolerances(tolerances?["outputs"]),
                               moduleTolerances: Self.namedTolerances(tolerances?["modules"]),
                               toleranceSource: toleranceSource, taskThresholds: taskThresholds, maskThreshold: Float(threshold),
                               photo: photo, resolvedRoot: resolvedRoot)
        // Every path the manifest names stays inside the set and names a regular file (or nothing yet).
        for referenceCase in cases {
            for row in referenceCase.dumps?.rows ?? [] {
                let where_ = "manifest.json module_outputs of \(referenceCase.name), module \(row.module)"
                switch set.resolve(row.file) {
                case .failure(let outside):
                    throw VerifyError(.unreadableReferences, "references: \(where_): \(outside); paths stay inside the set")
                case .success(let path):
                    var status = stat()
                    if stat(path, &status) == 0, status.st_mode & S_IFMT != S_IFREG {
                        throw VerifyError(.unreadableReferences, "references: \(where_): \(row.file) is not a regular file")
                    }
                }
            }
        }
        return set
    }

    /// `{<name>: {atol, rtol}}` (set-level outputs or modules).
    static func namedTolerances(_ json: JSONValue?) -> [String: ToleranceOverride] {
        var result: [String: ToleranceOverride] = [:]
        for (name, value) in json?.objectValue ?? [:] {
            let override = ToleranceOverride(json: value)
            if !override.isEmpty { result[name] = override }
        }
        return result
    }

    /// A JSON file named on the command line (a regular file, read without blocking).
    static func readJSON(_ path: String, label: String) throws(VerifyError) -> JSONValue {
        let data: Data
        do {
            let file = try MappedFile(path: path)
            data = withExtendedLifetime(file) { Data(file.bytes) }
        } catch {
            throw VerifyError(.unreadableReferences, "\(label) \(path): cannot read: \(error.message)")
        }
        do { return try JSONDecoder().decode(JSONValue.self, from: data) } catch {
            throw VerifyError(.unreadableReferences, "\(label) \(path) is not valid JSON: \(error)")
        }
    }

    /// `manifest.tolerances.cases.<name>`, then `cases[].tolerances`, then `cases[].atol` / `cases[].rtol`.
    static func caseTolerance(_ setLevel: JSONValue?, _ entry: JSONValue?) -> ToleranceOverride {
        var result = ToleranceOverride(json: setLevel)
        for level in [ToleranceOverride(json: entry?["tolerances"]), ToleranceOverride(json: entry)] {
            if let atol = level.atol { result.atol = atol }
            if let rtol = level.rtol { result.rtol = rtol }
        }
        return result
    }

    /// `outputs: {<output>: {atol, rtol}}` under either case-level tolerance object.
    static func outputTolerances(_ setLevel: JSONValue?, _ entry: JSONValue?) -> [String: ToleranceOverride] {
        var result: [String: ToleranceOverride] = [:]
        for level in [setLevel?["outputs"], entry?["tolerances"]?["outputs"]] {
            for (output, value) in level?.objectValue ?? [:] {
                let override = ToleranceOverride(json: value)
                var merged = result[output] ?? ToleranceOverride()
                if let atol = override.atol { merged.atol = atol }
                if let rtol = override.rtol { merged.rtol = rtol }
                result[output] = merged
            }
        }
        return result
    }

    static func isDirectory(_ path: String) -> Bool {
        var directory: ObjCBool = false
        return FileManager.default.fileExists(atPath: path, isDirectory: &directory) && directory.boolValue
    }

    /// Base names of the `.npy` files directly in `folder`.
    static func npyNames(in folder: String) -> Set<String> {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        return Set(names.filter { $0.hasSuffix(".npy") }.map { String($0.dropLast(4)) })
    }
}

/// One case of a reference set: the image encoder, or a decoder prompt case.
public struct ReferenceCase: Sendable {
    public enum Kind: String, Codable, Sendable {
        case imageEncoder = "image_encoder"
        case decoder
        /// The photo's decoding, resizing and normalisation, each from the set's previous stage.
        case preprocess
    }

    public let name: String
    public let kind: Kind
    /// The case's folder relative to the set's root ("references", "references/point1").
    public let folder: String
    /// Base names of the `.npy` files in the folder.
    public let files: Set<String>
    public let listedInManifest: Bool
    /// A layout problem that makes the case bad input.
    public let problem: String?
    /// Case-level tolerances from the manifest.
    public let tolerance: ToleranceOverride
    /// Per-output tolerances from the manifest, by output name.
    public let outputTolerances: [String: ToleranceOverride]
    /// Per-module dumps of this case's run (the encoder, or the official decoder path), when the set has them.
    public let dumps: ModuleDumps?

    public func has(_ name: String) -> Bool { files.contains(name) }

    /// "references/point1/onnx_point_coords.npy".
    public func file(_ name: String) -> String { folder + "/" + name + ".npy" }
}
