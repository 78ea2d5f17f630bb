import SAMKernels
@testable import SAMModel
import SAMTensor
import Testing

/// The decoder's cross attentions with the image-side projections folded into the prompt tokens
/// (`TwoWayTransformer.Attention.Folding`) against the same modules with every projection applied:
/// the routing and the weights each fold reads, on a decoder whose 16-wide head folds for a few tokens.
@Suite("Mask decoder: folded cross-attention projections")
struct AttentionFoldingTests {
    let decoder: MaskDecoder
    init() throws { decoder = try SyntheticDecoder.foldingMaskDecoder() }

    @Test("a few prompt tokens over many image tokens fold; as many tokens as the head is wide do not")
    func routes() {
        let block = decoder.transformer.layers[1]
        typealias Folding = TwoWayTransformer.Attention.Folding
        #expect(Folding(attention: block.crossAttnTokenToImage, queryLength: 7, keyLength: 576) == .keyValue)
        #expect(Folding(attention: block.crossAttnTokenToImage, queryLength: 16, keyLength: 576) == .none)
        #expect(Folding(attention: block.crossAttnImageToToken, queryLength: 576, keyLength: 8) == .queryOutput)
        #expect(Folding(attention: block.crossAttnImageToToken, queryLength: 576, keyLength: 9) == .none)
        // Self attention over the prompt tokens: neither side is longer.
        #expect(Folding(attention: block.selfAttn, queryLength: 7, keyLength: 7) == .none)
    }

    /// Largest |folded - projected| over max(1, |projected|).
    static func largestDifference(_ a: FloatTensor, _ b: FloatTensor) -> Float {
        zip(a.data, b.data).map { abs($0 - $1) / max(1, abs($1)) }.max() ?? .infinity
    }

    // The two orders differ by float32 rounding: measured at most 1.2e-7 here (one ulp near 1);
    // 1e-6 leaves room for other BLAS kernels and still fails on any wrong weight or bias.
    @Test("folded and projected attention agree to float32 rounding", arguments: [6, 8])
    func foldedEqualsProjected(tokens: Int) {
        var random = SyntheticDecoder.Random(state: UInt64(tokens))
        let block = decoder.transformer.layers[1]
        let prompt = random.tensor([1, tokens, 16], scale: 1), image = random.tensor([1, 576, 16], scale: 1)
        let imageValues = random.tensor([1, 576, 16], scale: 1), residual = random.tensor([1, 576, 16], scale: 1)
        let tokenToImage = block.crossAttnTokenToImage
        let foldedQueries = tokenToImage(q: prompt, k: image, v: imageValues, plusResidual: prompt)
        let projectedQueries = tokenToImage(q: prompt, k: image, v: imageValues, plusResidual: prompt, folding: false)
        let imageToToken = block.crossAttnImageToToken
        let foldedImage = imageToToken(q: image, k: prompt, v: prompt, plusResidual: residual)
        let projectedImage = imageToToken(q: image, k: prompt, v: prompt, plusResidual: residual, folding: false)
        let differences = (Self.largestDifference(foldedQueries, projectedQueries), Self.largestDifference(foldedImage, projectedImage))
        print("[folding, \(tokens) tokens] token-to-image \(differences.0), image-to-token \(differences.1)")
        #expect(foldedQueries.shape == projectedQueries.shape && foldedImage.shape == projectedImage.shape)
        #expect(differences.0 < 1e-6 && differences.1 < 1e-6, "\(differences)")
    }

    @Test("an observer sees the projections and does not change the folded outputs")
    func observerKeepsOutputs() {
        var random = SyntheticDecoder.Random(state: 3)
        let attention = decoder.transformer.layers[1].crossAttnImageToToken
        let image = random.tensor([1, 576, 16], scale: 1), prompt = random.tensor([1, 6, 16], scale: 1)
        var seen: [String] = []
        let observed = attention(q: image, k: prompt, v: prompt, plusResidual: image, observer: { path, _ in seen.append(path) })
        let plain = attention(q: image, k: prompt, v: prompt, plusResidual: image)
        #expect(observed.isBitwiseEqual(to: plain))
        let path = attention.path
        #expect(seen == ["\(path).q_proj", "\(path).k_proj", "\(path).v_proj", "\(path).out_proj", path])
    }
}
