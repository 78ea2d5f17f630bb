import Foundation
import SAMFiles
import SAMImage
import SAMImageFiles
import SAMPipeline

/// prompts.json read and checked against the clip, its mask PNGs loaded: everything wrong with it
/// is found before tracking starts.
struct PromptsFile {
    /// The most a prompts file may weigh.
    static let maxBytes = 16 << 20

    let path: String
    let prompts: [TrackPrompt]
    /// Per entry, its mask (frame-sized, 1 inside) when it has one.
    let masks: [[UInt8]?]
    /// The mask files read (outputs may not overwrite them).
    let maskFiles: [String]

    init(path: String, frameCount: Int, frameSize: ImageSize, limits: ImageLimits) throws {
        self.path = path
        try RegularFile.require(path, role: "--prompts")
        guard let handle = FileHandle(forReadingAtPath: path) else { throw TrackFailure("\(path): cannot open the prompts file") }
        defer { try? handle.close() }
        let data = try handle.read(upToCount: Self.maxBytes + 1) ?? Data()
        guard data.count <= Self.maxBytes else { throw TrackFailure("\(path): larger than \(Self.maxBytes >> 20) MiB; not a prompts file") }
        let bytes = [UInt8](data)
        let prompts = try TrackPromptFile.parse(bytes, source: path)
        try TrackPromptFile.validate(prompts, frameCount: frameCount, frameSize: frameSize, source: path)
        let folder = (path as NSString).deletingLastPathComponent
        var masks: [[UInt8]?] = [], files: [String] = []
        for (entry, prompt) in prompts.enumerated() {
            guard let name = prompt.maskFile else {
                masks.append(nil)
                continue
            }
            let file = name.hasPrefix("/") ? name : (folder.isEmpty ? name : folder + "/" + name)
            let image = try ImageIO.read(file, limits: limits)
            guard image.size == frameSize else {
                throw TrackFailure("\(path): entry \(entry): mask \(file) is \(image.size), the frames are \(frameSize)")
            }
            var mask = [UInt8](repeating: 0, count: image.width * image.height)
            for pixel in mask.indices {
                let base = pixel * 3
                if image.pixels[base] >= 128 || image.pixels[base + 1] >= 128 || image.pixels[base + 2] >= 128 { mask[pixel] = 1 }
            }
            masks.append(mask)
            files.append(file)
        }
        self.prompts = prompts
        self.masks = masks
        maskFiles = files
    }
}
