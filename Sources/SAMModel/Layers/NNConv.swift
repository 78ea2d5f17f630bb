import SAMKernels
import SAMTensor

extension NN {
    /// `nn.Conv2d` without groups: weight [out, in, kh, kw], bias [out].
    package struct Conv2d: Sendable {
        package let path: String
        package let weight: FloatTensor
        package let bias: FloatTensor
        package let stride: Int
        /// Zeros added on every side (nn.Conv2d's `padding`).
        package let padding: Int

        package var inChannels: Int { weight.shape[1] }
        package var outChannels: Int { weight.shape[0] }

        /// Loads `path.weight` [out, in, kernel, kernel] and `path.bias` [out]; nil widths come from the weight.
        package init(weights: WeightStore, path: String, inChannels: Int?, outChannels: Int?,
                    kernel: Int, stride: Int, padding: Int = 0) throws(WeightError) {
            self.path = path
            weight = try NN.take("\(path).weight", shape: [outChannels, inChannels, kernel, kernel], from: weights)
            bias = try weights.take("\(path).bias", shape: [weight.shape[0]])
            self.stride = stride
            self.padding = padding
        }

        /// `outer` after `inner`, both 1x1 with stride 1 and no padding, as one 1x1 conv (named
        /// `outer`'s path): W = W_outer W_inner, b = W_outer b_inner + b_outer, summed in float64 and
        /// rounded once. Exact algebra; only the rounding of the sums differs from running both.
        package static func composed(_ outer: Conv2d, after inner: Conv2d) -> Conv2d {
            precondition(outer.weight.shape.dropFirst(2) == [1, 1] && inner.weight.shape.dropFirst(2) == [1, 1]
                         && outer.stride == 1 && inner.stride == 1 && outer.padding == 0 && inner.padding == 0
                         && outer.inChannels == inner.outChannels,
                         "conv composition: \(outer.path) \(outer.weight.shape) after \(inner.path) \(inner.weight.shape)")
            let (outs, mids, ins) = (outer.outChannels, inner.outChannels, inner.inChannels)
            var weight = [Float](repeating: 0, count: outs * ins), bias = [Float](repeating: 0, count: outs)
            for o in 0..<outs {
                var row = [Double](repeating: 0, count: ins)
                var b = Double(outer.bias.data[o])
                for m in 0..<mids {
                    let w = Double(outer.weight.data[o * mids + m])
                    b += w * Double(inner.bias.data[m])
                    for i in 0..<ins { row[i] += w * Double(inner.weight.data[m * ins + i]) }
                }
                for i in 0..<ins { weight[o * ins + i] = Float(row[i]) }
                bias[o] = Float(b)
            }
            return Conv2d(path: outer.path, weight: FloatTensor(shape: [outs, ins, 1, 1], data: weight),
                          bias: FloatTensor(shape: [outs], data: bias), stride: 1, padding: 0)
        }

        private init(path: String, weight: FloatTensor, bias: FloatTensor, stride: Int, padding: Int) {
            (self.path, self.weight, self.bias, self.stride, self.padding) = (path, weight, bias, stride, padding)
        }

        /// ref: torch.nn.Conv2d.forward (zero padding)
        package func callAsFunction(_ x: FloatTensor, observer: ModuleObserver? = nil) -> FloatTensor {
            let y = Kernels.conv2d(x, weight: weight, bias: bias, stride: stride, padding: padding)
            observer?(path, y)
            return y
        }
    }

    /// `nn.ConvTranspose2d` with kernel == stride (no overlap, no padding): weight [in, out, kh, kw], bias [out].
    package struct ConvTranspose2d: Sendable {
        package let path: String
        package let weight: FloatTensor
        package let bias: FloatTensor
        package let stride: Int

        package var inChannels: Int { weight.shape[0] }
        package var outChannels: Int { weight.shape[1] }

        /// Loads `path.weight` [in, out, kernel, kernel] and `path.bias` [out]; nil widths come from the weight.
        package init(weights: WeightStore, path: String, inChannels: Int?, outChannels: Int?,
                    kernel: Int, stride: Int) throws(WeightError) {
            self.path = path
            weight = try NN.take("\(path).weight", shape: [inChannels, outChannels, kernel, kernel], from: weights)
            bias = try weights.take("\(path).bias", shape: [weight.shape[1]])
            self.stride = stride
        }

        /// ref: torch.nn.ConvTranspose2d.forward, then `epilogue` (the activation that follows
        /// upstream), fused unless an observer wants the output before it.
        package func callAsFunction(_ x: FloatTensor, then epilogue: Kernels.Epilogue = .none,
                                   observer: ModuleObserver? = nil) -> FloatTensor {
            guard let observer else { return Kernels.convTranspose2d(x, weight: weight, bias: bias, stride: stride, epilogue: epilogue) }
            var y = Kernels.convTranspose2d(x, weight: weight, bias: bias, stride: stride)
            observer(path, y)
            Kernels.applyEpilogue(epilogue, to: &y)
            return y
        }
    }
}
