import Foundation
import SAMImage
import SAMModel

/// A prompts file from disk, and its masks as the tracker takes them: what `samtrack` and a video
/// reference set both read.
extension TrackPromptFile {
    /// `path` read (a regular file of at most `limits.maxFileBytes`, refused from its size before
    /// reading), parsed and checked against the clip.
    public static func read(_ path: String, frameCount: Int, frameSize: ImageSize, limits: TrackLimits = .default) throws -> [TrackPrompt] {
        let data = try ConfigFile.contents(of: path, limit: limits.maxFileBytes, what: "a prompts file")
        let prompts = try parse([UInt8](data), source: path, limits: limits)
        try validate(prompts, frameCount: frameCount, frameSize: frameSize, limits: limits, source: path)
        return prompts
    }

    /// Where an entry's mask file is: the name as written when absolute, else beside the prompts file.
    public static func maskPath(_ name: String, promptsFile: String) -> String {
        let folder = (promptsFile as NSString).deletingLastPathComponent
        return name.hasPrefix("/") || folder.isEmpty ? name : folder + "/" + name
    }

    /// A mask image as the tracker takes it, row-major: 1 where a channel is 128 or more, else 0.
    public static func mask(_ image: RGBImage) -> [UInt8] {
        (0..<(image.width * image.height)).map { pixel in
            let base = pixel * 3
            return image.pixels[base] >= 128 || image.pixels[base + 1] >= 128 || image.pixels[base + 2] >= 128 ? 1 : 0
        }
    }
}
