import Foundation
import SAMFormats
import SAMImage
import SAMImageFiles
import SAMPipeline
import SAMTensor

/// A video reference set (converters/export_sam2_video.py): `frames/`, `prompts.json`,
/// `reference.json` (what upstream ran: the frames its last propagation yielded, objects, hole
/// filling, propagation options, dumped modules) and `reference/` (per frame logits, object scores,
/// low-resolution logits; per frame and object module dumps).
public struct VideoReferenceSet: Sendable {
    public let folder: String
    public let frames: FrameFolder
    public let frameSize: ImageSize
    public let prompts: [TrackPrompt]
    /// Masks of the entries that have one, frame-sized, 1 inside.
    public let masks: [Int: [UInt8]]
    /// The stems upstream's last propagation yielded, in order.
    public let expectedStems: [String]
    public let objectIDs: [Int]
    public let fillHoles: Bool
    public let fillHoleArea: Int
    public let correctionsAsConditioning: Bool
    /// Whether upstream ran with `non_overlap_masks` (the output logits constrained across objects).
    public let nonOverlappingMasks: Bool
    public let reverse: Bool
    public let startFrame: Int?
    public let maxFrames: Int?
    /// What reference.json says beyond the above (model, seed, versions), for the report.
    public let description: String

    /// Whether `folder` holds a video set (a reference.json beside frames/ and prompts.json).
    public static func isSet(at folder: String) -> Bool {
        let manager = FileManager.default
        return ["reference.json", "prompts.json", "frames"].allSatisfy { manager.fileExists(atPath: folder + "/" + $0) }
    }

    public init(folder: String) throws(VerifyError) {
        self.folder = folder
        func fail(_ message: String) -> VerifyError { VerifyError(.unreadableReferences, "\(folder): \(message)") }
        let record: [String: Any]
        do {
            let data = try Data(contentsOf: URL(fileURLWithPath: folder + "/reference.json"))
            guard let object = try JSONSerialization.jsonObject(with: data) as? [String: Any] else { throw fail("reference.json is not an object") }
            record = object
        } catch let error as VerifyError { throw error } catch { throw fail("reference.json: \(error)") }
        do { frames = try FrameFolder(folder + "/frames") } catch { throw fail("\(error)") }
        do { frameSize = try frames.checkSizes() } catch { throw fail("\(error)") }
        let promptsPath = folder + "/prompts.json"
        do { prompts = try TrackPromptFile.read(promptsPath, frameCount: frames.count, frameSize: frameSize) } catch { throw fail("\(error)") }
        var masks: [Int: [UInt8]] = [:]
        for (entry, prompt) in prompts.enumerated() {
            guard let name = prompt.maskFile else { continue }
            let image: RGBImage
            do { image = try ImageIO.read(TrackPromptFile.maskPath(name, promptsFile: promptsPath)) } catch { throw fail("\(error)") }
            guard image.size == frameSize else { throw fail("mask \(name) is \(image.size), the frames \(frameSize)") }
            masks[entry] = TrackPromptFile.mask(image)
        }
        self.masks = masks
        guard let stems = record["frames"] as? [String], !stems.isEmpty else { throw fail("reference.json lists no frames") }
        expectedStems = stems
        objectIDs = (record["objects"] as? [Int]) ?? []
        fillHoles = (record["fill_holes"] as? Bool) ?? false
        // The predictor's switch, as the set's config.json records the model that ran.
        var video: [String: Any] = [:]
        if let data = try? Data(contentsOf: URL(fileURLWithPath: folder + "/config.json")),
           let config = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] {
            video = config["video"] as? [String: Any] ?? [:]
        }
        func switchedOn(_ key: String) -> Bool { (record[key] as? Bool) ?? (video[key] as? Bool) ?? false }
        correctionsAsConditioning = switchedOn("add_all_frames_to_correct_as_cond")
        nonOverlappingMasks = switchedOn("non_overlap_masks")
        fillHoleArea = (record["fill_hole_area"] as? Int) ?? (video["fill_hole_area"] as? Int) ?? 8
        reverse = (record["reverse"] as? Bool) ?? false
        startFrame = record["start_frame"] as? Int
        maxFrames = record["max_frames"] as? Int
        description = ["model", "seed", "scenario"].compactMap { key in record[key].map { "\(key) \($0)" } }.joined(separator: ", ")
    }

    /// A reference tensor under `reference/`, or nil when the set has none.
    public func reference(_ relative: String) throws(VerifyError) -> FloatTensor? {
        let path = folder + "/reference/" + relative
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        do { return FloatTensor(try NPY.read(path)) } catch { throw VerifyError(.unreadableReferences, "\(path): \(error)") }
    }
}
