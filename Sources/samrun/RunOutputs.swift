import Foundation
import SAMFiles
import SAMFormats
import SAMImage
import SAMImageFiles
import SAMKernels
import SAMPipeline
import SAMTensor

/// Everything samrun writes. Files are made in a staging folder beside `folder` and then published
/// together (`StagedFolder`): a new folder appears in one rename; in an existing one each file replaces
/// its name, earlier outputs this run does not make are taken away, and a failure part-way puts back
/// what was there, so the folder never holds a mix of two runs.
struct RunOutputs {
    /// The names samrun writes into its folder for a model whose features are `featureNames`
    /// (each as `.npy`, the first with its `.json` record): `ownedNames` and those.
    static func ownedNames(featureNames: [String]) -> [String] {
        let features = featureNames.map { $0 + ".npy" } + featureNames.prefix(1).map { $0 + ".json" }
        return ownedNames + features.filter { !ownedNames.contains($0) }
    }

    /// Every name samrun writes into its folder for the plain families (SAM's features or SAM 2's).
    static let ownedNames = ["image_embeddings.npy", "image_embeddings.json", "image_embed.npy", "image_embed.json",
                             "high_res_feats_0.npy", "high_res_feats_1.npy", "low_res_masks.npy", "iou_predictions.npy",
                             "mask_0.png", "mask_1.png", "mask_2.png", "mask_3.png", "overlay.png", "result.json"]

    /// The files of a cached run's features: `given` for the first map, the others (SAM 2's
    /// high-resolution maps) under their names beside it.
    static func featureFiles(given: String, names: [String]) -> [String] {
        let folder = URL(fileURLWithPath: given).deletingLastPathComponent().path
        return [given] + names.dropFirst().map { folder + "/" + $0 + ".npy" }
    }

    let folder: String
    let policy: OutputPolicy
    let predictor: SegmentAnything
    let photo: RGBImage
    let prompt: Prompt
    let prediction: Prediction
    let timings: [String: Double]
    let reusedEmbeddings: Bool
    var profile: [String: Any]? = nil

    func write() throws(RunFailure) {
        let owned = Self.ownedNames(featureNames: predictor.model.metadata.config.featureNames)
        let staged = try RunFailure.wrap { try StagedFolder(folder: folder, ownedNames: owned, policy: policy) }
        let names = try RunFailure.wrap { try stage(in: staged) }
        try RunFailure.wrap { try staged.publish(names) }
    }

    /// Writes every output into the staging folder; returns their names.
    private func stage(in staged: StagedFolder) throws -> [String] {
        var names: [String] = []
        if let features = predictor.features {
            let featureNames = predictor.model.metadata.config.featureNames
            for (map, name) in zip(features.maps, featureNames) {
                try NPY.write(map.tensor, to: staged.path(name + ".npy"))
                names.append(name + ".npy")
            }
            if let provenance = predictor.embeddingsProvenance, let first = featureNames.first {
                try AtomicFile.write(Array(try provenance.encoded()), to: staged.path(first + ".json"))
                names.append(first + ".json")
            }
        }
        try NPY.write(prediction.lowResLogits.tensor, to: staged.path("low_res_masks.npy"))
        try NPY.write(Tensor(shape: [1, prediction.iouPredictions.count], floats: prediction.iouPredictions), to: staged.path("iou_predictions.npy"))
        names += ["low_res_masks.npy", "iou_predictions.npy"]
        for (position, index) in prediction.selected.enumerated() {
            let name = "mask_\(index).png"
            try ImageIO.writeGrayPNG(pixels: prediction.masks.grayPixels(position), width: photo.width, height: photo.height, to: staged.path(name))
            names.append(name)
        }
        let bestPosition = prediction.bestPosition
        let overlay = try Overlay.render(photo, mask: prediction.masks.mask(bestPosition),
                                     points: prompt.points.map { Overlay.Point(x: Double($0.x), y: Double($0.y), label: $0.label) },
                                     box: prompt.box.map { Overlay.Box(x0: Double($0.x0), y0: Double($0.y0), x1: Double($0.x1), y1: Double($0.y1)) })
        try ImageIO.writePNG(overlay, to: staged.path("overlay.png"))
        names.append("overlay.png")
        try AtomicFile.write(Array(try resultJSON()), to: staged.path("result.json"))
        names.append("result.json")
        return names
    }

    private func resultJSON() throws -> Data {
        let masks: [[String: Any]] = prediction.selected.enumerated().map { position, index in
            ["index": index, "score": Double(prediction.iouPredictions[index]), "area": prediction.masks.area(position), "file": "mask_\(index).png"]
        }
        var object: [String: Any] = [
            "model": predictor.model.file.path,
            "model_identity": predictor.modelIdentity,
            "image": ["width": photo.width, "height": photo.height],
            "input_size": ["height": predictor.inputSize?.height ?? 0, "width": predictor.inputSize?.width ?? 0],
            "iou_predictions": prediction.iouPredictions.map(Double.init),
            "masks": masks,
            "best": prediction.best,
            "reused_embeddings": reusedEmbeddings,
            "seconds": timings,
            "linear_precision": Kernels.linearPrecision.rawValue,
            "int8_products": Kernels.int8Products,
            // SAM_CPU_CAP (none, avx512, avx2): which CPU's kernels made it.
            "cpu_cap": CPUCap.current.rawValue,
            // How the file stores its weights (f32, f16, int8, q4): with the two flags above, what ran.
            "weight_dtype": predictor.model.metadata.weightDType,
        ]
        if let provenance = predictor.embeddingsProvenance {
            object["embeddings_computed_from"] = [
                "original_size": ["width": provenance.originalSize.width, "height": provenance.originalSize.height],
                "input_size": ["width": provenance.inputSize.width, "height": provenance.inputSize.height],
                "model_identity": provenance.modelIdentity,
                "linear_precision": provenance.linearPrecision ?? Kernels.LinearPrecision.float32.rawValue,
                "feature_sha256": provenance.featureDigests ?? [:],
            ] as [String: Any]
        } else {
            object["embeddings_computed_from"] = NSNull()
        }
        if let profile { object["profile"] = profile }
        let options = predictor.predictorOptions.flags.sorted()
        if !options.isEmpty { object["predictor_options"] = options }
        if let logit = prediction.objectScoreLogit { object["object_score_logit"] = Double(logit) }
        // Every number here is finite: the pipeline refuses NaN or infinite outputs at the stage that made them.
        return try JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys])
    }
}
