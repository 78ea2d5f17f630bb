import SAMFiles
import SAMFormats
import SAMTensor

/// `image_points_embeddings.bin`: `prompt_encoder.get_dense_pe()` as raw little-endian float32
/// [1,C,g,g], no header. The shape is not in the file: C comes from the other weights, g from
/// the options, another input's stated facts, or else the byte count (which must be C*g*g floats).
public enum DensePEBlobImport {
    /// - Parameter context: what the other inputs gave (weights and facts), to size the blob.
    public static func importBlob(_ path: String, context: ImportedWeights,
                                  options: ImportOptions = ImportOptions()) throws(ImportError) -> ImportedWeights {
        guard let (channels, channelSource) = embeddingDim(from: context) else {
            throw ImportError(.missingContext, file: path,
                              "a raw dense-PE blob has no header; import it together with a prompt encoder or mask decoder so its channel count is known")
        }
        let byteCount: Int
        do { byteCount = try MappedFile(path: path).count } catch { throw ImportError(error) }
        let side: Int, sideSource: String
        if let given = options.imageEmbeddingSize {
            (side, sideSource) = (given, "the options")
        } else if let stated = context.facts.imageEmbeddingSize {
            (side, sideSource) = (stated, "the other inputs")
        } else {
            let floats = byteCount / 4
            guard byteCount % (4 * channels) == 0, let root = LayoutRules.exactSquareRoot(floats / channels) else {
                throw ImportError(.sizeMismatch, file: path,
                                  "has \(byteCount) bytes: not float32 [1,\(channels),g,g] for any g (C = \(channels) from \(channelSource))")
            }
            (side, sideSource) = (root, "the byte count")
        }
        let shape = [1, channels, side, side]
        let tensor: Tensor
        do { tensor = try RawBlob.read(path, dtype: .float32, shape: shape, tensorName: "denseImagePE") } catch {
            throw ImportError(error.code == .sizeMismatch ? .sizeMismatch : .unreadable, file: path, tensor: "denseImagePE",
                              formatError: error, "\(error.message) (C = \(channels) from \(channelSource), g = \(side) from \(sideSource))")
        }
        var result = ImportedWeights()
        result.files = [path]
        result.denseImagePE = ImportedTensor(tensor: tensor, origin: TensorOrigin(file: path, sources: ["raw f32 \(Shape.text(shape))"],
                                                                                rule: .densePEBlob, derivation: .stored))
        result.facts.embeddingDim = channels
        result.facts.imageEmbeddingSize = side
        return result
    }

    /// C of the dense PE: stated by an input, or the width of a prompt-encoder/decoder embedding.
    static func embeddingDim(from context: ImportedWeights) -> (Int, String)? {
        if let stated = context.facts.embeddingDim { return (stated, "the other inputs' stated image-embedding shape") }
        // PositionEmbeddingRandom(embed_dim // 2): the matrix is [2, C/2] (prompt_encoder.py PromptEncoder.__init__).
        if let matrix = context.tensors["prompt_encoder.pe_layer.positional_encoding_gaussian_matrix"], matrix.shape.count == 2 {
            return (2 * matrix.shape[1], "prompt_encoder.pe_layer.positional_encoding_gaussian_matrix")
        }
        for name in ["prompt_encoder.no_mask_embed.weight", "prompt_encoder.not_a_point_embed.weight", "mask_decoder.iou_token.weight"] {
            if let embedding = context.tensors[name], embedding.shape.count == 2 { return (embedding.shape[1], name) }
        }
        return nil
    }
}
