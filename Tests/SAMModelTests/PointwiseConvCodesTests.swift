import SAMModel
import SAMTensor
import Testing

/// TinyViT's pointwise Conv2d_BN weights are matrices (`samconvert --dtype int8|q4` quantizes them); one
/// stored int8 keeps its codes for int8 products, the BatchNorm folded into the row scales.
@Suite("Pointwise convolutions' int8 codes")
struct PointwiseConvCodesTests {
    static let prefix = "image_encoder.layers.0.blocks.0.conv1"

    @Test("codes kept, BatchNorm folded into the scales; the float32 weight is the same fold of the same values")
    func foldedIntoScales() throws {
        var tensors = try ReferenceFolder.tiny.encoderWeights()
        let key = "\(Self.prefix).c.weight"
        let removed = tensors.removeValue(forKey: key)
        let stored = try #require(removed)
        let floats = FloatTensor(stored)
        let codes = try floats.data.withUnsafeBufferPointer { try QuantizedWeight(quantizing: $0, shape: stored.shape, scheme: .int8) }
        let store = WeightStore(tensors, quantized: [key: codes], source: "tiny")
        #expect(tensors["\(Self.prefix).bn.running_var"] != nil)
        let conv = try store.takeConvBN(Self.prefix)
        let int8 = try #require(conv.int8)
        let (outChannels, inChannels) = (stored.shape[0], stored.shape[1])
        #expect(int8.shape == [outChannels, inChannels] && int8.scheme == .int8)
        #expect(Array(int8.codeBytes) == Array(codes.codeBytes))
        #expect(store.matrixKeys.contains(key))
        let gamma = FloatTensor(tensors["\(Self.prefix).bn.weight"]!), variance = FloatTensor(tensors["\(Self.prefix).bn.running_var"]!)
        for row in 0..<outChannels {
            let factor = Double(gamma.data[row]) / (Double(variance.data[row]) + 1e-5).squareRoot()
            #expect(int8.rowScale(row) == Float(Double(codes.rowScale(row)) * factor))
        }
        // code × folded scale against the fold of code × scale: two roundings of the same product apart.
        let values = int8.floats()
        for (index, value) in conv.weight.data.enumerated() {
            #expect(abs(values[index] - value) <= 2 * value.ulp, "element \(index)")
        }
    }

    @Test("stored as float32 or q4, or not pointwise: no codes; only pointwise weights are matrices")
    func noCodesOtherwise() throws {
        let tensors = try ReferenceFolder.tiny.encoderWeights()
        let store = WeightStore(tensors, source: "tiny")
        #expect(try store.takeConvBN(Self.prefix).int8 == nil)
        #expect(try store.takeConvBN("image_encoder.layers.0.blocks.0.conv2").int8 == nil)
        #expect(try store.takeConvBN("image_encoder.patch_embed.seq.0").int8 == nil)
        #expect(store.matrixKeys == ["\(Self.prefix).c.weight"])

        // conv3 [8, 32, 1, 1]: rows q4 can group by 32.
        var rest = tensors
        let project = "image_encoder.layers.0.blocks.0.conv3", key = "\(project).c.weight"
        let removed = rest.removeValue(forKey: key)
        let floats = FloatTensor(try #require(removed))
        let q4 = try floats.data.withUnsafeBufferPointer { try QuantizedWeight(quantizing: $0, shape: floats.shape, scheme: .int4) }
        let q4Store = WeightStore(rest, quantized: [key: q4], source: "tiny")
        #expect(try q4Store.takeConvBN(project).int8 == nil)
        #expect(q4Store.matrixKeys == [key])
    }
}
