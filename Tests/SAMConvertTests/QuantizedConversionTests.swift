import Foundation
import SAMConvert
import SAMFormats
import SAMFiles
import SAMKernels
import SAMModelFile
import SAMTensor
import SAMTestSupport
import Testing

/// `samconvert --dtype int8|q4` on the committed tiny set: the model's matrices (its linear layers'
/// weights) are stored quantized and everything else float32, the file is format version 2, and the
/// model it loads into runs. Accuracy is measured on full-size sets (docs/quantization.md); here the
/// outputs must stay finite and near PyTorch's, with q4 coarser than int8.
@Suite("Conversion: int8 and q4 weights")
struct QuantizedConversionTests {
    static let tiny = TestPaths.tinyReferences

    func convert(_ precision: StoragePrecision, halfMatrices: [String] = []) throws -> (LoadedModel, ConversionResult) {
        var request = ConversionRequest(inputs: [Self.tiny + "/mobile_sam.h5"], output: try temporaryFolder() + "/model.samw")
        request.configFile = Self.tiny + "/config.json"
        request.precision = precision
        request.halfMatrices = halfMatrices
        let result = try Converter.run(request)
        return (try ModelFile.load(request.output), result)
    }

    @Test("the image encoder's matrices quantized, the rest float32, format version 2", arguments: [StoragePrecision.int8, .q4])
    func layout(precision: StoragePrecision) throws {
        let (model, result) = try convert(precision)
        #expect(model.metadata.weightDType == precision.rawValue)
        #expect(model.file.version == 2)
        #expect(!result.quantizedWeights.isEmpty)
        // The encoder's linear layers and pointwise convolutions are quantized; no other convolution
        // filter, norm or embedding is, and nothing of the prompt encoder or mask decoder (their
        // matrices are float16).
        for (name, weight) in result.quantizedWeights {
            #expect(weight.shape.count == 2 || (weight.shape.count == 4 && weight.shape[2...] == [1, 1]), "\(name)")
            #expect(name.hasSuffix(".weight") && name.hasPrefix("image_encoder."), "\(name)")
        }
        #expect(result.storedTensors["mask_decoder.transformer.layers.0.mlp.lin1.weight"]?.dtype == .float16)
        #expect(result.storedTensors["mask_decoder.transformer.layers.0.mlp.lin1.bias"]?.dtype == .float32)
        #expect(result.quantizedWeights.keys.contains("image_encoder.layers.1.blocks.0.mlp.fc1.weight"))
        // qkv, proj, fc1 and fc2 of the tiny TinyViT's four attention blocks (depths 1, 1, 2, 1 after its conv
        // stage), and conv1 and conv3 of its MBConv and its three PatchMergings.
        #expect(result.quantizedWeights.count == 16 + 8)
        #expect(result.quantizedWeights.keys.contains("image_encoder.layers.0.blocks.0.conv1.c.weight"))
        #expect(result.quantizedWeights.keys.contains("image_encoder.layers.2.downsample.conv3.c.weight"))
        #expect(result.storedTensors.keys.contains("image_encoder.patch_embed.seq.0.c.weight"))
        #expect(result.storedTensors.keys.contains("image_encoder.layers.0.blocks.0.conv2.c.weight"))
        #expect(result.storedTensors.values.allSatisfy { $0.dtype == .float32 || $0.dtype == .float16 })
        #expect(result.storedTensors.filter { $0.value.dtype == .float16 }.keys.allSatisfy { $0.hasPrefix("mask_decoder.") })
        if precision == .q4 {
            // Rows q4 cannot group by 32 stay int8.
            for (name, weight) in result.quantizedWeights {
                let rows = weight.shape[1...].reduce(1, *)
                #expect(weight.scheme == (rows % 32 == 0 ? .int4 : .int8), "\(name) rows of \(rows)")
            }
        } else {
            #expect(result.quantizedWeights.values.allSatisfy { $0.scheme == .int8 })
        }
    }

