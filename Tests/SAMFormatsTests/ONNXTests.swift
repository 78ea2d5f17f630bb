import SAMFormats
import SAMTensor
import Testing

@Suite("ONNX reader")
struct ONNXTests {
    static let tiny = Fixtures.path("tiny.onnx")
    static let external = Fixtures.path("external.onnx")

    @Test("model fields: IR version, producer, domain, version, doc, metadata_props, opset imports")
    func modelMetadata() throws {
        let model = try ONNXModel(path: Self.tiny)
        #expect(model.path == Self.tiny)
        #expect(model.irVersion == 10)
        #expect(model.producerName == "make_format_fixtures")
        #expect(model.producerVersion == "1.0")
        #expect(model.domain == "ai.samport.fixtures")
        #expect(model.modelVersion == 7)
        #expect(model.docString == "tiny fixture model")
        #expect(model.metadataProps == ["author": "SAMFormatsTests", "converter": "make_format_fixtures.py"])
        #expect(model.opsetImports.map(\.domain) == ["", "com.microsoft"])
        #expect(model.opsetImports.map(\.version) == [17, 1])
    }

    @Test("graph inputs and outputs: fixed, symbolic and unknown dims")
    func inputsAndOutputs() throws {
        let graph = try ONNXModel(path: Self.tiny).graph
        #expect(graph.name == "tiny")
        #expect(graph.inputs.map(\.name) == ["image", "points", "labels", "extra"])
        #expect(graph.inputs.map { $0.elementType?.dtype } == [.float32, .float32, .float32, .int64])
        #expect(graph.inputs.map(\.dims) == [
            [.fixed(1), .fixed(3), .fixed(4), .fixed(4)],
            [.fixed(1), .symbolic("num_points"), .fixed(2)],
            [.fixed(1), .symbolic("num_points")],
            [.unknown],
        ])
        #expect(graph.realInputs.map(\.name) == ["image", "points", "labels", "extra"])
        #expect(graph.outputs.map(\.name) == ["features", "scaled_points"])
        #expect(graph.outputs.map { $0.elementType?.code } == [1, 1])
        #expect(graph.outputs.map(\.dims) == [
            [.fixed(1), .fixed(2), .fixed(4), .symbolic("width")],
            [.fixed(1), .symbolic("num_points"), .fixed(2)],
        ])
        #expect(graph.inputs[1].dims?.map(\.description) == ["1", "num_points", "2"])
        #expect(graph.inputs[3].dims?.map(\.description) == ["?"])
    }

    @Test("nodes: names, op types, inputs, outputs, in order")
    func nodes() throws {
        let nodes = try ONNXModel(path: Self.tiny).graph.nodes
        #expect(nodes.map(\.name) == ["conv0", "const0", "matmul0", "act0", "add0", "mul0"])
        #expect(nodes.map(\.opType) == ["Conv", "Constant", "MatMul", "LeakyRelu", "Add", "Mul"])
        #expect(nodes.map(\.domain) == ["", "", "", "", "", ""])
        #expect(nodes.map(\.inputs) == [["image", "conv.weight", "conv.bias"], [], ["conv_out", "const_out"],
                                         ["mm_out"], ["act_out", "scalar.f32"], ["points", "scalar.f32"]])
        #expect(nodes.map(\.outputs) == [["conv_out"], ["const_out"], ["mm_out"], ["act_out"], ["features"], ["scaled_points"]])
    }

    @Test("attributes of every kind: int, ints, string, float, tensor")
    func attributes() throws {
        let model = try ONNXModel(path: Self.tiny)
        let conv = model.graph.nodes[0]
        // onnx.helper.make_node sorts attributes by name.
        #expect(conv.attributes.map(\.name) == ["auto_pad", "dilations", "group", "kernel_shape", "pads", "strides"])
        #expect(conv.attribute("kernel_shape") == .ints([1, 1]))
        #expect(conv.attribute("strides") == .ints([1, 1]))
        #expect(conv.attribute("pads") == .ints([0, 0, 0, 0]))
        #expect(conv.attribute("dilations") == .ints([1, 1]))
        #expect(conv.attribute("group") == .int(1))
        #expect(conv.attribute("auto_pad") == .string("NOTSET"))
        #expect(conv.attribute("no_such_attribute") == nil)
        #expect(model.graph.nodes[3].attribute("alpha") == .float(0.125))
        let value = model.graph.nodes[1].attribute("value")
        #expect(value == .tensor(dtype: ONNXElementType(code: 1), shape: [4, 4]))
        #expect(model.graph.nodes[2].attributes.isEmpty)
    }

    @Test("node metadata_props carry the module scope")
    func nodeMetadata() throws {
        let nodes = try ONNXModel(path: Self.tiny).graph.nodes
        #expect(nodes[0].metadataProps == ["namespace": "encoder.conv: torch.nn.Conv2d",
                                           "pkg.torch.onnx.name_scopes": "['', 'encoder', 'conv']"])
        for node in nodes.dropFirst() { #expect(node.metadataProps.isEmpty, "\(node.name)") }
    }

    static let initializerNames = ["conv.weight", "conv.bias"]
        + DType.allCases.map { "raw.\($0.shortName)" } + DType.allCases.map { "typed.\($0.shortName)" }
        + ["scalar.f32", "scalar.i64", "empty.f32"]

    @Test("initializers: names, element types, shapes and where their data is")
    func initializerListing() throws {
        let graph = try ONNXModel(path: Self.tiny).graph
        #expect(graph.initializers.map(\.name) == Self.initializerNames)
        let byName = Dictionary(uniqueKeysWithValues: graph.initializers.map { ($0.name, $0) })
        for dtype in DType.allCases {
            let raw = byName["raw.\(dtype.shortName)"]
            #expect(raw?.elementType.dtype == dtype)
            #expect(raw?.shape == [2, 3])
            #expect(raw?.location == .raw(byteCount: 6 * dtype.byteSize))
            let typed = byName["typed.\(dtype.shortName)"]
            #expect(typed?.elementType.dtype == dtype)
            #expect(typed?.shape == [3, 2])
            let field = switch dtype {
            case .float32: "float_data"
            case .float64: "double_data"
            case .int64: "int64_data"
            case .float16, .int32, .int8, .uint8, .bool: "int32_data"
            }
            #expect(typed?.location == .typed(field: field, count: 6), "\(dtype)")
        }
        #expect(byName["conv.weight"]?.location == .raw(byteCount: 24))
        #expect(byName["conv.bias"]?.location == .typed(field: "float_data", count: 2))
        #expect(byName["scalar.f32"]?.shape == [])
        #expect(byName["scalar.i64"]?.shape == [])
        #expect(byName["empty.f32"]?.shape == [0, 3])
        #expect(graph.initializers.map(\.elementType.name).prefix(2) == ["FLOAT", "FLOAT"])
    }

    @Test("raw_data initializers have the closed-form values", arguments: DType.allCases)
    func rawValues(dtype: DType) throws {
        let model = try ONNXModel(path: Self.tiny)
        expectFormula(try model.tensor(named: "raw.\(dtype.shortName)"), dtype, [2, 3])
    }

    @Test("typed-field initializers have the closed-form values", arguments: DType.allCases)
    func typedValues(dtype: DType) throws {
        let model = try ONNXModel(path: Self.tiny)
        expectFormula(try model.tensor(named: "typed.\(dtype.shortName)"), dtype, [3, 2])
    }

    @Test("f16 stored in int32_data keeps negative values' bit patterns (>= 0x8000)")
    func halfBitPatterns() throws {
        let tensor = try ONNXModel(path: Self.tiny).tensor(named: "typed.f16")
        let bits = (0..<6).map { tensor.storage.bytes.loadUnaligned(fromByteOffset: $0 * 2, as: UInt16.self) }
        // -3, -2.5, -2, -1.5, -1, -0.5
        #expect(bits == [0xC200, 0xC100, 0xC000, 0xBE00, 0xBC00, 0xB800])
    }

    @Test("the graph's own weights: conv.weight (raw) and conv.bias (float_data)")
    func convWeights() throws {
        let model = try ONNXModel(path: Self.tiny)
        expectFormula(try model.tensor(named: "conv.weight"), .float32, [2, 3, 1, 1])
        let bias = try model.tensor(named: "conv.bias")
        #expect(bias.shape == [2])
        #expect(bias.floats() == [0.5, -0.5])
    }

    @Test("scalar initializers (shape []) from raw_data and int64_data")
    func scalars() throws {
        let model = try ONNXModel(path: Self.tiny)
        let f32 = try model.tensor(named: "scalar.f32")
        #expect(f32.dtype == .float32)
        #expect(f32.shape == [])
        #expect(f32.floats() == [2.5])
        let i64 = try model.tensor(named: "scalar.i64")
        #expect(i64.dtype == .int64)
        #expect(i64.shape == [])
        #expect(i64.int64s() == [-7])
    }

    @Test("a zero-size initializer [0,3] reads as an empty tensor")
    func empty() throws {
        let tensor = try ONNXModel(path: Self.tiny).tensor(named: "empty.f32")
        #expect(tensor.dtype == .float32)
        #expect(tensor.shape == [0, 3])
        #expect(tensor.elementCount == 0)
        #expect(tensor.floats() == [])
    }

    @Test("a Constant node's value reads by its output name: f32 [4,4], k * 1.5 - 2")
    func constant() throws {
        let model = try ONNXModel(path: Self.tiny)
        #expect(model.graph.constants.map(\.name) == ["const_out"])
        #expect(model.graph.constants.first?.shape == [4, 4])
        #expect(model.storedTensors.map(\.name) == Self.initializerNames + ["const_out"])
        let tensor = try model.tensor(named: "const_out")
        #expect(tensor.dtype == .float32)
        #expect(tensor.shape == [4, 4])
        #expect(tensor.floats() == (0..<16).map { Float($0) * 1.5 - 2 })
        let attribute = try model.attributeTensor(nodeIndex: 1, attribute: "value")
        #expect(attribute.isBitwiseEqual(to: tensor))
    }

    @Test("an unknown tensor or attribute is missingTensor naming file and tensor")
    func missing() throws {
        let model = try ONNXModel(path: Self.tiny)
        expectFormatError(.missingTensor, file: Self.tiny, tensor: "mm_out") { _ = try model.tensor(named: "mm_out") }
        expectFormatError(.missingTensor, file: Self.tiny, tensor: "value") { _ = try model.attributeTensor(nodeIndex: 0, attribute: "value") }
    }

    @Test("tensors stay valid after the model object is gone")
    func tensorOutlivesModel() throws {
        var model: ONNXModel? = try ONNXModel(path: Self.tiny)
        let raw = try model!.tensor(named: "raw.f64")
        let typed = try model!.tensor(named: "typed.i64")
        model = nil
        expectFormula(raw, .float64, [2, 3])
        expectFormula(typed, .int64, [3, 2])
    }

    @Test("external data: two tensors at offsets 64 and 192 of external.onnx.data, one inline")
    func externalData() throws {
        let model = try ONNXModel(path: Self.external)
        let byName = Dictionary(uniqueKeysWithValues: model.graph.initializers.map { ($0.name, $0) })
        #expect(model.graph.initializers.map(\.name) == ["ext.weight", "ext.index", "inline.bias"])
        #expect(byName["ext.weight"]?.location == .external(location: "external.onnx.data", offset: 64, length: 64))
        #expect(byName["ext.index"]?.location == .external(location: "external.onnx.data", offset: 192, length: 24))
        #expect(byName["inline.bias"]?.location == .raw(byteCount: 16))
        expectFormula(try model.tensor(named: "ext.weight"), .float32, [4, 4])
        expectFormula(try model.tensor(named: "ext.index"), .int64, [3])
        expectFormula(try model.tensor(named: "inline.bias"), .float32, [4])
    }

    @Test("external tensors stay valid after the model object is gone")
    func externalOutlivesModel() throws {
        var model: ONNXModel? = try ONNXModel(path: Self.external)
        let weight = try model!.tensor(named: "ext.weight")
        model = nil
        expectFormula(weight, .float32, [4, 4])
    }
}
