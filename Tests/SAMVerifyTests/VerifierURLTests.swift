import Foundation
import SAMTestSupport
import Testing
@testable import SAMVerify

/// `Verifier.verify(model:references:)` with file URLs reports what the path form reports; a URL that is
/// not a file URL is refused with the error code of what it names, before anything is read.
@Suite("Verify: file URLs")
struct VerifierURLTests {
    @Test("URL form: the same counts and figures as the path form on the tiny set")
    func sameReport() throws {
        let folder = try temporaryFolder("verify-url")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let model = try ModelUnderTest.tiny(in: folder)
        let options = VerifyOptions(cases: ["point1", "box"])
        let byPath = try Verifier.verify(modelPath: model, referencesPath: TestPaths.tinyReferences, options: options)
        let byURL = try Verifier.verify(model: URL(fileURLWithPath: model), references: URL(fileURLWithPath: TestPaths.tinyReferences),
                                        options: options)
        #expect(byURL.counts == byPath.counts)
        #expect(byURL.exitCode == 0)
        #expect(byURL.cases.map(\.name) == byPath.cases.map(\.name))
        #expect(byURL.cases.flatMap { $0.outputs.map(\.figures) } == byPath.cases.flatMap { $0.outputs.map(\.figures) })
    }

    @Test("non-file URLs for the model, the set or the tolerances: typed errors naming the URL")
    func remoteRefused() throws {
        let remote = URL(string: "https://example.com/sets/tiny")!, local = URL(fileURLWithPath: TestPaths.tinyReferences)
        let cases: [(URL, URL, URL?, VerifyError.Code)] = [(remote, local, nil, .missingModel), (local, remote, nil, .unreadableReferences),
                                                           (local, local, remote, .unreadableReferences)]
        for (model, references, tolerances, code) in cases {
            do {
                _ = try Verifier.verify(model: model, references: references, tolerances: tolerances)
                Issue.record("verified with \(model), \(references), \(String(describing: tolerances))")
            } catch {
                #expect(error.code == code)
                #expect("\(error)".contains("https://example.com/sets/tiny"), "\(error)")
                #expect("\(error)".contains("not a file URL"), "\(error)")
            }
        }
    }
}
