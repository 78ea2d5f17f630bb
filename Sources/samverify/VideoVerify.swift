import Foundation
import SAMFiles
import SAMKernels
import SAMModelFile
import SAMVerify

/// `samverify MODEL --references SET` where SET is a video set (converters/export_sam2_video.py):
/// the tracker runs the set's prompts and every frame is compared with SAM2VideoPredictor's.
extension SamVerify {
    func verifyVideo() -> Int32 {
        let notApplicable = [("--case", !cases.isEmpty), ("--tolerances", tolerances != nil), ("--determinism", determinism),
                             ("--calibrate", calibrate != nil), ("--dump-outputs", dumpOutputs != nil),
                             ("--int8-products", int8Products),
                             ("--json", json != nil), ("--junit", junit != nil), ("--report", report != nil)].filter(\.1).map(\.0)
        do throws(VerifyError) {
            guard notApplicable.isEmpty else {
                throw VerifyError(.usage, "\(notApplicable.joined(separator: ", ")) do(es) not apply to a video set")
            }
            var tolerances = VideoVerification.Tolerances()
            for value in [atol, rtol].compactMap({ $0 }) where !(value.isFinite && value >= 0) {
                throw VerifyError(.usage, "tolerances must be finite and non-negative, not \(value)")
            }
            if let atol { tolerances.logits = atol }
            let set = try VideoReferenceSet(folder: references)
            let loaded: LoadedModel
            do { loaded = try ModelFile.load(model) } catch { throw VerifyError(.badModel, "\(error)") }
            progress("video set \(references): \(set.description); \(set.frames.count) frames, prompts \(set.prompts.count), "
                     + "holes \(set.fillHoles ? "filled" : "not filled")"
                     + (set.correctionsAsConditioning ? ", corrections as conditioning" : "")
                     + (set.nonOverlappingMasks ? ", non-overlapping masks" : ""))
            if bfloat16 {
                do { try Kernels.setLinearPrecision(.bfloat16) } catch { throw VerifyError(.usage, "--bf16: \(error)") }
                // The report says which path ran, so that no one reads it as a float32 port that drifted.
                print("linear layers, memory attention and global attention: bfloat16 products (--bf16, the opt-in lower-precision path): its logits exceed "
                      + "float32's tolerance by design, so judge it by the masks' IoU")
            }
            let result = try VideoVerification.run(loaded, set: set, tolerances: tolerances, progress: progress)
            print(TerminalText.escaped(result.table, keepingNewlines: true), terminator: "")
            return result.passed ? 0 : 1
        } catch {
            FileHandle.standardError.write(Data("samverify: \(TerminalText.escaped(error.message, keepingNewlines: true))\n".utf8))
            return error.exitCode
        }
    }
}
