import Foundation
import SAMFormats
import SAMImport
import SAMTensor
import SAMTestSupport
import Testing

/// ONNX type constraints on the nodes whose stored inputs the importer reads: a quantized weight whose
/// zero point, data or scale has a type its operator does not allow (which onnx.checker and
/// onnxruntime refuse) is an error naming the node and the input, never a conversion to wrong weights.
/// Each hand-built graph converts when its types are right, so the refusal is the type's doing.
@Suite("ONNX type checks")
struct ONNXTypeCheckTests {
    typealias Typed = ONNXTestFile.TypedTensor

    static func importing(_ file: ONNXTestFile) throws -> ImportedWeights {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/model.onnx"
        try file.write(to: path)
        return try ONNXImport.importModel(path)
    }

    /// The refusal of `file`: an `ImportError` of `code` whose message names every string of `mentions`.
    @discardableResult
    static func refusal(_ file: ONNXTestFile, _ code: ImportError.Code = .invalidOperatorTypes, mentions: [String],
                        sourceLocation: SourceLocation = #_sourceLocation) throws -> ImportError {
        let error = try #require(throws: ImportError.self, sourceLocation: sourceLocation) { try Self.importing(file) }
        #expect(error.code == code, "\(error)", sourceLocation: sourceLocation)
        for mention in mentions {
            #expect(error.description.contains(mention), "'\(mention)' not in: \(error)", sourceLocation: sourceLocation)
        }
        return error
    }

    static let weightValues: [Int8] = [-128, -3, 0, 127]

    /// onnxruntime's QDQ form of one conv weight: int8 `neck.0.weight_quantized` [2,2,1,1] through
    /// DequantizeLinear (scale 0.5) into a Conv; `zeroPoint` is input 2.
    static func qdqConv(zeroPoint: Typed? = .int8("neck.0.weight_zero_point", [], [1]),
                        data: Typed = .int8("neck.0.weight_quantized", [2, 2, 1, 1], weightValues),
                        scale: Typed = .float("neck.0.weight_scale", [], [0.5])) -> ONNXTestFile {
        var file = ONNXTestFile()
        file.inputs = ["x"]
        file.outputs = ["y"]
        file.typedInitializers = [data, scale] + (zeroPoint.map { [$0] } ?? [])
        file.node("DequantizeLinear", "neck.0.weight_DequantizeLinear", [data.name, scale.name, zeroPoint?.name ?? ""], ["w"])
        file.node("Conv", "/neck/neck.0/Conv", ["x", "w"], ["y"])
        return file
    }

    /// quantize_dynamic's form: the activation quantized by DynamicQuantizeLinear, ConvInteger with
    /// the int8 weight, the int32 product cast to float and multiplied by both scales.
    static func dynamicConv(weight: Typed = .int8("neck.0.weight_quantized", [2, 2, 1, 1], weightValues),
                            zeroPoint: Typed = .int8("neck.0.weight_zero_point", [], [0]),
                            scale: Typed = .float("neck.0.weight_scale", [], [0.25]), castTo: Int64 = 1) -> ONNXTestFile {
        var file = ONNXTestFile()
        file.inputs = ["x"]
        file.outputs = ["y"]
        file.typedInitializers = [weight, zeroPoint, scale]
        file.node("DynamicQuantizeLinear", "x_QuantizeLinear", ["x"], ["xq", "x_scale", "x_zero_point"])
        file.node("ConvInteger", "/neck/neck.0/Conv_quant", ["xq", weight.name, "x_zero_point", zeroPoint.name], ["product"])
        file.node("Cast", "/neck/neck.0/Conv_quant_cast", ["product"], ["product_float"], ints: ["to": castTo])
        file.node("Mul", "/neck/neck.0/Conv_quant_scales_mul", ["x_scale", scale.name], ["scales"])
        file.node("Mul", "/neck/neck.0/Conv_quant_output_scale_mul", ["product_float", "scales"], ["y"])
        return file
    }

