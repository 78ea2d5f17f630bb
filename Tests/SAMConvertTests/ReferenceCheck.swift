import Foundation
import SAMFormats
import SAMModel
import SAMTensor
import SAMTestSupport

/// Runs a model on a reference set laid out like the full-size set (references/input_image.npy,
/// references/<case>/onnx_*.npy) and returns the worst errors, for conversion tests.
struct ReferenceCheck {
    let root: String

    struct Errors: CustomStringConvertible {
        var embeddings: Difference
        var masks: [String: Difference] = [:]
        var iou: [String: Difference] = [:]
        /// Cases the model cannot run by construction (a mask input for a model exported without the mask path).
        var skipped: [String] = []

        var worstMask: Float { masks.values.map(\.maxAbs).max() ?? .infinity }
        var worstIoU: Float { iou.values.map(\.maxAbs).max() ?? .infinity }
        var allFinite: Bool { !embeddings.nonFinite && masks.values.allSatisfy { !$0.nonFinite } && iou.values.allSatisfy { !$0.nonFinite } }
        func within(_ atol: Float) -> Bool {
            allFinite && embeddings.maxAbs <= atol && worstMask <= atol && worstIoU <= atol
        }
        var description: String {
            "embeddings \(embeddings.maxAbs), masks \(worstMask), iou \(worstIoU) over \(masks.count) cases"
                + (skipped.isEmpty ? "" : " (not run: \(skipped.joined(separator: ", ")))")
        }
    }

    func tensor(_ relative: String) throws -> FloatTensor { FloatTensor(try NPY.read(root + "/references/" + relative)) }

    var caseNames: [String] {
        let folder = root + "/references"
        return ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [])
            .filter { FileManager.default.fileExists(atPath: "\(folder)/\($0)/onnx_point_coords.npy") }.sorted()
    }

    /// Encoder on input_image.npy, then the official-decoder path of every case from those embeddings.
    func run(_ sam: Sam) throws -> Errors {
        let embeddings = try sam.encodeImage(try tensor("input_image.npy"))
        var errors = Errors(embeddings: Difference(embeddings.data, try tensor("image_embeddings.npy").data))
        for name in caseNames {
            var points = try tensor("\(name)/onnx_point_coords.npy")
            var labels = try tensor("\(name)/onnx_point_labels.npy")
            let padded = Sam.removeOfficialPaddingPoint(points: &points, labels: &labels)
            let hasMask = try tensor("\(name)/onnx_has_mask_input.npy").data[0]
            let hasMaskPath = sam.promptEncoder?.maskDownscaling != nil
            if hasMask != 0 && !hasMaskPath {
                errors.skipped.append(name)
                continue
            }
            let (masks, iou) = try sam.decode(imageEmbeddings: embeddings, points: points, labels: labels, appendPaddingPoint: padded,
                                              maskInput: hasMaskPath ? try tensor("\(name)/onnx_mask_input.npy") : nil,
                                              hasMaskInput: hasMask)
            errors.masks[name] = Difference(masks.data, try tensor("\(name)/onnx_low_res_masks.npy").data)
            errors.iou[name] = Difference(iou.data, try tensor("\(name)/onnx_iou_predictions.npy").data)
        }
        return errors
    }
}

/// A fresh temporary folder per test.
func temporaryFolder() throws -> String { try TestPaths.temporaryFolder("samconvert") }
