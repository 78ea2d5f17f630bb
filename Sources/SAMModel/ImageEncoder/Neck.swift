import SAMKernels
import SAMTensor

extension TinyViT {
    package typealias Neck = ImageEncoderNeck
}

/// SAM's neck on the encoder's last map (the same in SAM ViT and MobileSAM's TinyViT): 1x1 conv
/// (no bias) to neckDim, LayerNorm2d, 3x3 conv pad 1 (no bias), LayerNorm2d — `neck.0` ... `neck.3`
/// of an nn.Sequential.
// ref: tiny_vit_sam.py TinyViT.__init__ (L536-552); segment_anything image_encoder.py ImageEncoderViT.__init__
package struct ImageEncoderNeck: Sendable {
    package static let key = "neck"
    package let path: String
    /// `neck.0.weight` [neckDim, inDim, 1, 1]
    package let conv1: FloatTensor
    package let norm1: NN.LayerNorm2d
    /// `neck.2.weight` [neckDim, neckDim, 3, 3]
    package let conv2: FloatTensor
    package let norm2: NN.LayerNorm2d

    package var outChannels: Int { conv1.shape[0] }

    init(weights: WeightStore, path: String, inChannels: Int) throws(WeightError) {
        self.path = path
        let key = "\(path).0.weight"
        let out = try weights.requireShape(key).first ?? 0  // a malformed shape then fails the take below
        conv1 = try weights.take(key, shape: [out, inChannels, 1, 1])
        norm1 = try NN.LayerNorm2d(weights: weights, path: "\(path).1", channels: out)
        conv2 = try weights.take("\(path).2.weight", shape: [out, out, 3, 3])
        norm2 = try NN.LayerNorm2d(weights: weights, path: "\(path).3", channels: out)
    }

    /// NCHW [B, inDim, H, W] -> [B, neckDim, H, W]
    // ref: tiny_vit_sam.py TinyViT.forward_features (L613, self.neck(x))
    package func callAsFunction(_ x: FloatTensor, observer: ModuleObserver? = nil) -> FloatTensor {
        var y = Kernels.conv2d(x, weight: conv1, bias: nil)
        observer?("\(path).0", y)
        norm1(&y, observer: observer)          // tiny_vit_sam.py LayerNorm2d.forward (L456-461), eps 1e-6
        y = Kernels.conv2d(y, weight: conv2, bias: nil, stride: 1, padding: 1)
        observer?("\(path).2", y)
        norm2(&y, observer: observer)
        observer?(path, y)
        return y
    }
}
