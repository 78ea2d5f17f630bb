import Foundation
import SAMFormats
import SAMTensor
import Testing

/// The checkpoints written by `converters/make_checkpoint_fixtures.py` (its docstring lists every file).
@Suite("PyTorch checkpoint reader")
struct PyTorchTests {
    /// pth_state_dict.pth, as the generator builds it: key, the dtype the reader returns, the formula
    /// its storage holds (bf16 uses f16's, k * 0.5 - 3), and the view: offset, shape, strides.
    struct View {
        var key: String
        var dtype: DType
        var formula: DType
        var stored: String
        var offset = 0
        var shape: [Int]
        var strides: [Int]
    }

    static let views: [View] = [
        View(key: "encoder.conv.weight", dtype: .float32, formula: .float32, stored: "f32", shape: [4, 2, 3, 3], strides: [18, 9, 3, 1]),
        View(key: "encoder.conv.bias", dtype: .float16, formula: .float16, stored: "f16", shape: [4], strides: [1]),
        View(key: "encoder.norm.running_var", dtype: .float64, formula: .float64, stored: "f64", shape: [4], strides: [1]),
        View(key: "encoder.norm.num_batches_tracked", dtype: .int64, formula: .int64, stored: "i64", shape: [], strides: []),
        View(key: "encoder.index", dtype: .int64, formula: .int64, stored: "i64", shape: [2, 3], strides: [3, 1]),
        View(key: "encoder.offsets", dtype: .int32, formula: .int32, stored: "i32", shape: [3, 2], strides: [2, 1]),
        View(key: "encoder.bytes", dtype: .uint8, formula: .uint8, stored: "u8", shape: [5], strides: [1]),
        View(key: "encoder.mask", dtype: .bool, formula: .bool, stored: "bool", shape: [2, 2], strides: [2, 1]),
        View(key: "encoder.proj.weight", dtype: .float32, formula: .float16, stored: "bf16", shape: [2, 3], strides: [3, 1]),
        View(key: "encoder.proj.weight_t", dtype: .float32, formula: .float16, stored: "bf16", shape: [3, 2], strides: [1, 3]),
        View(key: "encoder.scale", dtype: .float32, formula: .float32, stored: "f32", shape: [3], strides: [1]),
        View(key: "shared.whole", dtype: .float32, formula: .float32, stored: "f32", shape: [4, 6], strides: [6, 1]),
        View(key: "shared.rows", dtype: .float32, formula: .float32, stored: "f32", offset: 6, shape: [2, 6], strides: [6, 1]),
        View(key: "shared.transposed", dtype: .float32, formula: .float32, stored: "f32", shape: [6, 4], strides: [1, 6]),
        View(key: "shared.strided", dtype: .float32, formula: .float32, stored: "f32", offset: 6, shape: [3, 3], strides: [6, 2]),
    ]

    /// Element values of a view in C order: the storage's formula at offset + sum(index * stride).
    static func expectedValues(_ view: View) -> [Double] {
        if view.key.hasSuffix("num_batches_tracked") { return [12_345_678_901] }
        let count = view.shape.reduce(1, *)
        return (0..<count).map { flat in
            var rest = flat, k = view.offset
            for (size, stride) in zip(view.shape, view.strides).reversed() {
                k += (rest % size) * stride
                rest /= size
            }
            return Formula.value(view.formula, k)
        }
    }

    static func checkStateDict(_ tensors: [String: Tensor], sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(tensors.keys.sorted() == views.map(\.key).sorted(), sourceLocation: sourceLocation)
        for view in views {
            guard let tensor = tensors[view.key] else { continue }
            #expect(tensor.dtype == view.dtype, "\(view.key)", sourceLocation: sourceLocation)
            #expect(tensor.shape == view.shape, "\(view.key)", sourceLocation: sourceLocation)
            #expect(tensor.allValues == expectedValues(view), "\(view.key)", sourceLocation: sourceLocation)
        }
    }

