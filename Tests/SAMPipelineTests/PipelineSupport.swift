import Foundation
import SAMConvert
import SAMFormats
import SAMImage
import SAMImageFiles
import SAMPipeline
import SAMTensor
import SAMTestSupport

/// Shared by the pipeline tests: a converted tiny model and the tiny set's photo.
enum TinyPipeline {
    static let references = TestPaths.tinyReferences + "/references"

    static func folder() throws -> String { try TestPaths.temporaryFolder("sampipeline") }

    /// The committed tiny model converted to a .samw in `folder`.
    static func model(in folder: String) throws -> String { try TestModels.tiny(in: folder) }

    /// The tiny set's photo (its `resized_image.npy`, already at the 128 input's long side) as a PNG in `folder`.
    static func photo(in folder: String) throws -> String {
        let pixels = try NPY.read(references + "/resized_image.npy")
        let image = try RGBImage(width: pixels.shape[1], height: pixels.shape[0], pixels: Array(pixels.storage.bytes))
        let path = folder + "/photo.png"
        try ImageIO.writePNG(image, to: path)
        return path
    }

    static func tensor(_ caseName: String, _ name: String) throws -> FloatTensor {
        FloatTensor(try NPY.read("\(references)/\(caseName)/\(name).npy"))
    }

    static func has(_ caseName: String, _ name: String) -> Bool {
        FileManager.default.fileExists(atPath: "\(references)/\(caseName)/\(name).npy")
    }

    /// A case's prompt as SamPredictor.predict got it (original-image pixels).
    static func prompt(root: String, caseName: String) throws -> Prompt {
        func load(_ name: String) throws -> FloatTensor? {
            let path = "\(root)/references/\(caseName)/\(name).npy"
            return FileManager.default.fileExists(atPath: path) ? FloatTensor(try NPY.read(path)) : nil
        }
        var prompt = Prompt()
        if let coords = try load("point_coords"), let labels = try load("point_labels") {
            let count = labels.count
            prompt.points = (0..<count).map { Prompt.Point(x: coords.data[2 * $0], y: coords.data[2 * $0 + 1], label: Int(labels.data[$0])) }
        }
        if let box = try load("box") {
            prompt.box = Prompt.Box(x0: box.data[0], y0: box.data[1], x1: box.data[2], y1: box.data[3])
        }
        prompt.maskInput = try load("mask_input")
        return prompt
    }
}
