import Foundation
import SAMFormats
import SAMTensor
import SAMTestSupport
import Testing

/// The committed int8 exports with one initializer stored as a type its operator does not allow
/// (onnx.checker and onnxruntime refuse each file): samconvert exits 2 within a second, naming the
/// file, the node and the input, and writes nothing, where it used to convert them to wrong weights.
@Suite("Hostile ONNX: quantized weights of types their operators do not allow", .serialized)
struct ONNXTypeHostileTests {
    static let exports = HostileCorpus.tiny + "/exports"

    /// `export` (a file under reference_outputs/tiny/exports) copied into `folder` with the initializer
    /// `name` replaced by `values` stored as `type` (a TensorProto.DataType code), same shape.
    func swapped(_ export: String, _ name: String, type: Int, raw values: Data, in folder: String) throws -> String {
        let source = Self.exports + "/" + export
        let shape = try ONNXModel(path: source).tensor(named: name).shape
        let tensor = ONNXInitializerSwap.tensor(name, type: type, dims: shape, raw: values)
        let path = folder + "/" + export.replacingOccurrences(of: "/", with: "-")
        try ONNXInitializerSwap.replacing(name, in: Data(contentsOf: URL(fileURLWithPath: source)), with: tensor)
            .write(to: URL(fileURLWithPath: path))
        return path
    }

    /// samconvert on `path`: exit 2 within a second, every string of `mentions` in its message, no output.
    func refused(_ label: String, _ path: String, mentions: [String], folder: String) throws {
        let output = path + ".samw"
        try HostileRun(label: label, tool: samconvert, arguments: [path, "--out", output],
                       mentions: [(path as NSString).lastPathComponent] + mentions, output: output, expected: [2], seconds: 1).check()
    }

    static func bytes<T>(_ values: [T]) -> Data { values.withUnsafeBytes { Data($0) } }

    @Test("QDQ: neck.0's DequantizeLinear zero point stored as INT32, UINT8 or FLOAT against its INT8 data")
    func dequantizeZeroPoint() throws {
        let folder = try Hostile.folder()
        defer { Hostile.remove(folder) }
        let cases: [(String, Int, Data)] = [("INT32", 6, Self.bytes([Int32(100_000)])), ("UINT8", 2, Data([128])),
                                            ("FLOAT", 1, Self.bytes([Float(0)]))]
        for (type, code, raw) in cases {
            let path = try swapped("int8-qdq/ImageEncoder.onnx", "neck.0.weight_zero_point", type: code, raw: raw, in: folder)
            try refused("ONNX DequantizeLinear zero point \(type) against INT8 data", path, mentions: [
                "DequantizeLinear 'neck.0.weight_DequantizeLinear' input 2 (x_zero_point) 'neck.0.weight_zero_point' is \(type)",
                type == "FLOAT" ? "allows INT8, UINT8 or INT32 there" : "input 0 (x) 'neck.0.weight_quantized' is INT8",
                "[invalidOperatorTypes]",
            ], folder: folder)
        }
    }

    @Test("quantize_dynamic: the first ConvInteger's weight stored as INT32 with the same values")
    func convIntegerWeight() throws {
        let folder = try Hostile.folder()
        defer { Hostile.remove(folder) }
        let export = "int8-dynamic-qint8-per-channel/ImageEncoder.onnx"
        let model = try ONNXModel(path: Self.exports + "/" + export)
        let conv = try #require(model.graph.nodes.first { $0.opType == "ConvInteger" })
        let weight = try model.tensor(named: conv.inputs[1])
        let values = (0..<weight.elementCount).map { Int32(weight.value(at: $0)) }
        let path = try swapped(export, conv.inputs[1], type: 6, raw: Self.bytes(values), in: folder)
        try refused("ONNX ConvInteger weight INT32", path, mentions: [
            "ConvInteger '\(conv.name)' input 1 (w) '\(conv.inputs[1])' is INT32", "allows INT8 or UINT8 there", "[invalidOperatorTypes]",
        ], folder: folder)
    }

    @Test("quantize_dynamic: the first MatMulInteger's weight zero point stored as UINT8 against its INT8 weight")
    func matMulIntegerZeroPoint() throws {
        let folder = try Hostile.folder()
        defer { Hostile.remove(folder) }
        let export = "int8-dynamic-qint8-per-channel/ImageEncoder.onnx"
        let model = try ONNXModel(path: Self.exports + "/" + export)
        let matMul = try #require(model.graph.nodes.first { $0.opType == "MatMulInteger" })
        let zeroPoint = try model.tensor(named: matMul.inputs[3])
        let values = (0..<zeroPoint.elementCount).map { UInt8(Int(zeroPoint.value(at: $0)) + 128) }
        let path = try swapped(export, matMul.inputs[3], type: 2, raw: Data(values), in: folder)
        try refused("ONNX MatMulInteger zero point UINT8 against INT8 weight", path, mentions: [
            "MatMulInteger '\(matMul.name)' input 3 (b_zero_point) '\(matMul.inputs[3])' is UINT8",
            "input 1 (B) '\(matMul.inputs[1])' is INT8", "[invalidOperatorTypes]",
        ], folder: folder)
    }

    @Test("variants: a DequantizeLinear scale FLOAT16 at opset 17, quantize_dynamic's weight scale DOUBLE, Cast to no type")
    func variants() throws {
        let folder = try Hostile.folder()
        defer { Hostile.remove(folder) }
        let half = try swapped("int8-qdq/ImageEncoder.onnx", "neck.0.weight_scale", type: 10, raw: Data([0x00, 0x20]), in: folder)
        try refused("ONNX DequantizeLinear scale FLOAT16 at opset 17", half, mentions: [
            "DequantizeLinear 'neck.0.weight_DequantizeLinear' input 1 (x_scale) 'neck.0.weight_scale' is FLOAT16", "allows FLOAT there",
        ], folder: folder)

        // quantize_dynamic multiplies the activation's scale by the weight's in a Mul: one type for both.
        let export = "int8-dynamic-qint8-per-channel/ImageEncoder.onnx"
        let model = try ONNXModel(path: Self.exports + "/" + export)
        let conv = try #require(model.graph.nodes.first { $0.opType == "ConvInteger" })
        let scaleName = conv.inputs[1].replacingOccurrences(of: "_quantized", with: "_scale")
        let scale = try model.tensor(named: scaleName)
        let double = try swapped(export, scaleName, type: 11, raw: Self.bytes((0..<scale.elementCount).map(scale.value(at:))), in: folder)
        try refused("ONNX quantize_dynamic weight scale DOUBLE", double, mentions: [
            "input 1 (B) '\(scaleName)' is DOUBLE", "(the output of DynamicQuantizeLinear", "is FLOAT", "[invalidOperatorTypes]",
        ], folder: folder)

        // A Cast whose `to` names no type: NodeProto { input, output, name, op_type, attribute { name, i, type INT } }.
        var attribute = Proto()
        attribute.string(1, "to")
        attribute.varint(3, 99)
        attribute.varint(20, 2)
        var cast = Proto()
        cast.string(1, "x")
        cast.string(2, "y")
        cast.string(3, "/Cast")
        cast.string(4, "Cast")
        cast.message(5, attribute)
        let castPath = folder + "/cast-to-99.onnx"
        try HostileONNX.model(HostileONNX.graph(nodes: [cast])).write(to: URL(fileURLWithPath: castPath))
        try refused("ONNX Cast to type code 99", castPath, mentions: ["Cast '/Cast' attribute to is type99", "[invalidOperatorTypes]"],
                    folder: folder)
    }
}
