import Foundation

/// An executable of this package (samverify, samrun ...), run with arguments: from the folder
/// SAM_TOOLS_DIR names when it is set (CI points it at the release binaries users get), else from
/// beside the test bundle (SwiftPM puts every product of a build in one folder). A tool that is
/// not there fails the test that runs it: the command-line suites never skip.
public struct CommandLineTool: Sendable {
    public let name: String
    /// nil when the tool is not where it was looked for.
    public let binary: String?
    private let searched: [String]

    public init(_ name: String) {
        self.name = name
        var folders: [URL] = []
        if let tools = ProcessInfo.processInfo.environment["SAM_TOOLS_DIR"], !tools.isEmpty {
            folders = [URL(fileURLWithPath: tools)]
        } else {
            folders = [URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()]
            for bundle in Bundle.allBundles where bundle.bundlePath.hasSuffix(".xctest") {
                folders.append(bundle.bundleURL.deletingLastPathComponent())
            }
            folders.append(Bundle.main.bundleURL)
        }
        searched = folders.map(\.path)
        binary = folders.map { $0.appendingPathComponent(name).path }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    public struct Run: Sendable {
        public var status: Int32
        public var stdout: String
        public var stderr: String
        /// True when the process ended by a signal (a crash), not by exiting.
        public var crashed: Bool
    }

    public struct NotBuilt: Error, CustomStringConvertible {
        public let name: String
        public let searched: [String]
        public var description: String {
            "\(name) is not in \(searched.joined(separator: " or ")) (build the package's products, or set SAM_TOOLS_DIR)"
        }
    }

    /// The executable's path, or an error naming where it was looked for.
    public func path() throws -> String {
        guard let binary else { throw NotBuilt(name: name, searched: searched) }
        return binary
    }

    public func run(_ arguments: [String]) throws -> Run {
        let binary = try path()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = arguments
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        // Read before waiting, so a full pipe cannot block the child.
        let stdout = out.fileHandleForReading.readDataToEndOfFile()
        let stderr = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Run(status: process.terminationStatus, stdout: String(decoding: stdout, as: UTF8.self),
                   stderr: String(decoding: stderr, as: UTF8.self), crashed: process.terminationReason == .uncaughtSignal)
    }
}
