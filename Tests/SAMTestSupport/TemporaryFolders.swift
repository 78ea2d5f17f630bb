import Foundation
import Synchronization

/// Folders made by `TestPaths.temporaryFolder`, removed when the test process exits.
///
/// Tests that fail (or that write a model once per process) do not reach their own clean-up, and
/// each `make test` would otherwise leave a few hundred megabytes of .samw files in the temporary
/// directory. `SAM_TEST_KEEP=1` keeps them for looking at by hand.
private let foldersToRemove = Mutex<[String]>([])
private let removalAtExit: Void = {
    atexit {
        let folders = foldersToRemove.withLock { $0 }
        for folder in folders { try? FileManager.default.removeItem(atPath: folder) }
    }
}()

extension TestPaths {
    /// A fresh temporary folder for one test, removed with everything in it when the process exits.
    public static func temporaryFolder(_ label: String) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("\(label)-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        if ProcessInfo.processInfo.environment["SAM_TEST_KEEP"] != "1" {
            _ = removalAtExit
            foldersToRemove.withLock { $0.append(path) }
        }
        return path
    }
}
