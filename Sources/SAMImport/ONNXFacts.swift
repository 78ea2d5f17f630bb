import SAMFormats

/// What an ONNX file states besides weights: the image-embedding shape its inputs/outputs
/// declare, its opset, which inputs take any number of points.
extension ONNXWeightMapper {
    /// Graph inputs/outputs that carry the [1,C,g,g] image embedding or its positional encoding
    /// (names of the official decoder, the split prompt encoder / mask decoder files and the encoder).
    static let embeddingValueNames: Set<String> = ["imageembeddings", "imagepositionalencoding", "imagepe"]

    mutating func readFacts() throws(ImportError) {
        if let opset = model.opsetImports.first(where: { $0.domain.isEmpty || $0.domain == "ai.onnx" }) {
            result.facts.opsets[file] = opset.version
        }
        for value in model.graph.realInputs + model.graph.outputs {
            let key = value.name.lowercased().replacingOccurrences(of: "_", with: "")
            guard Self.embeddingValueNames.contains(key), let dims = value.dims, dims.count == 4,
                  case .fixed(let channels) = dims[1], case .fixed(let height) = dims[2], case .fixed(let width) = dims[3],
                  height == width else { continue }
            try learn(embeddingDim: channels, imageEmbeddingSize: height, from: value.name)
        }
        readArchitectureFacts()
        let dynamic = model.graph.realInputs.filter { $0.dims?.contains { if case .symbolic = $0 { true } else { false } } ?? false }
        if !dynamic.isEmpty {
            result.facts.dynamicPointInputs[file] = dynamic.map { input in
                input.name + " [" + (input.dims ?? []).map(\.description).joined(separator: ",") + "]"
            }
        }
    }

    mutating func learn(embeddingDim: Int?, imageEmbeddingSize: Int, from source: String) throws(ImportError) {
        if let embeddingDim, let known = result.facts.embeddingDim, known != embeddingDim {
            throw ImportError(.conflictingFacts, file: file, tensor: source, "states embedding width \(embeddingDim), elsewhere in the file \(known)")
        }
        if let known = result.facts.imageEmbeddingSize, known != imageEmbeddingSize {
            throw ImportError(.conflictingFacts, file: file, tensor: source, "states image-embedding size \(imageEmbeddingSize), elsewhere in the file \(known)")
        }
        if let embeddingDim { result.facts.embeddingDim = embeddingDim }
        result.facts.imageEmbeddingSize = imageEmbeddingSize
    }

    /// What an image-encoder graph states that weights cannot: its input size ([1,3,S,S]) and the
    /// stride of every PatchMerging depthwise conv (upstream picks it from the stage width, and
    /// patched small models differ), read from the Conv nodes' attributes.
    mutating func readArchitectureFacts() {
        for input in model.graph.realInputs {
            guard let dims = input.dims, dims.count == 4, case .fixed(3) = dims[1],
                  case .fixed(let height) = dims[2], case .fixed(let width) = dims[3], height == width, height > 0 else { continue }
            result.facts.imageSize = height
        }
        for (index, node) in model.graph.nodes.enumerated() where node.opType == "Conv" {
            guard let resolved = CanonicalNames.resolve(self.index.scope(ofNode: index)), resolved.component == .imageEncoder else { continue }
            // `...layers.<i>.downsample.conv2.c` (TorchScript) or `...conv2.c`/`conv2.bn` scopes (dynamo).
            let parts = resolved.path.split(separator: ".").map(String.init)
            guard let layers = parts.firstIndex(of: "layers"), layers + 4 < parts.count, let stage = Int(parts[layers + 1]),
                  parts[layers + 2] == "downsample", parts[layers + 3] == "conv2" else { continue }
            if case .ints(let strides)? = node.attribute("strides"), let stride = strides.first {
                result.facts.mergeStrides[stage] = Int(stride)
            }
        }
    }
}
