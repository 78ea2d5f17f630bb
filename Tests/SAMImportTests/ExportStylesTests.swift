import Foundation
import SAMFormats
import SAMImport
import SAMTensor
import SAMTestSupport
import Testing

/// reference_outputs/tiny/exports: the tiny model in every export style users make (TorchScript at
/// opsets 14/16/17, dynamo at 18 and the default, onnxslim copies, fp16, int8 from quantize_dynamic
/// and QDQ; see its manifest.json). Every file converts to the state dict's canonical tensors:
/// bit for bit where the style is lossless, within the exporter's BatchNorm folding where it folded,
/// within half a quantization step (or one half-precision rounding) where it is lossy.
@Suite("Export styles")
struct ExportStylesTests {
    static let root = TestPaths.tinyReferences + "/exports"

    struct StyleFile: CustomTestStringConvertible, Sendable {
        let path: String
        let style: String
        let components: Set<SAMComponent>
        var testDescription: String { path }
    }

    /// Every model file the manifest lists (not its external-data files).
    static let files: [StyleFile] = {
        guard let data = try? Data(contentsOf: URL(fileURLWithPath: root + "/manifest.json")),
              let manifest = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
              let files = manifest["files"] as? [String: [String: Any]] else { return [] }
        return files.keys.sorted().filter { $0.hasSuffix(".onnx") }.map { path in
            let components = (files[path]?["components"] as? [String] ?? []).compactMap(SAMComponent.init(rawValue:))
            return StyleFile(path: path, style: files[path]?["style"] as? String ?? "", components: Set(components))
        }
    }()

    @Test("the manifest lists every style")
    func manifestComplete() {
        let styles = Set(Self.files.map { String($0.style.prefix { $0 != "-" }) })
        #expect(styles == ["torchscript", "dynamo", "onnxslim", "fp16", "int8"], "\(styles)")
        #expect(Self.files.count >= 35)
    }

    @Test("each export gives the state dict's tensors", arguments: files)
    func matchesStateDict(_ file: StyleFile) throws {
        let imported = try ONNXImport.importModel(Self.root + "/" + file.path)
        let reference = TinyImportTests.stateDict
        let comparison = WeightComparison(imported, against: reference, components: file.components) {
            // The split PromptEncoder takes no mask input: it holds no mask_downscaling.
            !(file.path.hasSuffix("PromptEncoder.onnx") && $0.hasPrefix("prompt_encoder.mask_downscaling."))
        }
        #expect(comparison.sameKeys, "\(file.path): \(comparison)")
        if file.style.hasPrefix("fp16") {
            // Each element one rounding to half precision from the f32 weight: within half an ulp of
            // f16 at its magnitude (2^-25 absolute below f16's normal range). Where the exporter
            // folded BatchNorm in half precision, bias = beta - mean * gamma / sqrt(var + eps) can
            // cancel: its three roundings are ulps of the terms' magnitude, not of the result.
            let stateDict = try HDF5File(path: TestPaths.tinyReferences + "/mobile_sam.h5").readAll()
            for entry in comparison.differing {
                let (candidate, expected) = (try #require(imported[entry.name]), try #require(reference[entry.name]))
                let folded = entry.referenceRule == .foldBatchNorm
                let magnitude = folded ? try Self.foldedBiasTerms(entry.name, stateDict) : nil
                var worst = 0.0
                for index in 0..<expected.elementCount {
                    let (a, b) = (candidate.value(at: index), expected.value(at: index))
                    let scale = max(abs(b), magnitude?[index] ?? 0)
                    worst = max(worst, abs(a - b) / max(scale * pow(2, -10), pow(2, -24)))
                }
                #expect(worst <= (folded ? 3.5 : 0.5), "\(file.path) \(entry.name): \(worst) f16 ulps")
            }
        } else if file.style.hasPrefix("int8") {
            for entry in comparison.differing {
                // Half a quantization step: int8 / uint8 scales are at most max|w| / 127.
                let maxMagnitude = try #require(reference[entry.name]).floats().map { abs(Double($0)) }.max() ?? 0
                #expect(entry.maxAbs <= maxMagnitude / 254 * 1.0001 + 1e-7, "\(file.path) \(entry.name): \(entry.maxAbs) vs step/2 \(maxMagnitude / 254)")
            }
        } else {
            comparison.expectMatches()
        }
        print("\(file.path): \(comparison)")
    }

    /// For a folded conv's bias, per element |beta| + |mean * gamma / sqrt(var + eps)| from the state
    /// dict's BatchNorm (the terms the fold subtracts); nil for a folded weight (no cancellation).
    static func foldedBiasTerms(_ name: String, _ stateDict: [String: Tensor]) throws -> [Double]? {
        guard name.hasSuffix(".c.bias") else { return nil }
        let bn = String(name.dropLast(".c.bias".count)) + ".bn."
        let (gamma, beta, mean, variance) = (try #require(stateDict[bn + "weight"]), try #require(stateDict[bn + "bias"]),
                                             try #require(stateDict[bn + "running_mean"]), try #require(stateDict[bn + "running_var"]))
        return (0..<gamma.elementCount).map { c in
            abs(beta.value(at: c)) + abs(mean.value(at: c) * gamma.value(at: c) / (variance.value(at: c) + 1e-5).squareRoot())
        }
    }
}
