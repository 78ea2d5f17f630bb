import Foundation

/// A built executable of this package (samverify, samrun ...), found beside the test bundle
/// (SwiftPM puts every product of a build in one folder), run with arguments.
public struct CommandLineTool: Sendable {
    public let name: String
    /// nil when the build that made the tests did not make this executable.
    public let binary: String?

    public init(_ name: String) {
        self.name = name
        var folders = [URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()]
        for bundle in Bundle.allBundles where bundle.bundlePath.hasSuffix(".xctest") {
            folders.append(bundle.bundleURL.deletingLastPathComponent())
        }
        folders.append(Bundle.main.bundleURL)
        binary = folders.map { $0.appendingPathComponent(name).path }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    public var isBuilt: Bool { binary != nil }

    public struct Run: Sendable {
        public var status: Int32
        public var stdout: String
        public var stderr: String
        /// True when the process ended by a signal (a crash), not by exiting.
        public var crashed: Bool
    }

    public struct NotBuilt: Error, CustomStringConvertible {
        public let name: String
        public var description: String { "\(name) was not built alongside the tests" }
    }

    public func run(_ arguments: [String]) throws -> Run {
        guard let binary else { throw NotBuilt(name: name) }
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
