import SAMTensor

extension PromptEncoder {
    /// The dense prompt embedding [1, C, g, g] added to the image embedding.
    ///
    /// With a mask ([1, 1, 4g, 4g] low-res logits, e.g. a previous prediction), this is the official
    /// ONNX decoder's blend `hasMaskInput * mask_downscaling(mask) + (1 - hasMaskInput) * no_mask_embed`,
    /// computed even when `hasMaskInput` is 0 (as upstream does, so a non-finite mask still propagates).
    /// Without a mask (`maskInput` nil, `hasMaskInput` must then be 0) it is `no_mask_embed` broadcast
    /// over the grid, which is what both upstream paths give when there is no mask.
    /// ref: onnx.py SamOnnxModel._embed_masks; prompt_encoder.py PromptEncoder.forward
    package func denseEmbedding(maskInput: FloatTensor?, hasMaskInput: Float,
                               observer: ModuleObserver? = nil) throws(PromptError) -> FloatTensor {
        let c = embedDim, grid = imageEmbeddingSize, plane = grid * grid
        let noMask = noMaskEmbed.weight.data
        guard let maskInput else {
            guard hasMaskInput == 0 else { throw .missingMaskInput(hasMaskInput: hasMaskInput) }
            let dense = noMaskDense.value
            observer?("\(path):dense", dense)
            return dense
        }
        let maskSide = 4 * grid
        guard maskInput.shape == [1, 1, maskSide, maskSide] else {
            throw .shape(input: "mask input", expected: "[1,1,\(maskSide),\(maskSide)]", actual: maskInput.shape)
        }
        guard let maskDownscaling else {
            // Without the mask path a mask that is switched off contributes nothing; one switched on cannot be used.
            guard hasMaskInput == 0 else { throw .noMaskPath }
            return try denseEmbedding(maskInput: nil, hasMaskInput: 0, observer: observer)
        }
        // A mask switched off adds 0 · finite = 0: the result is no_mask_embed exactly, what
        // PromptEncoder.forward gives without a mask, so the branch is skipped. Observed runs still
        // compute it (module dumps and profiles see what the ONNX graph runs), and a non-finite mask
        // keeps the NaN the graph's 0 · inf gives.
        if hasMaskInput == 0, observer == nil, maskInput.data.allSatisfy(\.isFinite) {
            return try denseEmbedding(maskInput: nil, hasMaskInput: 0)
        }
        // ref: onnx.py SamOnnxModel._embed_masks — self.model.prompt_encoder.mask_downscaling(input_mask)
        var dense = maskDownscaling(maskInput, observer: observer)
        let keep = 1 - hasMaskInput
        dense.data.withUnsafeMutableBufferPointer { out in
            for channel in 0..<c {
                // ref: _embed_masks — (1 - has_mask_input) * no_mask_embed.weight.reshape(1, -1, 1, 1)
                let background = keep * noMask[channel]
                let row = out.baseAddress! + channel * plane
                // ref: _embed_masks — has_mask_input * mask_embedding + that
                for p in 0..<plane { row[p] = hasMaskInput * row[p] + background }
            }
        }
        observer?("\(path):dense", dense)
        return dense
    }
}