    @Test("--half-matrices keeps the matrices it names float16, and refuses a pattern that names none or a precision that quantizes nothing")
    func halfMatrices() throws {
        let kept = ["image_encoder.layers.1.*", "image_encoder.layers.?.downsample.conv[13].c.weight"]
        let (model, result) = try convert(.int8, halfMatrices: kept)
        let (_, all) = try convert(.int8)
        let half = Set(all.quantizedWeights.keys).subtracting(result.quantizedWeights.keys)
        // Stage 1's block (qkv, proj, fc1, fc2) and its PatchMerging, and the two later PatchMergings' 1x1s.
        #expect(half.count == 4 + 2 + 4, "\(half.sorted())")
        #expect(half.allSatisfy { $0.hasPrefix("image_encoder.layers.1.") || $0.contains(".downsample.conv") })
        for name in half { #expect(result.storedTensors[name]?.dtype == .float16, "\(name)") }
        #expect(result.quantizedWeights.keys.contains("image_encoder.layers.2.blocks.0.attn.qkv.weight"))
        #expect(model.metadata.weightDType == "int8" && model.file.version == 2)
        // It runs, with the kept layers on the float path under int8 products too.
        let errors = try Kernels.withInt8Products(true) { try ReferenceCheck(root: Self.tiny).run(model.sam) }
        #expect(errors.allFinite && errors.worstMask < 0.234, "\(errors)")

        #expect(throws: ConversionFailure.self) { try convert(.int8, halfMatrices: ["image_encoder.blocks.*"]) }
        let none = #expect(throws: ConversionFailure.self) { try convert(.int8, halfMatrices: ["mask_decoder.*"]) }
        #expect(none?.message.contains("'mask_decoder.*' matches none") == true, "\(none?.message ?? "")")
        let f16 = #expect(throws: ConversionFailure.self) { try convert(.half, halfMatrices: ["image_encoder.*"]) }
        #expect(f16?.message.contains("--dtype f16") == true, "\(f16?.message ?? "")")
    }

    @Test("the quantized model runs near PyTorch; q4 further than int8; int8 products opt-in")
    func accuracy() throws {
        let int8 = try convert(.int8).0, q4 = try convert(.q4).0
        let check = ReferenceCheck(root: Self.tiny)
        let int8Errors = try check.run(int8.sam), q4Errors = try check.run(q4.sam)
        let productErrors = try Kernels.withInt8Products(true) { try check.run(int8.sam) }
        print("int8 tiny: \(int8Errors)\nq4 tiny: \(q4Errors)\nint8 products tiny: \(productErrors)")
        #expect(int8Errors.allFinite && q4Errors.allFinite && productErrors.allFinite)
        // Not within float32's 1e-4 (the weights are rounded), but near. Measured on this set (any
        // CPU: the integer products are exact, the widened path is float32's), with the pointwise
        // convolutions quantized too: worst low-res logit error 0.075 (int8), 0.156 (int8 products),
        // 1.150 (q4); bounds at 1.5 times that.
        #expect(!int8Errors.within(1e-4))
        #expect(int8Errors.worstMask < 0.113 && productErrors.worstMask < 0.234 && q4Errors.worstMask < 1.73)
        #expect(q4Errors.worstMask > int8Errors.worstMask)
        #expect(productErrors.worstMask != int8Errors.worstMask)
    }
}

/// EfficientViT-SAM's pointwise convolutions (ConvLayer 1x1) are matrices too: `--dtype int8` stores them
/// int8, MBConv runs them in int8 products when those are on, the other pointwise layers (the neck's,
/// LiteMLA's qkv and proj) through `Kernels.int8PointwiseConv`.
@Suite("Conversion: EfficientViT-SAM's pointwise convolutions in int8")
struct EfficientViTInt8ConversionTests {
    static let set = TestPaths.efficientViTSAMTinyReferences

