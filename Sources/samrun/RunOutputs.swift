import Foundation
import SAMFormats
import SAMImage
import SAMPipeline
import SAMTensor

/// Everything samrun writes. Files are made in a staging folder next to `folder` and then renamed
/// into it one by one, so a failure never leaves a half-written file behind.
struct RunOutputs {
    let folder: String
    let predictor: SegmentAnything
    let photo: RGBImage
    let prompt: Prompt
    let prediction: Prediction
    let timings: [String: Double]
    let reusedEmbeddings: Bool
    var profile: [String: Any]? = nil

    func write() throws(RunFailure) {
        let fileManager = FileManager.default
        let staging = (folder as NSString).standardizingPath + ".staging-\(getpid())"
        try RunFailure.wrap {
            try fileManager.createDirectory(atPath: staging, withIntermediateDirectories: true)
        }
        defer { try? fileManager.removeItem(atPath: staging) }
        let files = try RunFailure.wrap { try stage(in: staging) }
        try RunFailure.wrap {
            try fileManager.createDirectory(atPath: folder, withIntermediateDirectories: true)
            for name in files {
                let target = (folder as NSString).appendingPathComponent(name)
                if fileManager.fileExists(atPath: target) { try fileManager.removeItem(atPath: target) }
                try fileManager.moveItem(atPath: (staging as NSString).appendingPathComponent(name), toPath: target)
            }
        }
    }

    /// Writes every output into `staging`; returns their names.
    private func stage(in staging: String) throws -> [String] {
        func path(_ name: String) -> String { (staging as NSString).appendingPathComponent(name) }
        var names: [String] = []
        if let embeddings = predictor.embeddings {
            try NPY.write(embeddings.tensor, to: path("image_embeddings.npy"))
            names.append("image_embeddings.npy")
        }
        try NPY.write(prediction.lowResLogits.tensor, to: path("low_res_masks.npy"))
        try NPY.write(Tensor(shape: [1, prediction.iouPredictions.count], floats: prediction.iouPredictions), to: path("iou_predictions.npy"))
        names += ["low_res_masks.npy", "iou_predictions.npy"]
        for (position, index) in prediction.selected.enumerated() {
            let name = "mask_\(index).png"
            try ImageIO.writeGrayPNG(pixels: prediction.masks.grayPixels(position), width: photo.width, height: photo.height, to: path(name))
            names.append(name)
        }
        let bestPosition = prediction.selected.firstIndex(of: prediction.best) ?? 0
        let overlay = try Overlay.render(photo, mask: prediction.masks.mask(bestPosition),
                                     points: prompt.points.map { Overlay.Point(x: Double($0.x), y: Double($0.y), label: $0.label) },
                                     box: prompt.box.map { Overlay.Box(x0: Double($0.x0), y0: Double($0.y0), x1: Double($0.x1), y1: Double($0.y1)) })
        try ImageIO.writePNG(overlay, to: path("overlay.png"))
        names.append("overlay.png")
        try resultJSON().write(to: URL(fileURLWithPath: path("result.json")))
        names.append("result.json")
        return names
    }

    private func resultJSON() throws -> Data {
        let masks: [[String: Any]] = prediction.selected.enumerated().map { position, index in
            ["index": index, "score": Double(prediction.iouPredictions[index]), "area": prediction.masks.area(position), "file": "mask_\(index).png"]
        }
        var object: [String: Any] = [
            "model": predictor.model.file.path,
            "image": ["width": photo.width, "height": photo.height],
            "input_size": ["height": predictor.inputSize?.height ?? 0, "width": predictor.inputSize?.width ?? 0],
            "iou_predictions": prediction.iouPredictions.map(Double.init),
            "masks": masks,
            "best": prediction.best,
            "reused_embeddings": reusedEmbeddings,
            "seconds": timings,
        ]
        if let profile { object["profile"] = profile }
        return try JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys])
    }
}
