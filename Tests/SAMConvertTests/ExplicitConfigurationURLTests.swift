import Foundation
import SAMTestSupport
import Testing
@testable import SAMConvert

/// `ExplicitConfiguration(contentsOf: URL)` reads what the path form reads; other URLs are refused by name.
@Suite("Convert: config file URLs")
struct ExplicitConfigurationURLTests {
    @Test("a file URL gives the path form's configuration; https:// is a ConversionFailure naming it")
    func fileAndRemote() throws {
        let path = TestPaths.tinyReferences + "/config.json"
        let byPath = try ExplicitConfiguration(contentsOf: path)
        let byURL = try ExplicitConfiguration(contentsOf: URL(fileURLWithPath: path))
        #expect(byURL.config == byPath.config)
        #expect(byURL.file == byPath.file)
        let remote = URL(string: "https://example.com/config.json")!
        do {
            _ = try ExplicitConfiguration(contentsOf: remote)
            Issue.record("read a config from \(remote)")
        } catch {
            #expect(error.message.contains("https://example.com/config.json: not a file URL"), "\(error)")
        }
    }
}
