import Foundation
import SAMFormats
import SAMImport
import SAMTensor
import SAMTestSupport
import Testing

/// The committed tiny model's state dict saved as .pth (under "model") and .safetensors by
/// converters/make_checkpoint_fixtures.py from reference_outputs/tiny/mobile_sam.h5: both must import
/// exactly as the h5 does, through the same mapping.
@Suite("Checkpoint import: .pth and .safetensors")
struct CheckpointImportTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures").path
    static let pth = fixtures + "/tiny_mobile_sam.pth"
    static let safetensors = fixtures + "/tiny_mobile_sam.safetensors"
    static let h5 = TestPaths.tinyReferences + "/mobile_sam.h5"

    @Test("the readers give every dataset of the h5, bit for bit", arguments: [pth, safetensors])
    func sameStoredTensors(path: String) throws {
        let reference = try HDF5File(path: Self.h5).readAll()
        let stored = path.hasSuffix(".pth") ? try PyTorchCheckpoint(path: path).readAll() : try SafetensorsFile(path: path).readAll()
        #expect(stored.count == 307)
        #expect(stored.keys.sorted() == reference.keys.sorted())
        for (key, tensor) in stored {
            #expect(reference[key].map(tensor.isBitwiseEqual) == true, "\(key)")
        }
    }

    @Test("import maps them to the h5's canonical tensors bit for bit (BatchNorm folded the same way)", arguments: [pth, safetensors])
    func sameCanonicalTensors(path: String) throws {
        let reference = try StateDictImport.importHDF5(Self.h5)
        let imported = try SAMImporter.importFiles([path])
        #expect(imported.files == [path])
        let comparison = WeightComparison(imported, against: reference)
        #expect(comparison.sameKeys && comparison.differing.isEmpty, "\(comparison)")
        #expect(comparison.bitExact.count == 231)
        #expect(imported.dropped.map(\.rule) == reference.dropped.map(\.rule))
        #expect(imported.tensors["image_encoder.patch_embed.seq.0.c.bias"]?.origin.rule == .foldBatchNorm)
    }

    @Test("kinds come from the file name: .pth, .pt, .safetensors in any case")
    func kinds() {
        #expect(SAMImporter.kind(of: "a/mobile_sam.pth") == .pytorch)
        #expect(SAMImporter.kind(of: "sam2_hiera_tiny.PT") == .pytorch)
        #expect(SAMImporter.kind(of: "model.safetensors") == .safetensors)
        #expect(SAMImporter.kind(of: "model.ckpt") == nil)
    }

    @Test("a checkpoint naming os.system is unreadable, the reader's refusedGlobal behind it")
    func refusedGlobal() throws {
        let hostile = TestPaths.packageRoot + "/Tests/SAMFormatsTests/Fixtures/pth_refuse_os_system.pth"
        let error = #expect(throws: ImportError.self) { _ = try SAMImporter.importFiles([hostile]) }
        #expect(error?.code == .unreadable)
        #expect(error?.file == hostile)
        #expect(error?.formatError?.code == .refusedGlobal)
        #expect(error?.message.contains("'os.system'") == true)
    }
}
