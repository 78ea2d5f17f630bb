import SAMTensor

/// The shape checks every mask decoder makes before it decodes: the image-side inputs against the
/// transformer width and each other, the prompt tokens against the width and the accepted count.
extension PromptMaskDecoder {
    /// Image embeddings [1, C, H, W] (C the transformer width), its positional encoding and the dense
    /// prompt embedding of the same shape.
    func checkImageInputs(imageEmbeddings: FloatTensor, imagePE: FloatTensor, dense: FloatTensor) throws(PromptError) {
        try checkEmbedding(imageEmbeddings)
        let imageShape = imageEmbeddings.shape
        let expectedImage = Shape.text(imageShape)
        guard imagePE.shape == imageShape else { throw .shape(input: "image positional encoding", expected: expectedImage, actual: imagePE.shape) }
        guard dense.shape == imageShape else { throw .shape(input: "dense prompt embeddings", expected: expectedImage, actual: dense.shape) }
    }

    /// Image embeddings [1, C, H, W], C the transformer width.
    func checkEmbedding(_ imageEmbeddings: FloatTensor) throws(PromptError) {
        let c = transformerDim, imageShape = imageEmbeddings.shape
        guard imageShape.count == 4, imageShape[0] == 1, imageShape[1] == c, imageShape[2] > 0, imageShape[3] > 0 else {
            throw .shape(input: "image embeddings", expected: "[1,\(c),H,W]", actual: imageShape)
        }
    }

    /// Sparse prompt embeddings [1, N, C], N in `sparseTokenRange`.
    func checkSparse(_ sparse: FloatTensor) throws(PromptError) {
        let c = transformerDim
        guard sparse.shape.count == 3, sparse.shape[0] == 1, sparse.shape[2] == c else {
            throw .shape(input: "sparse prompt embeddings", expected: "[1,N,\(c)]", actual: sparse.shape)
        }
        guard sparseTokenRange.contains(sparse.shape[1]) else {
            throw .pointCount(sparse.shape[1], allowed: sparseTokenRange, what: "number of sparse prompt tokens")
        }
    }
}