    /// quantize_dynamic's Linear: MatMulInteger with the int8 weight B [K, N] and its zero point.
    static func dynamicLinear(zeroPoint: Typed = .int8("onnx::MatMul_7_zero_point", [], [0])) -> ONNXTestFile {
        var file = ONNXTestFile()
        file.inputs = ["x"]
        file.outputs = ["y"]
        file.typedInitializers = [.int8("onnx::MatMul_7_quantized", [2, 2], weightValues), zeroPoint,
                                  .float("onnx::MatMul_7_scale", [], [0.25])]
        file.node("DynamicQuantizeLinear", "x_QuantizeLinear", ["x"], ["xq", "x_scale", "x_zero_point"])
        file.node("MatMulInteger", "/layers.1/blocks.0/attn/qkv/MatMul_quant",
                  ["xq", "onnx::MatMul_7_quantized", "x_zero_point", zeroPoint.name], ["product"])
        file.node("Cast", "/layers.1/blocks.0/attn/qkv/MatMul_quant_cast", ["product"], ["product_float"], ints: ["to": 1])
        file.node("Mul", "/layers.1/blocks.0/attn/qkv/MatMul_quant_scales_mul", ["x_scale", "onnx::MatMul_7_scale"], ["scales"])
        file.node("Mul", "/layers.1/blocks.0/attn/qkv/MatMul_quant_output_scale_mul", ["product_float", "scales"], ["y"])
        return file
    }

    // MARK: - The graphs convert when their types are right

    @Test("the hand-built QDQ, ConvInteger and MatMulInteger graphs convert: (q - zero point) * scale")
    func wellTypedGraphsConvert() throws {
        let qdq = try Self.importing(Self.qdqConv())
        #expect(qdq["image_encoder.neck.0.weight"]?.floats() == Self.weightValues.map { (Float($0) - 1) * 0.5 })
        let dynamic = try Self.importing(Self.dynamicConv())
        #expect(dynamic["image_encoder.neck.0.weight"]?.floats() == Self.weightValues.map { Float($0) * 0.25 })
        let linear = try Self.importing(Self.dynamicLinear())
        // B [K, N] is stored transposed: the Linear weight [N, K].
        let qkv = try #require(linear["image_encoder.layers.1.blocks.0.attn.qkv.weight"], "\(linear.names)")
        #expect(qkv.floats() == [-128, 0, -3, 127].map { Float($0) * 0.25 })
        // An int32 bias behind DequantizeLinear with an int32 zero point: QDQ graphs store Conv biases so.
        var bias = Self.qdqConv()
        bias.typedInitializers += [.int32("neck.0.bias_quantized", [2], [-1000, 7]), .float("neck.0.bias_scale", [], [0.125]),
                                   .int32("neck.0.bias_zero_point", [], [0])]
        bias.nodes.insert(.init(op: "DequantizeLinear", name: "neck.0.bias_DequantizeLinear",
                                inputs: ["neck.0.bias_quantized", "neck.0.bias_scale", "neck.0.bias_zero_point"], outputs: ["b"]), at: 1)
        bias.nodes[2].inputs.append("b")
        #expect(try Self.importing(bias)["image_encoder.neck.0.bias"]?.floats() == [-125, 0.875])
    }

    // MARK: - Findings: wrong weights from types onnxruntime refuses

    @Test("a DequantizeLinear zero point of another type than its int8 data", arguments: [
        Typed.int32("neck.0.weight_zero_point", [], [100_000]),
        Typed.uint8("neck.0.weight_zero_point", [], [128]),
        Typed.float("neck.0.weight_zero_point", [], [1]),
    ])
    func dequantizeZeroPointType(_ zeroPoint: Typed) throws {
        let type = ONNXElementType(code: Int32(zeroPoint.elementType)).name
        let error = try Self.refusal(Self.qdqConv(zeroPoint: zeroPoint), mentions: [
            "DequantizeLinear 'neck.0.weight_DequantizeLinear'", "input 2 (x_zero_point) 'neck.0.weight_zero_point' is \(type)",
        ] + (type == "FLOAT" ? ["allows INT8, UINT8 or INT32 there"] : ["input 0 (x) 'neck.0.weight_quantized' is INT8"]))
        #expect(error.tensor == "neck.0.weight_zero_point")
    }