    @Test("state dict: keys in file order, each view's storage, offset, shape, strides and dtype")
    func listing() throws {
        let checkpoint = try PyTorchCheckpoint(path: Fixtures.path("pth_state_dict.pth"))
        #expect(checkpoint.archiveName == "pth_state_dict")
        #expect(checkpoint.keys == Self.views.map(\.key))
        #expect(checkpoint.wrapperKey == nil)
        #expect(checkpoint.ignoredKeys.isEmpty)
        for (entry, view) in zip(checkpoint.entries, Self.views) {
            #expect(entry.elementType.description == view.stored, "\(view.key)")
            #expect(entry.dtype == view.dtype, "\(view.key)")
            #expect(entry.storageOffset == view.offset, "\(view.key)")
            #expect(entry.shape == view.shape, "\(view.key)")
            #expect(entry.strides == view.strides, "\(view.key)")
            #expect(entry.storageEntry == "pth_state_dict/data/" + entry.storage.key)
        }
        let shared = checkpoint.entries.filter { $0.key.hasPrefix("shared.") }
        #expect(Set(shared.map(\.storage.key)).count == 1, "the four shared views name one storage")
        #expect(shared.allSatisfy { $0.storage.elementCount == 24 })
        #expect(checkpoint.entry(named: "encoder.proj.weight_t")?.storage == checkpoint.entry(named: "encoder.proj.weight")?.storage)
        #expect(checkpoint.entries.filter { !$0.isContiguous }.map(\.key)
                == ["encoder.proj.weight_t", "shared.transposed", "shared.strided"])
    }

    @Test("every tensor has its closed-form values; views are materialised in C order, bf16 widened to f32")
    func values() throws {
        let checkpoint = try PyTorchCheckpoint(path: Fixtures.path("pth_state_dict.pth"))
        Self.checkStateDict(try checkpoint.readAll())
        for view in Self.views where view.stored != "bf16" && !view.key.hasPrefix("shared.") && !view.key.hasSuffix("tracked") {
            expectFormula(try checkpoint.tensor(named: view.key), view.dtype, view.shape)
        }
        #expect(try checkpoint.tensor(named: "encoder.norm.num_batches_tracked").int64s() == [12_345_678_901])
    }

    @Test("contiguous views of a stored entry borrow the file: shared.rows starts 6 floats into shared.whole")
    func borrowsInPlace() throws {
        let tensors = try PyTorchCheckpoint(path: Fixtures.path("pth_state_dict.pth")).readAll()
        let whole = try #require(tensors["shared.whole"]?.storage.bytes.baseAddress)
        let rows = try #require(tensors["shared.rows"]?.storage.bytes.baseAddress)
        #expect(rows == whole + 6 * 4)
    }

    @Test("deflated entries and ZIP64 records give the same tensors", arguments: ["pth_state_dict_deflated.pth", "pth_state_dict_zip64.pth"])
    func otherZipForms(name: String) throws {
        let checkpoint = try PyTorchCheckpoint(path: Fixtures.path(name))
        #expect(checkpoint.keys == Self.views.map(\.key))
        let tensors = try checkpoint.readAll()
        Self.checkStateDict(tensors)
        let stored = try PyTorchCheckpoint(path: Fixtures.path("pth_state_dict.pth")).readAll()
        for (key, tensor) in tensors {
            #expect(stored[key].map(tensor.isBitwiseEqual) == true, "\(key)")
        }
        #expect(try checkpoint.tensor(named: "shared.strided").allValues == Self.expectedValues(Self.views.last!))
    }

    @Test("the pickle's globals are the state dict's own")
    func globals() throws {
        let checkpoint = try PyTorchCheckpoint(path: Fixtures.path("pth_state_dict.pth"))
        let expected: Set = ["collections.OrderedDict", "torch._utils._rebuild_tensor_v2", "torch._utils._rebuild_parameter",
                             "torch.FloatStorage", "torch.HalfStorage", "torch.DoubleStorage", "torch.LongStorage",
                             "torch.IntStorage", "torch.ByteStorage", "torch.BoolStorage", "torch.BFloat16Storage"]
        #expect(Set(checkpoint.globals) == expected)
        #expect(checkpoint.globals.count == expected.count)
        let inventory = try PyTorchCheckpoint.globalInventory(path: Fixtures.path("pth_state_dict.pth"))
        #expect(inventory.map(\.name) == checkpoint.globals)
        #expect(inventory.allSatisfy { $0.accepted })
    }

    @Test("{\"model\": ...} beside optimizer state and counters: only the model's tensors")
    func wrappedModel() throws {
        let checkpoint = try PyTorchCheckpoint(path: Fixtures.path("pth_wrapped_model.pth"))
        #expect(checkpoint.wrapperKey == "model")
        #expect(checkpoint.keys == ["a", "b"])
        #expect(checkpoint.ignoredKeys.isEmpty)
        let tensors = try checkpoint.readAll()
        #expect(tensors.keys.sorted() == ["a", "b"])
        expectFormula(try #require(tensors["a"]), .float32, [2, 3])
        expectFormula(try #require(tensors["b"]), .int64, [2])
    }

    @Test("{\"state_dict\": ...}: non-tensor values in the state dict are listed, not read")
    func wrappedStateDict() throws {
        let checkpoint = try PyTorchCheckpoint(path: Fixtures.path("pth_wrapped_state_dict.pth"))
        #expect(checkpoint.wrapperKey == "state_dict")
        #expect(checkpoint.keys == ["a", "b"])
        #expect(checkpoint.ignoredKeys == ["version", "note"])
        expectFormula(try checkpoint.tensor(named: "a"), .float32, [2, 3])
    }

    @Test("a list nested 200,000 deep beside a tensor is carried without recursion and left out")
    func deepValue() throws {
        let checkpoint = try PyTorchCheckpoint(path: Fixtures.path("pth_deep_value.pth"))
        #expect(checkpoint.keys == ["w"])
        #expect(checkpoint.ignoredKeys == ["deep"])
        expectFormula(try checkpoint.tensor(named: "w"), .float32, [2])
    }

    @Test("the legacy format is unsupported, with how to re-save it")
    func legacy() throws {
        let path = Fixtures.path("pth_legacy.pth")
        let error = expectFormatError(.unsupported, file: path) { _ = try PyTorchCheckpoint(path: path) }
        #expect(error?.message.contains("torch.save(torch.load(path, weights_only=True), new_path)") == true)
    }

    @Test("a checkpoint that is not a dict is unsupported")
    func topLevelList() {
        let path = Fixtures.path("pth_top_level_list.pth")
        let error = expectFormatError(.unsupported, file: path) { _ = try PyTorchCheckpoint(path: path) }
        #expect(error?.message.contains("list") == true)
    }

    @Test("an unknown key is missingTensor naming it")
    func missingTensor() throws {
        let path = Fixtures.path("pth_state_dict.pth")
        let checkpoint = try PyTorchCheckpoint(path: path)
        expectFormatError(.missingTensor, file: path, tensor: "encoder.nothing") { _ = try checkpoint.tensor(named: "encoder.nothing") }
    }
}
