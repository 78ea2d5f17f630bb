import Foundation
import SAMFiles
import SAMTensor
import SAMTestSupport
import Testing

/// `SAMWFile(contentsOf:)` opens what `SAMWFile(path:)` opens and refuses what it refuses; a URL
/// that is not a file URL is a `FormatError` naming it.
@Suite("SAMW model file with URLs")
struct SAMWFileURLTests {
    @Test("a file URL opens the path form's file: the same metadata, names and bytes; the same errors")
    func opensAsPath() throws {
        let folder = try TestPaths.temporaryFolder("samw-url")
        let path = folder + "/model.samw"
        let tensors: [(name: String, tensor: Tensor)] = [("a.weight", Tensor(shape: [2, 2], floats: [0, 0.5, -1, 2])),
                                                         ("a.bias", Tensor(shape: [2], floats: [1, 2]))]
        let metadata = JSONValue.object(["family": .string("mobile_sam")])
        try SAMWWriter.write(tensors: tensors, metadata: metadata, to: path)
        let byURL = try SAMWFile(contentsOf: URL(fileURLWithPath: path)), byPath = try SAMWFile(path: path)
        #expect(byURL.path == byPath.path)
        #expect(byURL.metadata == metadata)
        #expect(byURL.names == byPath.names)
        for (name, tensor) in tensors { #expect(try byURL.tensor(named: name).isBitwiseEqual(to: tensor)) }
        try byURL.verifyChecksums()

        let cut = folder + "/cut.samw"
        try Data(contentsOf: URL(fileURLWithPath: path)).dropLast(4).write(to: URL(fileURLWithPath: cut))
        for bad in [cut, folder + "/missing.samw", folder] {
            let failure = Self.failure { _ = try SAMWFile(contentsOf: URL(fileURLWithPath: bad)) }
            #expect(failure != nil)
            #expect(failure == Self.failure { _ = try SAMWFile(path: bad) })
        }
    }

    @Test("A URL that is not a file URL is a FormatError (unreadable) naming it")
    func remoteURLRefused() {
        let remote = URL(string: "https://example.com/models/tiny.samw")!
        let failure = Self.failure { _ = try SAMWFile(contentsOf: remote) }
        #expect(failure?.code == .unreadable)
        #expect(failure?.file == remote.absoluteString)
        #expect(failure.map { "\($0)" }?.contains("https://example.com/models/tiny.samw: not a file URL") == true, "\(String(describing: failure))")
    }

    /// The `FormatError` `body` throws (nil if it throws none).
    static func failure(_ body: () throws -> Void) -> FormatError? {
        do { try body() } catch let error as FormatError { return error } catch { Issue.record("not a FormatError: \(error)") }
        return nil
    }
}