    @Test("the committed QDQ ImageEncoder with neck.0's zero point stored as int32: refused, not near -625")
    func committedExportZeroPointInt32() throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let source = TestPaths.tinyReferences + "/exports/int8-qdq/ImageEncoder.onnx"
        let path = folder + "/ImageEncoder.onnx"
        let zeroPoint = ONNXInitializerSwap.tensor("neck.0.weight_zero_point", type: 6, dims: [],
                                                   raw: withUnsafeBytes(of: Int32(100_000)) { Data($0) })
        try ONNXInitializerSwap.replacing("neck.0.weight_zero_point", in: Data(contentsOf: URL(fileURLWithPath: source)), with: zeroPoint)
            .write(to: URL(fileURLWithPath: path))
        let error = try #require(throws: ImportError.self) { try ONNXImport.importModel(path) }
        #expect(error.code == .invalidOperatorTypes && error.file == path)
        #expect(error.description.contains("'neck.0.weight_DequantizeLinear' input 2 (x_zero_point)"), "\(error)")
    }

    @Test("a ConvInteger weight stored as int32 (and its zero point with it)")
    func convIntegerWeightInt32() throws {
        let weight = Typed.int32("neck.0.weight_quantized", [2, 2, 1, 1], Self.weightValues.map(Int32.init))
        let error = try Self.refusal(Self.dynamicConv(weight: weight), mentions: [
            "ConvInteger '/neck/neck.0/Conv_quant' input 1 (w) 'neck.0.weight_quantized' is INT32",
            "ConvInteger at opset 17 allows INT8 or UINT8 there",
        ])
        #expect(error.tensor == "neck.0.weight_quantized")
        try Self.refusal(Self.dynamicConv(weight: weight, zeroPoint: .int32("neck.0.weight_zero_point", [], [0])),
                         mentions: ["input 1 (w) 'neck.0.weight_quantized' is INT32"])
    }

    @Test("a MatMulInteger weight zero point of another type than the weight")
    func matMulIntegerZeroPointType() throws {
        try Self.refusal(Self.dynamicLinear(zeroPoint: .uint8("onnx::MatMul_7_zero_point", [], [128])), mentions: [
            "MatMulInteger '/layers.1/blocks.0/attn/qkv/MatMul_quant' input 3 (b_zero_point) 'onnx::MatMul_7_zero_point' is UINT8",
            "input 1 (B) 'onnx::MatMul_7_quantized' is INT8", "inputs of type T2 must have one type",
        ])
    }

    // MARK: - Variants: other operators, other ways to give a type

    @Test("a DequantizeLinear scale that is not FLOAT at opset 17 (FLOAT16 from opset 19)")
    func dequantizeScaleType() throws {
        try Self.refusal(Self.qdqConv(scale: .double("neck.0.weight_scale", [], [0.5])),
                         mentions: ["input 1 (x_scale) 'neck.0.weight_scale' is DOUBLE", "allows FLOAT there"])
        var file = Self.qdqConv(scale: Typed(name: "neck.0.weight_scale", shape: [], elementType: 10, raw: Data([0x00, 0x38])))
        try Self.refusal(file, mentions: ["input 1 (x_scale) 'neck.0.weight_scale' is FLOAT16"])
        file.opset = 19
        #expect(try Self.importing(file)["image_encoder.neck.0.weight"]?.floats() == Self.weightValues.map { (Float($0) - 1) * 0.5 })
    }

    @Test("the weight scale of quantize_dynamic's product stored as DOUBLE, or the product cast to DOUBLE or to no type")
    func productScaleAndCast() throws {
        try Self.refusal(Self.dynamicConv(scale: .double("neck.0.weight_scale", [], [0.25])), mentions: [
            "Mul '/neck/neck.0/Conv_quant_scales_mul' input 1 (B) 'neck.0.weight_scale' is DOUBLE",
            "input 0 (A) 'x_scale' (the output of DynamicQuantizeLinear 'x_QuantizeLinear') is FLOAT",
        ])
        try Self.refusal(Self.dynamicConv(castTo: 11), mentions: [
            "Mul '/neck/neck.0/Conv_quant_output_scale_mul'", "(the output of Cast '/neck/neck.0/Conv_quant_cast') is DOUBLE",
        ])
        try Self.refusal(Self.dynamicConv(castTo: 99), mentions: ["Cast '/neck/neck.0/Conv_quant_cast' attribute to is type99"])
        var missing = Self.dynamicConv()
        missing.nodes[2].intAttributes = [:]
        try Self.refusal(missing, mentions: ["Cast '/neck/neck.0/Conv_quant_cast' has no to attribute"])
    }

    @Test("a QuantizeLinear zero point of a type it does not allow")
    func quantizeZeroPointType() throws {
        var file = ONNXTestFile()
        file.inputs = ["x"]
        file.outputs = ["y"]
        file.typedInitializers = [.float("x_scale", [], [0.5]), .int32("x_zero_point", [], [0])]
        file.node("QuantizeLinear", "x_QuantizeLinear", ["x", "x_scale", "x_zero_point"], ["y"])
        try Self.refusal(file, mentions: ["QuantizeLinear 'x_QuantizeLinear' input 2 (y_zero_point) 'x_zero_point' is INT32",
                                          "allows INT8 or UINT8 there"])
    }

    @Test("a zero point given by a Constant node, or through Identity, is held to the same types")
    func constantAndIdentityZeroPoints() throws {
        var constant = Self.qdqConv(zeroPoint: nil)
        constant.nodes.insert(.init(op: "Constant", name: "zero_point_Constant", inputs: [], outputs: ["zp"],
                                    typedValue: .int32("", [], [5])), at: 0)
        constant.nodes[1].inputs[2] = "zp"
        try Self.refusal(constant, mentions: ["input 2 (x_zero_point) 'zp' is INT32", "input 0 (x) 'neck.0.weight_quantized' is INT8"])

        var identity = Self.qdqConv(zeroPoint: .uint8("neck.0.weight_zero_point", [], [128]))
        identity.nodes.insert(.init(op: "Identity", name: "Identity_0", inputs: ["neck.0.weight_zero_point"], outputs: ["zp_copy"]), at: 0)
        identity.nodes[1].inputs[2] = "zp_copy"
        try Self.refusal(identity, mentions: [
            "input 2 (x_zero_point) 'zp_copy' (the output of Identity 'Identity_0' of 'neck.0.weight_zero_point') is UINT8",
        ])
    }

    @Test("a Constant of a type its opset does not have; DequantizeLinear at an opset before it existed")
    func opsetBounds() throws {
        var constant = Self.qdqConv()
        constant.nodes.insert(.init(op: "Constant", name: "int4_Constant", inputs: [], outputs: ["c"],
                                    typedValue: Typed(name: "", shape: [2], elementType: 22, raw: Data([0x21]))), at: 0)
        try Self.refusal(constant, mentions: ["Constant 'int4_Constant' attribute value is INT4; Constant at opset 17 allows"])
        var early = Self.qdqConv()
        early.opset = 9
        try Self.refusal(early, mentions: ["DequantizeLinear 'neck.0.weight_DequantizeLinear' is not an operator at opset 9",
                                           "ai.onnx has DequantizeLinear from opset 10"])
    }

    // MARK: - Types ONNX allows that the importer does not dequantize

    @Test("int4 data (opset 21), bfloat16 scales (opset 19) and blocked quantization are refused, not misread")
    func unsupportedQuantization() throws {
        var int4 = Self.qdqConv(zeroPoint: Typed(name: "neck.0.weight_zero_point", shape: [], elementType: 22, raw: Data([0])),
                                data: Typed(name: "neck.0.weight_quantized", shape: [2, 2, 1, 1], elementType: 22, raw: Data([0x21, 0x43])))
        try Self.refusal(int4, mentions: ["input 0 (x) 'neck.0.weight_quantized' is INT4; DequantizeLinear at opset 17 allows"])
        int4.opset = 21
        try Self.refusal(int4, .unsupportedQuantization,
                         mentions: ["'neck.0.weight_quantized' is INT4; the importer dequantizes INT8, UINT8 and INT32 data"])

        var bfloat16 = Self.qdqConv(scale: Typed(name: "neck.0.weight_scale", shape: [], elementType: 16, raw: Data([0x00, 0x3F])))
        bfloat16.opset = 19
        try Self.refusal(bfloat16, .unsupportedQuantization, mentions: ["by a BFLOAT16 scale"])

        var blocked = Self.qdqConv(zeroPoint: .int8("neck.0.weight_zero_point", [2, 1, 1, 1], [0, 0]),
                                   scale: .float("neck.0.weight_scale", [2, 1, 1, 1], [0.5, 0.25]))
        blocked.opset = 21
        blocked.nodes[0].intAttributes = ["axis": 1, "block_size": 2]
        try Self.refusal(blocked, .unsupportedQuantization, mentions: ["in blocks of 2"])
    }
}
