import Foundation
import SAMFiles
import SAMFormats
import SAMImage
import SAMImageFiles
import SAMPipeline
import SAMTensor

/// samtrack's output folder: masks/, logits/, overlay/ and result.json, written into a staging folder
/// frame by frame and published together at the end (nothing appears if tracking fails). Frames are
/// written by one thread at a time (`OutputWriter`'s), `finish` once they all are.
final class TrackOutputs: @unchecked Sendable {
    static let ownedNames = ["masks", "logits", "overlay", "result.json"]
    /// Object colours, cycled by position in the ascending id order.
    static let palette: [Overlay.Color] = [
        Overlay.Color(30, 144, 255), Overlay.Color(255, 127, 14), Overlay.Color(44, 160, 44), Overlay.Color(214, 39, 40),
        Overlay.Color(148, 103, 189), Overlay.Color(140, 86, 75), Overlay.Color(227, 119, 194), Overlay.Color(188, 189, 34),
    ]

    let staged: StagedFolder
    let stems: [String]
    let writeLogits: Bool
    var frames: [[String: Any]] = []

    init(folder: String, inputs: [String], stems: [String], writeLogits: Bool) throws {
        staged = try StagedFolder(folder: folder, ownedNames: Self.ownedNames, policy: OutputPolicy(existing: .replace, inputs: inputs, option: "--out"))
        self.stems = stems
        self.writeLogits = writeLogits
        for name in ["masks", "overlay"] + (writeLogits ? ["logits"] : []) {
            try FileManager.default.createDirectory(atPath: staged.path(name), withIntermediateDirectories: false)
        }
    }

    /// One tracked frame's files; `image` is the frame, for the overlay.
    func write(_ frame: TrackedFrame, image: RGBImage, prompts: [TrackPrompt]) throws {
        let stem = stems[frame.frameIndex]
        let height = frame.logits.shape[2], width = frame.logits.shape[3], plane = height * width
        try FileManager.default.createDirectory(atPath: staged.path("masks/\(stem)"), withIntermediateDirectories: false)
        var overlay = image
        var areas: [Int] = []
        for (index, id) in frame.objectIDs.enumerated() {
            let logits = frame.logits.data[(index * plane)..<((index + 1) * plane)]
            let pixels = logits.map { $0 > 0 ? UInt8(255) : 0 }
            areas.append(pixels.reduce(0) { $0 + ($1 != 0 ? 1 : 0) })
            try ImageIO.writeGrayPNG(pixels: pixels, width: width, height: height, to: staged.path("masks/\(stem)/object_\(id).png"))
            overlay = try Overlay.render(overlay, mask: pixels[...], color: Self.palette[index % Self.palette.count])
        }
        let here = prompts.filter { $0.frame == frame.frameIndex }
        for prompt in here {
            overlay = try Overlay.render(overlay, points: prompt.points.map { Overlay.Point(x: Double($0.x), y: Double($0.y), label: $0.label) },
                                         box: prompt.box.map { Overlay.Box(x0: Double($0.x0), y0: Double($0.y0), x1: Double($0.x1), y1: Double($0.y1)) })
        }
        try ImageIO.writePNG(overlay, to: staged.path("overlay/\(stem).png"))
        if writeLogits { try NPY.write(frame.logits.tensor, to: staged.path("logits/\(stem).npy")) }
        frames.append(["frame": frame.frameIndex, "stem": stem, "objects": frame.objectIDs,
                       "object_score_logits": frame.objectScores.map(Double.init), "mask_areas": areas])
    }

    /// result.json, then every output put in place.
    func finish(prompts: PromptsFile, model: String, options: [String: Any]) throws {
        let entries: [[String: Any]] = prompts.prompts.map { prompt in
            var entry: [String: Any] = ["frame": prompt.frame, "object": prompt.object, "round": prompt.round]
            if !prompt.points.isEmpty { entry["points"] = prompt.points.map { [Double($0.x), Double($0.y), Double($0.label)] } }
            if let box = prompt.box { entry["box"] = [box.x0, box.y0, box.x1, box.y1].map(Double.init) }
            if let mask = prompt.maskFile { entry["mask"] = mask }
            return entry
        }
        let result: [String: Any] = ["model": model, "frames": frames, "prompts": entries,
                                     "options": options]
        let data = try JSONSerialization.data(withJSONObject: result, options: [.prettyPrinted, .sortedKeys])
        try AtomicFile.write(Array(data), to: staged.path("result.json"))
        try staged.publish(Self.ownedNames.filter { writeLogits || $0 != "logits" })
    }
}
