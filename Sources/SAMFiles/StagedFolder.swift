#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A folder of outputs that appear together or not at all, so the folder never mixes two runs.
///
/// Every file is written into a staging folder beside the output folder (`<folder>.tmp-<pid>-<hex>`,
/// on the same filesystem), then published: a folder that did not exist is renamed into place in one
/// step (never over one that appeared meanwhile); in an existing folder each output replaces its name,
/// the files a previous run left under the tool's other output names (`ownedNames`) are taken away,
/// and if any step fails, everything already replaced is put back. In a tool that opted in
/// (`FaultContainment.removeTemporariesOnInterrupt`), SIGINT and SIGTERM remove the staging folder with
/// what it holds, and wait for a publish under way to finish. `OutputRule` holds for every name:
/// a directory, device, FIFO or link there, or one of the run's inputs, is refused before anything
/// is touched.
package final class StagedFolder {
    /// The output folder, as an absolute path.
    package let folder: String
    /// Every name the tool writes into such a folder.
    package let ownedNames: [String]
    package let policy: OutputPolicy
    package let staging: String
    private let folderExists: Bool
    private var published = false
    /// Test hook: publishing fails after this many files were put in place (then rolls back).
    var failAfterPlacing: Int?

    package init(folder given: String, ownedNames: [String], policy: OutputPolicy) throws(FormatError) {
        let folder = Self.absolute(given)
        self.folder = folder
        self.ownedNames = ownedNames
        self.policy = policy
        folderExists = try Self.check(folder: given, ownedNames: ownedNames, policy: policy)
        if !folderExists {
            try Self.makeParents(of: folder, label: policy.option.map { "\($0) \(given)" } ?? given)
        }
        OutputRule.removeStaleTemporaries(of: folder)
        var attempt = 0
        while true {
            let candidate = OutputRule.temporaryName(for: folder)
            // Made and registered as one step, so an interrupt removes it with whatever is staged in it.
            let failure = FaultContainment.deferringInterrupts {  // errno of mkdir, 0 when made
                guard mkdir(candidate, 0o755) == 0 else { return errno }
                FaultContainment.registerTemporaryFolder(candidate)
                return 0
            }
            if failure == 0 {
                staging = candidate
                break
            }
            attempt += 1
            guard failure == EEXIST, attempt < 8 else {
                throw FormatError(.writeFailed, file: given, "cannot create the staging folder \(candidate): \(String(cString: strerror(failure)))")
            }
        }
    }

    /// Checks, touching nothing, that `folder` may receive the outputs: it is absent or a directory
    /// (a link to one is followed), and at each of `ownedNames` in it stands nothing or a regular file
    /// that is none of the inputs. Returns whether the folder exists.
    @discardableResult
    package static func check(folder given: String, ownedNames: [String], policy: OutputPolicy) throws(FormatError) -> Bool {
        let folder = absolute(given)
        let label = policy.option.map { "\($0) \(given)" } ?? given
        var status = stat()
        guard stat(folder, &status) == 0 else {
            guard errno == ENOENT else {
                throw FormatError(.outputRefused, file: given, "\(label): \(String(cString: strerror(errno)))")
            }
            return false
        }
        guard status.st_mode & S_IFMT == S_IFDIR else {
            throw FormatError(.outputRefused, file: given,
                              "\(label) is \(OutputRule.kind(status.st_mode) ?? "a regular file"), not a folder (nothing was touched)")
        }
        let fileRule = OutputPolicy(existing: .replace, inputs: policy.inputs)
        for name in ownedNames {
            do { try OutputRule.check(folder + "/" + name, fileRule) } catch {
                throw FormatError(.outputRefused, file: error.file, "\(label): \(error.message)")
            }
        }
        return true
    }

    /// Where to write output `name` before publishing.
    package func path(_ name: String) -> String { staging + "/" + name }

    /// Puts the staged files `names` in place in one step (a new folder) or one by one with roll-back
    /// (an existing folder), and takes away earlier files under the other owned names.
    ///
    /// SIGINT and SIGTERM are held back until it returns: a folder is never left half published.
    package func publish(_ names: [String]) throws(FormatError) {
        precondition(!published, "publish called twice")
        try FaultContainment.deferringInterrupts { () throws(FormatError) in try publishWhole(names) }
    }

    private func publishWhole(_ names: [String]) throws(FormatError) {
        // Whatever happens, the staging folder does not outlive the attempt.
        defer { if !published { discardStaging() } }
        if !folderExists {
            if OutputRule.renameNoReplace(staging, folder) {
                published = true
                FaultContainment.unregisterTemporary(staging)
                return
            }
            // A folder cannot be hard-linked: where the flag is unsupported, make the folder and fill it.
            guard errno != EEXIST, errno != ENOTEMPTY else {
                throw FormatError(.outputRefused, file: folder, "\(folder) appeared while the outputs were being written; it was left as it is")
            }
            guard mkdir(folder, 0o755) == 0 else {
                throw FormatError(.writeFailed, file: folder, "cannot create \(folder): \(String(cString: strerror(errno)))")
            }
        }
        var replaced: [(target: String, backup: String)] = []
        var placed: [String] = []
        func undo(_ error: FormatError) -> FormatError {
            var problems: [String] = []
            for target in placed.reversed() where unlink(target) != 0 {
                problems.append("cannot remove \(target): \(String(cString: strerror(errno)))")
            }
            for (target, backup) in replaced.reversed() where rename(backup, target) != 0 {
                problems.append("cannot put back \(target) (kept as \(backup)): \(String(cString: strerror(errno)))")
            }
            if problems.isEmpty {
                return FormatError(error.code, file: error.file, error.message + "; the folder was restored as it was")
            }
            return FormatError(error.code, file: error.file, error.message + "; restoring the folder failed: " + problems.joined(separator: "; "))
        }
        let produced = Set(names)
        let leftovers = ownedNames.filter { !produced.contains($0) }
        for name in names + leftovers {
            let target = folder + "/" + name
            do {
                try OutputRule.check(target, OutputPolicy(existing: .replace, inputs: policy.inputs))
            } catch {
                throw undo(error)
            }
            if case .regularFile = try OutputRule.entry(at: target) {
                let backup = staging + "/.previous-" + name
                guard rename(target, backup) == 0 else {
                    throw undo(FormatError(.writeFailed, file: target, "cannot move the previous \(target) aside: \(String(cString: strerror(errno)))"))
                }
                replaced.append((target, backup))
            }
            guard produced.contains(name) else { continue }
            if let limit = failAfterPlacing, placed.count >= limit {
                throw undo(FormatError(.writeFailed, file: target, "cannot rename into place: simulated failure"))
            }
            guard OutputRule.renameNoReplace(path(name), target) else {
                throw undo(FormatError(.writeFailed, file: target, "cannot rename into place: \(String(cString: strerror(errno)))"))
            }
            placed.append(target)
        }
        published = true
        discardStaging()
    }

    private func discardStaging() {
        OutputRule.removeTemporary(staging)
        FaultContainment.unregisterTemporary(staging)
    }

    deinit {
        if !published { discardStaging() }
    }

    static func absolute(_ path: String) -> String {
        var components: [Substring] = []
        var base = path
        if !path.hasPrefix("/") {
            var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
            base = (getcwd(&buffer, buffer.count) != nil ? String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) : ".") + "/" + path
        }
        for part in base.split(separator: "/") {
            switch part {
            case ".": continue
            case "..": if !components.isEmpty { components.removeLast() }
            default: components.append(part)
            }
        }
        return "/" + components.joined(separator: "/")
    }

    static func makeParents(of folder: String, label: String) throws(FormatError) {
        var prefix = ""
        for part in folder.split(separator: "/").dropLast() {
            prefix += "/" + part
            if mkdir(prefix, 0o755) != 0 && errno != EEXIST {
                throw FormatError(.writeFailed, file: folder, "\(label): cannot create \(prefix): \(String(cString: strerror(errno)))")
            }
        }
    }
}
