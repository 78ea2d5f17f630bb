import SAMKernels
@testable import SAMModel
import SAMTensor
import Testing

/// The decoder's per-image state: prompts decoded with it give the same bits as without it, and
/// it is really used (not silently recomputed) when the prompt has no mask.
@Suite("Mask decoder: work kept per image")
struct DecoderImageStateTests {
    let decoder: MaskDecoder
    init() throws { decoder = try SyntheticDecoder.maskDecoder() }

    /// Image embeddings and positional encoding of side `g`, a no-mask dense embedding, random prompts.
    func image(side g: Int, seed: UInt64) -> (image: FloatTensor, pe: FloatTensor, noMask: FloatTensor) {
        var random = SyntheticDecoder.Random(state: seed)
        let noMaskChannel = random.tensor([16])
        let noMask = FloatTensor(shape: [1, 16, g, g], data: noMaskChannel.data.flatMap { repeatElement($0, count: g * g) })
        return (random.tensor([1, 16, g, g]), random.tensor([1, 16, g, g]), noMask)
    }

    // 4x4 = 16 image tokens takes the row-major key path; 24x24 = 576 the transposed one. The
    // folding decoder's later blocks fold k_proj and v_proj for all three prompt lengths (6, 8 and
    // 12 tokens), q_proj and out_proj for 6 and 8 (`AttentionFoldingTests`).
    @Test("decoding with the kept work gives the same bits, with and without a mask",
          arguments: [(4, false), (24, false), (4, true), (24, true)])
    func sameBits(side: Int, folding: Bool) throws {
        let decoder = folding ? try SyntheticDecoder.foldingMaskDecoder() : decoder
        let x = image(side: side, seed: UInt64(side))
        let state = try decoder.keptImageWork(imageEmbeddings: x.image, imagePE: x.pe, noMaskDense: x.noMask)
        var random = SyntheticDecoder.Random(state: 99)
        for tokens in [1, 3, 7] {
            let sparse = random.tensor([1, tokens, 16])
            let masked = random.tensor([1, 16, side, side])  // a mask prompt's dense embedding: the kept work does not apply
            for dense in [x.noMask, masked] {
                let plain = try decoder.predictMasks(imageEmbeddings: x.image, imagePE: x.pe, sparse: sparse, dense: dense)
                let kept = try decoder.predictMasks(kept: state, imagePE: x.pe, sparse: sparse, dense: dense)
                #expect(kept.masks.isBitwiseEqual(to: plain.masks) && kept.iou.isBitwiseEqual(to: plain.iou), "g \(side), \(tokens) tokens")
            }
        }
    }

    @Test("the kept work is what a no-mask prompt uses")
    func keptWorkIsUsed() throws {
        let a = image(side: 24, seed: 1), b = image(side: 24, seed: 2)
        let stateA = try decoder.keptImageWork(imageEmbeddings: a.image, imagePE: a.pe, noMaskDense: a.noMask)
        // A state claiming image b but holding a's kept work: the kept work decides the masks.
        let mixed = MaskDecoderImageState(imageEmbeddings: b.image, dense: stateA.dense, imageTokens: stateA.imageTokens,
                                          imagePETokens: stateA.imagePETokens, keysWithPE: stateA.keysWithPE,
                                          firstBlock: stateA.firstBlock)
        var random = SyntheticDecoder.Random(state: 5)
        let sparse = random.tensor([1, 2, 16])
        let fromA = try decoder.predictMasks(imageEmbeddings: a.image, imagePE: a.pe, sparse: sparse, dense: a.noMask)
        let fromB = try decoder.predictMasks(imageEmbeddings: b.image, imagePE: a.pe, sparse: sparse, dense: a.noMask)
        let kept = try decoder.predictMasks(kept: mixed, imagePE: a.pe, sparse: sparse, dense: a.noMask)
        #expect(kept.masks.isBitwiseEqual(to: fromA.masks))
        #expect(!kept.masks.isBitwiseEqual(to: fromB.masks))
    }
}
