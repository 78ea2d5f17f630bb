import ArgumentParser
import Foundation
import SAMCommandLine
import SAMFiles
import SAMImage
import SAMImageFiles
import SAMKernels
import SAMModelFile
import SAMPipeline
import SAMVideoFiles

/// `samtrack MODEL FRAMES --prompts prompts.json --out DIR`: SAM 2 tracks prompted objects
/// through a folder of numbered frames or a video file.
@main
struct SamTrack: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "samtrack",
        abstract: "Track objects through a video file or a folder of frames with a SAM 2 .samw model (converted with its video modules).",
        discussion: """
        FRAMES is a folder holding the clip as numbered JPEG or PNG files (00000.jpg, 00001.jpg ...), ordered by \
        number, or a video file (MP4, MOV, MKV, WebM, AVI ... as FFmpeg's libavformat opens them; its best video \
        stream, decoded to RGB as `ffmpeg -i FILE -pix_fmt rgb24` does, rotation metadata not applied), whose frames \
        are named by position, zero-padded (00000, 00001 ...). Every frame has one size and is held to --max-pixels. \
        A frame's index in prompts.json is its position from 0. \
        prompts.json is a list of {"frame": N, "object": ID, "points": [[x, y, label], ...], \
        "box": [x0, y0, x1, y1], "mask": "file.png", "round": R} in the frame's pixels (label 1 foreground, 0 \
        background; a mask PNG is the frame's size, a pixel is in it when a channel is 128 or more; its path is \
        relative to prompts.json). As with SAM2VideoPredictor: each round's prompts are added in file order, \
        then the objects are propagated through the clip; a later round corrects the tracked result (round 0 \
        when not given). Outputs come from the last round's propagation.
        Writes to --out: masks/<frame stem>/object_<id>.png (binary, frame size), logits/<frame stem>.npy \
        (float32 [objects, 1, H, W], ascending object ids, before thresholding; --no-logits skips them), \
        overlay/<frame stem>.png and result.json (per frame: object ids, object-score logits, mask areas; the \
        prompts; the model). Files are staged and appear together; --out must not hold masks/, logits/ or \
        overlay/ folders of an earlier run.
        Exit status: 0 success; 2 bad input or usage (checked before anything is written).
        """)

    @Argument(help: "The .samw model (SAM 2 / 2.1 converted from its .pt, .safetensors or .h5).") var model: String
    @Argument(help: "The folder of numbered frames, or a video file.") var frames: String
    @Option(help: "The prompts file (JSON).") var prompts: String
    @Option(help: "Output folder.") var out: String = "samtrack-out"
    @Flag(help: "Propagate towards the first frame.") var reverse = false
    @Option(name: .customLong("start-frame"), help: "The frame propagation starts from (default: the first prompted frame).")
    var startFrame: Int?
    @Option(name: .customLong("max-frames"), help: "Frames tracked after the start frame, at most.") var maxFrames: Int?
    @Flag(name: .customLong("no-logits"), help: "Do not write logits/<frame stem>.npy.") var noLogits = false
    @Flag(name: .customLong("no-fill-holes"),
          help: "Skip hole filling in the low-resolution masks (what upstream does on a CPU-only install, where its kernel is missing).")
    var noFillHoles = false
    @Flag(name: .customLong("corrections-as-conditioning"),
          help: "A correction on a tracked frame makes it a conditioning frame (SAM2VideoPredictor's add_all_frames_to_correct_as_cond=True).")
    var correctionsAsConditioning = false
    @Flag(name: .customLong("non-overlapping-masks"),
          help: "At each pixel only the highest-scoring object keeps its logit; the others are clamped to -10 (SAM2VideoPredictor's non_overlap_masks=True).")
    var nonOverlappingMasks = false
    @Option(name: .customLong("max-pixels"), help: "Largest frame (width x height) to decode.") var maxPixels: Int = ImageLimits.default.maxPixels
    @Flag(name: .customLong("skip-checksums"), help: "Do not verify the model's weight checksums at load.") var skipChecksums = false
    @Flag(name: .customLong("bf16"),
          help: "Run the linear layers and the attention products of the memory attention and the image encoder's global blocks in bfloat16 (the opt-in lower-precision path, CPUs with AVX512_BF16); result.json records it.")
    var bfloat16 = false

    static func main() {
        Kernels.restartWithStrongerBLASKernelsIfNeeded()
        FaultContainment.install()
        FaultContainment.removeTemporariesOnInterrupt()
        FFmpegLog.silence()  // every problem with a video is reported as a VideoFileError
        Kernels.tuneProcessForInference()
        mainExitingWithToolStatus()
    }

    mutating func run() throws {
        if let startFrame, startFrame < 0 { throw TrackFailure("--start-frame \(startFrame) is negative") }
        if let maxFrames, maxFrames < 0 { throw TrackFailure("--max-frames \(maxFrames) is negative") }
        guard maxPixels >= 1 else { throw TrackFailure("--max-pixels must be at least 1, not \(maxPixels)") }
        if bfloat16 {
            do { try Kernels.setLinearPrecision(.bfloat16) } catch { throw TrackFailure("--bf16: \(error)") }
        }
        let limits = ImageLimits(maxPixels: maxPixels)
        let clipFrames = try TrackFailure.wrap { try ClipFrames(frames, limits: limits) }
        let clip = clipFrames.source
        if let startFrame, startFrame >= clip.frameCount {
            throw TrackFailure("--start-frame \(startFrame) is past the clip's last frame \(clip.frameCount - 1)")
        }
        let file = try TrackFailure.wrap { try PromptsFile(path: prompts, frameCount: clip.frameCount, frameSize: clip.frameSize, limits: limits) }
        let modelPath = model
        let loaded = try TrackFailure.wrap { try ModelFile.load(modelPath, verifyingChecksums: !skipChecksums) }
        var tracking = try TrackFailure.wrap { try TrackingModel(sam: loaded.sam) }
        if noFillHoles { tracking.fillHoleArea = 0 }
        if correctionsAsConditioning { tracking.addCorrectionsAsConditioning = true }
        if nonOverlappingMasks { tracking.nonOverlappingMasks = true }
        let outputs = try TrackFailure.wrap {
            try TrackOutputs(folder: out, inputs: [modelPath, frames, prompts] + file.maskFiles, stems: clipFrames.stems, writeLogits: !noLogits)
        }
        let clipOnce = RememberedFrames(clip)
        var tracker = try TrackFailure.wrap { try VideoTracker(model: tracking, frames: clipOnce) }
        let started = Date()
        var submitted = 0
        var masks: [Int: [UInt8]] = [:]
        for (entry, mask) in file.masks.enumerated() { if let mask { masks[entry] = mask } }
        let writer = OutputWriter(), trackPrompts = file.prompts, stems = clipFrames.stems, frameCount = clip.frameCount
        do {
            try tracker.run(file.prompts, masks: masks, start: startFrame, maxFrames: maxFrames, reverse: reverse) { (frame) throws(TrackingError) in
                let image: RGBImage
                do { image = try clipOnce.frame(at: frame.frameIndex) } catch { throw .frames("\(error)") }
                submitted += 1
                let done = submitted
                do {
                    try writer.submit {
                        do { try outputs.write(frame, image: image, prompts: trackPrompts) } catch {
                            throw TrackFailure("writing the outputs of frame \(frame.frameIndex): \(error)")
                        }
                        let seconds = Date().timeIntervalSince(started)
                        FileHandle.standardError.write(Data(String(format: "samtrack: frame %@ (%d of %d) %.2f frames/s\n",
                                                                   stems[frame.frameIndex], done, frameCount,
                                                                   Double(done) / max(seconds, 1e-9)).utf8))
                    }
                } catch {
                    throw .frames("\(error)")
                }
            }
        } catch {
            // The frames queued before the failure are written into the staging folder, which the
            // failure then removes: wait for them first.
            try? writer.finish()
            throw TrackFailure("\(error)")
        }
        try TrackFailure.wrap { try writer.finish() }
        try TrackFailure.wrap {
            try outputs.finish(prompts: file, model: loaded.metadata.identity, options: [
                "reverse": reverse, "start_frame": startFrame.map { $0 as Any } ?? NSNull(), "max_frames": maxFrames.map { $0 as Any } ?? NSNull(),
                "fill_hole_area": tracking.fillHoleArea, "corrections_as_conditioning": tracking.addCorrectionsAsConditioning,
                "non_overlapping_masks": tracking.nonOverlappingMasks, "linear_precision": Kernels.linearPrecision.rawValue,
            ])
        }
    }
}

struct TrackFailure: Error, CustomStringConvertible {
    let description: String
    init(_ message: String) { description = message }

    /// Runs `body`, turning any error into a TrackFailure with its own message.
    static func wrap<T>(_ body: () throws -> T) throws(TrackFailure) -> T {
        do { return try body() } catch let failure as TrackFailure { throw failure } catch { throw TrackFailure("\(error)") }
    }
}
