import Foundation
import SAMImage
import SAMImageFiles
import SAMPipeline

/// prompts.json read and checked against the clip, its mask PNGs loaded: everything wrong with it
/// is found before tracking starts.
struct PromptsFile {
    let path: String
    let prompts: [TrackPrompt]
    /// Per entry, its mask (frame-sized, 1 inside) when it has one.
    let masks: [[UInt8]?]
    /// The mask files read (outputs may not overwrite them).
    let maskFiles: [String]

    init(path: String, frameCount: Int, frameSize: ImageSize, limits: ImageLimits) throws {
        self.path = path
        let prompts = try TrackPromptFile.read(path, frameCount: frameCount, frameSize: frameSize)
        var masks: [[UInt8]?] = [], files: [String] = []
        for (entry, prompt) in prompts.enumerated() {
            guard let name = prompt.maskFile else {
                masks.append(nil)
                continue
            }
            let file = TrackPromptFile.maskPath(name, promptsFile: path)
            let image = try ImageIO.read(file, limits: limits)
            guard image.size == frameSize else {
                throw TrackFailure("\(path): entry \(entry): mask \(file) is \(image.size), the frames are \(frameSize)")
            }
            masks.append(TrackPromptFile.mask(image))
            files.append(file)
        }
        self.prompts = prompts
        self.masks = masks
        maskFiles = files
    }
}
