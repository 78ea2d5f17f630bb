import Foundation
import SAMFiles
import SAMFormats
import SAMTensor
import SAMTestSupport
import Testing

/// `NPY`'s URL forms read and write what its path forms do; a URL that is not a file URL is a
/// `FormatError` naming it, and nothing is read or written.
@Suite("NPY with URLs")
struct NPYURLTests {
    static let remote = URL(string: "https://example.com/arrays/x.npy")!

    @Test("read(contentsOf:) gives the path form's tensor, and its errors",
          arguments: ["npy_f32.npy", "npy_v2_f32.npy", "npy_scalar_i64.npy", "npy_empty_f32.npy"])
    func readsAsPath(name: String) throws {
        let byURL = try NPY.read(contentsOf: URL(fileURLWithPath: Fixtures.path(name)))
        #expect(byURL.isBitwiseEqual(to: try NPY.read(Fixtures.path(name))))
        for bad in ["npy_truncated_f32.npy", "npy_bad_magic.npy", "missing.npy"] {
            let failure = Self.failure { _ = try NPY.read(contentsOf: URL(fileURLWithPath: Fixtures.path(bad))) }
            #expect(failure != nil)
            #expect(failure == Self.failure { _ = try NPY.read(Fixtures.path(bad)) })
        }
    }

    @Test("write(_:to:) with a file URL writes the path form's bytes and follows the output rule")
    func writesAsPath() throws {
        let folder = try TestPaths.temporaryFolder("npy-url")
        let tensor = Tensor(shape: [2, 3], floats: [0, 0.5, -1, 2, 3.25, -4])
        try NPY.write(tensor, to: folder + "/path.npy")
        try NPY.write(tensor, to: URL(fileURLWithPath: folder + "/url.npy"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: folder + "/url.npy")) == Data(contentsOf: URL(fileURLWithPath: folder + "/path.npy")))
        #expect(try NPY.read(contentsOf: URL(fileURLWithPath: folder + "/url.npy")).isBitwiseEqual(to: tensor))
        let kept = Self.failure { try NPY.write(tensor, to: URL(fileURLWithPath: folder + "/url.npy"), policy: .init(existing: .keep)) }
        #expect(kept?.code == .outputRefused)
        #expect(kept?.file == folder + "/url.npy")
    }

    @Test("A URL that is not a file URL is a FormatError naming it; nothing is read or written")
    func remoteURLRefused() {
        let read = Self.failure { _ = try NPY.read(contentsOf: Self.remote) }
        #expect(read?.code == .unreadable)
        #expect(read?.file == Self.remote.absoluteString)
        #expect(read.map { "\($0)" }?.contains("https://example.com/arrays/x.npy: not a file URL") == true, "\(String(describing: read))")
        let written = Self.failure { try NPY.write(Tensor(shape: [1], floats: [1]), to: Self.remote) }
        #expect(written?.code == .outputRefused)
        #expect(written?.file == Self.remote.absoluteString)
        #expect(written?.message.contains("not a file URL") == true)
    }

    /// The `FormatError` `body` throws (nil if it throws none).
    static func failure(_ body: () throws -> Void) -> FormatError? {
        do { try body() } catch let error as FormatError { return error } catch { Issue.record("not a FormatError: \(error)") }
        return nil
    }
}
