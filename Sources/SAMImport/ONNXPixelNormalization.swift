import SAMFormats
import SAMTensor

/// Encoder exports that normalise the image in their graph (samexporter's `--use-preprocess`:
/// `(x - pixel_mean) / pixel_std` on an [H, W, 3] input, then permute and pad) hold the pixel
/// statistics as two 3-element constants. They are facts about preprocessing, not weights: recorded
/// in `ImportFacts.inGraphNormalization` and checked against the model's configured preprocessing
/// when the model is converted.
/// ref: samexporter/onnx_utils.py ImageEncoderOnnxModel.preprocess
extension ONNXWeightMapper {
    /// Recognises `stored` as the mean subtracted from, or the std dividing, a graph input.
    mutating func recognisePixelNormalization(_ stored: ONNXInitializer, uses: [ONNXUse]) throws(ImportError) -> Bool {
        guard !uses.isEmpty, let channelAxis = channelAxis(of: stored) else { return false }
        let inputs = Dictionary(model.graph.realInputs.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        func isImage(_ value: String) -> Bool {
            guard let dims = inputs[value]?.dims, dims.count >= channelAxis else { return false }
            return dims[dims.count - channelAxis] == .fixed(3)
        }
        let isMean = uses.allSatisfy { $0.node.opType == "Sub" && $0.input == 1 && isImage($0.node.inputs[0]) }
        let isStd = uses.allSatisfy { use in
            use.node.opType == "Div" && use.input == 1
                && producer(of: use.node.inputs[0]).map { $0.opType == "Sub" && isImage($0.inputs[0]) } == true
        }
        guard isMean || isStd else { return false }
        let tensor = try read(stored.name)
        let values = (0..<3).map { tensor.value(at: $0) }
        var normalization = result.facts.inGraphNormalization ?? InGraphNormalization(file: file)
        if isMean {
            normalization.pixelMean = values
            normalization.meanTensor = stored.name
        } else {
            normalization.pixelStd = values
            normalization.stdTensor = stored.name
        }
        result.facts.inGraphNormalization = normalization
        return true
    }

    /// Counted from the right, the one axis of a 3-element per-channel constant ([3], [1,1,3],
    /// [3,1,1], [1,3,1,1]); nil for any other shape.
    private func channelAxis(of stored: ONNXInitializer) -> Int? {
        guard (try? Shape.elementCount(stored.shape)) == 3 else { return nil }
        guard let axis = stored.shape.lastIndex(of: 3) else { return nil }
        return stored.shape.count - axis
    }

    /// The node that outputs `value`.
    private func producer(of value: String) -> ONNXNode? {
        index.nodes.first { $0.outputs.contains(value) }
    }
}

/// The pixel statistics an encoder export applies inside its graph, and the constants that hold them.
public struct InGraphNormalization: Sendable, Equatable, CustomStringConvertible {
    public var file: String
    public var pixelMean: [Double]?
    public var meanTensor: String?
    public var pixelStd: [Double]?
    public var stdTensor: String?

    public init(file: String) { self.file = file }

    public var description: String {
        "\(file): pixel mean \(pixelMean.map { "\($0)" } ?? "none") ('\(meanTensor ?? "-")'), "
            + "std \(pixelStd.map { "\($0)" } ?? "none") ('\(stdTensor ?? "-")')"
    }
}
