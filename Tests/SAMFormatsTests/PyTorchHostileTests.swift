import Foundation
import SAMFiles
import SAMFormats
import SAMTensor
import SAMTestSupport
import Testing

/// Hostile checkpoints (see make_checkpoint_fixtures.py): each gives a typed error naming the file,
/// and the tensor or global where there is one. A refused global never runs: the marker file its
/// command would create does not appear.
@Suite("PyTorch checkpoint reader: hostile files", .serialized)
struct PyTorchHostileTests {
    struct Refused: CustomStringConvertible {
        var file: String
        var global: String
        var marker: String
        var description: String { file }
    }

    static let refused = [
        Refused(file: "pth_refuse_os_system.pth", global: "os.system", marker: "/tmp/samport-marker-os-system"),
        Refused(file: "pth_refuse_posix_system.pth", global: "posix.system", marker: "/tmp/samport-marker-posix-system"),
        Refused(file: "pth_refuse_builtins_exec.pth", global: "builtins.exec", marker: "/tmp/samport-marker-builtins-exec"),
        Refused(file: "pth_refuse_builtins_eval.pth", global: "builtins.eval", marker: "/tmp/samport-marker-builtins-eval"),
        Refused(file: "pth_refuse_subprocess.pth", global: "subprocess.check_output", marker: "/tmp/samport-marker-subprocess"),
        Refused(file: "pth_refuse_inst.pth", global: "os.system", marker: "/tmp/samport-marker-inst"),
    ]

    @Test("a refused global is named when read, and its command never runs", arguments: refused)
    func refusedGlobal(_ case_: Refused) throws {
        try? FileManager.default.removeItem(atPath: case_.marker)
        let path = Fixtures.path(case_.file)
        let error = expectFormatError(.refusedGlobal, file: path) {
            let checkpoint = try PyTorchCheckpoint(path: path)
            _ = try checkpoint.readAll()
        }
        #expect(error?.message.contains("'\(case_.global)'") == true, "\(String(describing: error))")
        // The inventory lists it (after the tensor's own globals) as refused.
        let inventory = try PyTorchCheckpoint.globalInventory(path: path)
        #expect(inventory.filter { !$0.accepted }.map(\.name) == [case_.global])
        #expect(inventory.contains { $0.name == "torch._utils._rebuild_tensor_v2" && $0.accepted })
        #expect(!FileManager.default.fileExists(atPath: case_.marker), "\(case_.marker) exists: something ran")
    }

    struct Broken: CustomStringConvertible {
        var file: String
        var code: FormatError.Code
        var tensor: String? = nil
        /// A word the message must contain (the entry, the limit that was hit).
        var mentions: String
        var description: String { file }
    }

    static let broken = [
        Broken(file: "pth_local_offset_past_end.pth", code: .truncated, mentions: "archive/data/0"),
        Broken(file: "pth_entry_size_past_end.pth", code: .truncated, mentions: "archive/data/0"),
        Broken(file: "pth_cd_past_end.pth", code: .truncated, mentions: "central directory"),
        Broken(file: "pth_truncated.pth", code: .truncated, mentions: "end-of-central-directory"),
        Broken(file: "pth_storage_short.pth", code: .sizeMismatch, tensor: "w", mentions: "archive/data/0"),
        Broken(file: "pth_view_past_storage.pth", code: .corrupt, tensor: "w", mentions: "reaches element 7"),
        Broken(file: "pth_missing_storage.pth", code: .corrupt, tensor: "w", mentions: "archive/data/7"),
        Broken(file: "pth_deep_marks.pth", code: .corrupt, mentions: "MARK"),
        Broken(file: "pth_deep_tuples.pth", code: .unsupported, mentions: "tuple"),
        // 2,000,000 NONEs deflated into 2 KB: the file's expansion bound stops it before the pickle runs
        // (`stackFlood` runs the same pickle stored).
        Broken(file: "pth_stack_flood.pth", code: .limitExceeded, mentions: "PyTorchLimits.maximumExpansion"),
        Broken(file: "pth_memo_missing.pth", code: .corrupt, mentions: "memo entry 9"),
        Broken(file: "pth_unknown_opcode.pth", code: .unsupported, mentions: "0xff"),
        Broken(file: "pth_no_stop.pth", code: .truncated, mentions: "STOP"),
        Broken(file: "pth_inflate_mismatch.pth", code: .corrupt, mentions: "inflates to more than"),
        Broken(file: "pth_declared_huge.pth", code: .limitExceeded, mentions: "PyTorchLimits.maximumExpansion"),
        Broken(file: "pth_no_data_pkl.pth", code: .corrupt, mentions: "data.pkl"),
        Broken(file: "pth_not_zip.pth", code: .corrupt, mentions: "not a zip"),
    ]

    @Test("a stored pickle of 2,000,000 NONEs: the machine's stack bound stops it")
    func stackFlood() throws {
        var writer = TorchCheckpointWriter()
        writer.pickleMember = .stored([0x80, 0x02] + [UInt8](repeating: 0x4E, count: 2_000_000) + [0x2E])
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("pth-stack-\(UUID().uuidString).pth").path
        try writer.write(to: path)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let error = expectFormatError(.corrupt, file: path) { _ = try PyTorchCheckpoint(path: path) }
        #expect(error?.message.contains("stack") == true, "\(String(describing: error))")
    }

    @Test("a damaged or hostile archive or pickle is a typed error naming the file", arguments: broken)
    func brokenFile(_ case_: Broken) {
        let path = Fixtures.path(case_.file)
        let error = expectFormatError(case_.code, file: path, tensor: case_.tensor) {
            let checkpoint = try PyTorchCheckpoint(path: path)
            _ = try checkpoint.readAll()
        }
        #expect(error?.message.contains(case_.mentions) == true, "\(String(describing: error))")
    }

    @Test("every truncation of a good checkpoint is an error, never a crash")
    func truncations() throws {
        let good = try Data(contentsOf: URL(fileURLWithPath: Fixtures.path("pth_state_dict.pth")))
        let folder = try temporaryFolder("pth-cuts")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        for cut in stride(from: 0, to: good.count, by: 97) {
            let path = folder + "/cut\(cut).pth"
            try good.prefix(cut).write(to: URL(fileURLWithPath: path))
            #expect(throws: FormatError.self, "cut at \(cut)") { _ = try PyTorchCheckpoint(path: path).readAll() }
        }
    }
}
