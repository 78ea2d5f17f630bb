import SAMKernels
import SAMTensor

/// sam2/modeling/backbones/image_encoder.py `FpnNeck`: a 1x1 conv per trunk level to d_model
/// (`convs.k.conv`; convs[0] takes the coarsest level), coarse to fine, where the levels in
/// `fpn_top_down_levels` add the nearest-upsampled level above them (fuse "sum").
package struct FpnNeck: Sendable {
    package static let key = "neck"

    package let path: String
    /// convs[k] takes level n - k (n = levels - 1): the coarsest first, as upstream lists them.
    package let convs: [NN.Conv2d]
    package let topDownLevels: Set<Int>
    package let positionEncoding: PositionEmbeddingSine

    package var dModel: Int { convs[0].outChannels }

    /// `channels[i]`: trunk level i's width, finest first.
    /// ref: image_encoder.py FpnNeck.__init__
    init(weights: WeightStore, path: String, channels: [Int], dModel: Int, topDownLevels: [Int]) throws(WeightError) {
        self.path = path
        let convsPath = "\(path).convs"
        let count = NN.childCount(convsPath, in: weights)
        try NN.requireConsistent(count, channels.count, field: "imageEncoder.stages (one neck conv each)", key: convsPath,
                                 source: weights.source)
        convs = try channels.reversed().enumerated().map { (index, width) throws(WeightError) in
            try NN.Conv2d(weights: weights, path: "\(convsPath).\(index).conv", inChannels: width, outChannels: dModel,
                          kernel: 1, stride: 1)
        }
        self.topDownLevels = Set(topDownLevels)
        positionEncoding = PositionEmbeddingSine(channels: dModel)
    }

    /// Trunk levels (NCHW, finest first) -> neck levels (finest first), the `keep` finest ones
    /// (`scalp` drops the rest; they are still computed where a kept level fuses them), from level
    /// `first` on: top-down fusion runs coarse to fine, so levels below `first` are simply not made.
    /// ref: image_encoder.py FpnNeck.forward
    package func callAsFunction(_ levels: [FloatTensor], keep: Int, from first: Int = 0,
                               observer: ModuleObserver? = nil) -> [FloatTensor] {
        precondition(first >= 0 && first < keep, "neck: levels from \(first) of the \(keep) kept")
        let n = convs.count - 1
        var outputs = [FloatTensor?](repeating: nil, count: convs.count)
        var previous: FloatTensor?
        for level in stride(from: n, through: first, by: -1) {
            // Levels finer than any kept one that fuses nothing from them are still needed top-down.
            let conv = convs[n - level]
            var lateral = conv(levels[level], observer: observer)
            observer?("\(path).convs.\(n - level)", lateral)
            if topDownLevels.contains(level), let previous {
                // ref: forward — prev_features = lateral_features + F.interpolate(prev, scale_factor=2.0, mode="nearest")
                Kernels.addUpsampledNearest(&lateral, previous)
            }
            previous = lateral
            if let observer {
                observer("\(path).position_encoding",
                         positionEncoding(batch: lateral.shape[0], height: lateral.shape[2], width: lateral.shape[3]))
            }
            if level < keep { outputs[level] = lateral }
        }
        return outputs[first..<keep].map { $0! }
    }
}