    @Test("stored int8, run near PyTorch widened or in int8 products")
    func pointwiseConvolutions() throws {
        var request = ConversionRequest(inputs: [Self.set + "/efficientvit_sam.h5"], output: try temporaryFolder() + "/model.samw")
        request.configFile = Self.set + "/config.json"
        request.precision = .int8
        let result = try Converter.run(request)
        let pointwise = result.quantizedWeights.filter { $0.value.shape.count == 4 }
        // Every quantized matrix of this encoder is a pointwise convolution (it has no linear layer).
        #expect(pointwise.count == result.quantizedWeights.count && pointwise.count == 20)
        #expect(pointwise.values.allSatisfy { $0.shape[2...] == [1, 1] && $0.scheme == .int8 })
        #expect(pointwise.keys.contains("image_encoder.backbone.stages.4.op_list.0.main.inverted_conv.conv.weight"))
        #expect(pointwise.keys.contains("image_encoder.neck.output_ops.0.op_list.0.conv.weight"))
        #expect(result.storedTensors["image_encoder.backbone.stages.4.op_list.0.main.depth_conv.conv.weight"]?.dtype == .float32)

        let model = try ModelFile.load(request.output)
        let check = ReferenceCheck(root: Self.set)
        let widened = try check.run(model.sam)
        let products = try Kernels.withInt8Products(true) { try check.run(model.sam) }
        print("EfficientViT-SAM int8 tiny: \(widened)\nint8 products: \(products)")
        #expect(widened.allFinite && products.allFinite && products.worstMask != widened.worstMask)
        // Measured on this set: worst low-res logit error 0.0445 (int8), 0.0897 (int8 products); bounds at
        // 1.5 times that.
        #expect(widened.worstMask < 0.067 && products.worstMask < 0.135)
    }
}

/// `--dtype int8` from onnxruntime's int8 exports: QInt8 codes (zero point 0, per tensor or per
/// channel) are stored as the exporter wrote them, with its scales; QUInt8 ones are requantized.
@Suite("Conversion: int8 ONNX kept int8")
struct Int8ExportConversionTests {
    static let exports = TestPaths.tinyReferences + "/exports"

    func convert(_ style: String) throws -> (ConversionResult, SAMWFile) {
        var request = ConversionRequest(inputs: ["\(Self.exports)/\(style)/ImageEncoder.onnx", "\(Self.exports)/\(style)/mobile_sam_decoder.onnx"],
                                        output: try temporaryFolder() + "/model.samw")
        request.configFile = TestPaths.tinyReferences + "/config.json"
        request.precision = .int8
        let result = try Converter.run(request)
        return (result, try SAMWFile(path: request.output))
    }

    @Test("QInt8 matrices keep the exporter's codes and scales")
    func keptCodes() throws {
        let (result, file) = try convert("int8-dynamic-qint8-per-channel")
        var kept = 0
        for name in result.quantizedWeights.keys {
            let weight = try file.quantizedWeight(named: name)
            let imported = try #require(result.imported.tensors[name])
            guard let scales = imported.exporterInt8Scales else { continue }
            kept += 1
            let source = try #require(imported.origin.sources.first)
            let model = try ONNXModel(path: imported.origin.file)
            let codes = try model.tensor(named: source)  // int8 [in, out] (MatMulInteger) or [out, in]
            #expect(codes.dtype == .int8)
            let (rows, inner) = (weight.shape[0], weight.shape[1])
            // MatMulInteger stores [in, out], Gemm and named weights [out, in]: the codes match one way.
            func differences(transposed: Bool) -> Int {
                withExtendedLifetime(weight) {
                    let stored = weight.codeBytes
                    var count = 0
                    for row in 0..<rows {
                        for column in 0..<inner
                        where Int8(bitPattern: stored[row * inner + column])
                            != Int8(codes.value(at: transposed ? column * rows + row : row * inner + column)) {
                            count += 1
                        }
                    }
                    return count
                }
            }
            let asStored = codes.shape == [rows, inner] ? differences(transposed: false) : -1
            let transposed = codes.shape == [inner, rows] ? differences(transposed: true) : -1
            #expect(asStored == 0 || transposed == 0, "\(name) from \(source) \(codes.shape): \(asStored) / \(transposed) codes differ")
            #expect((0..<rows).map(weight.rowScale) == scales, "\(name)")
        }
        #expect(kept == 16, "matrices kept from the export: \(kept) of the encoder's 16")
    }

    @Test("QUInt8 (nonzero zero points) is requantized from its values")
    func requantized() throws {
        let (result, _) = try convert("int8-dynamic-quint8-per-tensor")
        #expect(!result.quantizedWeights.isEmpty)
        #expect(result.imported.tensors.values.allSatisfy { $0.exporterInt8Scales == nil })
    }
}
