import Foundation
import SAMArchitecture
import SAMFormats
import SAMTensor
import SAMTestSupport
import Testing
@testable import SAMModel

/// The TinyViT image encoder: upstream index tables and window layout, the committed `tiny`
/// reference set (end to end and module by module), and load-time errors.
/// The full-size set is in FullSizeSetImageEncoderTests.swift.
@Suite("ImageEncoder")
struct ImageEncoderTests {
    static let tolerance: Float = 1e-4

    // MARK: - Upstream tables and layouts

    /// The offset number `expand` gives each (query, key) pair: the expansion of a one-head table
    /// whose entries are their own numbers.
    static func offsetNumbers(_ index: TinyViT.AttentionBiasIndex) -> [Int] {
        let table = FloatTensor(shape: [1, index.offsetCount], data: (0..<index.offsetCount).map(Float.init))
        return index.expand(table).data.map { Int($0) }
    }

    /// `attention_bias_idxs` as tiny_vit_sam.py Attention.__init__ builds it (printed from Python).
    @Test func attentionBiasIndexMatchesUpstream() {
        let threeByThree = TinyViT.AttentionBiasIndex(resolution: .init(height: 3, width: 3))
        #expect(threeByThree.offsetCount == 9)
        #expect(Self.offsetNumbers(threeByThree) == [
            0, 1, 2, 3, 4, 5, 6, 7, 8, 1, 0, 1, 4, 3, 4, 7, 6, 7, 2, 1, 0, 5, 4, 3, 8, 7, 6,
            3, 4, 5, 0, 1, 2, 3, 4, 5, 4, 3, 4, 1, 0, 1, 4, 3, 4, 5, 4, 3, 2, 1, 0, 5, 4, 3,
            6, 7, 8, 3, 4, 5, 0, 1, 2, 7, 6, 7, 4, 3, 4, 1, 0, 1, 8, 7, 6, 5, 4, 3, 2, 1, 0,
        ])
        let seven = TinyViT.AttentionBiasIndex(resolution: .init(height: 7, width: 7))
        #expect(seven.offsetCount == 49)
        let sevenNumbers = Self.offsetNumbers(seven)
        #expect(sevenNumbers.reduce(0, +) == 43_904)
        #expect(Array(sevenNumbers.suffix(5)) == [4, 3, 2, 1, 0])
        let fourteen = TinyViT.AttentionBiasIndex(resolution: .init(height: 14, width: 14))
        #expect(fourteen.offsetCount == 196)
        let fourteenNumbers = Self.offsetNumbers(fourteen)
        #expect(fourteenNumbers.reduce(0, +) == 2_675_400)
        #expect(Array(fourteenNumbers[200..<210]) == [3, 4, 5, 6, 7, 8, 9, 10, 11, 12])

        // expand: ab[h, i, j] = attention_biases[h, idxs[i, j]]
        let biases = FloatTensor(shape: [2, 9], data: (0..<18).map(Float.init))
        let expanded = threeByThree.expand(biases)
        #expect(expanded.shape == [2, 9, 9])
        #expect(expanded.data[81 + 1 * 9 + 4] == 9 + Float(Self.offsetNumbers(threeByThree)[1 * 9 + 4]))
    }

    /// The closed-form table and expansion against upstream's first-met numbering, which
    /// `AttentionBiasOffsets` follows literally, on square and oblong windows.
    @Test(arguments: [(3, 3), (7, 7), (14, 14), (2, 5), (4, 1)])
    func attentionBiasExpansionMatchesUpstreamNumbering(_ size: (Int, Int)) {
        let index = TinyViT.AttentionBiasIndex(resolution: .init(height: size.0, width: size.1))
        let upstream = AttentionBiasOffsets(height: size.0, width: size.1)
        #expect(index.offsetCount == upstream.offsetCount)
        #expect(Self.offsetNumbers(index) == upstream.indices)
        let heads = 3, offsets = upstream.offsetCount, pairs = upstream.indices.count
        let biases = FloatTensor(shape: [heads, offsets], data: (0..<(heads * offsets)).map { Float($0) * 0.25 - 7 })
        let expanded = index.expand(biases)
        let expected = (0..<heads).flatMap { h in upstream.indices.map { biases.data[h * offsets + $0] } }
        #expect(expanded.shape == [heads, size.0 * size.1, size.0 * size.1] && expanded.count == heads * pairs)
        #expect(expanded.data == expected)
    }

    /// Partition against the literal upstream recipe: F.pad bottom/right, then
    /// view(B, nH, ws, nW, ws, C).transpose(2, 3).reshape(B * nH * nW, ws * ws, C).
    @Test func windowPartitionMatchesUpstreamLayout() {
        let (batch, height, width, channels, window) = (2, 5, 3, 3, 2)
        let x = FloatTensor(shape: [batch, height * width, channels],
                            data: (0..<(batch * height * width * channels)).map { Float($0 + 1) })
        let partition = TinyViT.WindowPartition(resolution: .init(height: height, width: width), window: window)
        #expect(partition.needsPadding && partition.windowRows == 3 && partition.windowColumns == 2)
        // Padded positions are zero, or a given row (Hiera partitions after qkv: a zero token's projection).
        let paddingRow = FloatTensor(shape: [channels], data: [-1, -2.5, 7])
        for padding in [nil, paddingRow] {
        let windows = partition.partition(x, paddingRow: padding)
        #expect(windows.shape == [batch * 3 * 2, window * window, channels])

        let (paddedHeight, paddedWidth) = (6, 4)
        for b in 0..<batch {
            for wr in 0..<3 {
                for wc in 0..<2 {
                    for i in 0..<window {
                        for j in 0..<window {
                            let row = wr * window + i, column = wc * window + j
                            #expect(row < paddedHeight && column < paddedWidth)
                            for c in 0..<channels {
                                let got = windows.data[(((b * 3 + wr) * 2 + wc) * window * window + i * window + j) * channels + c]
                                let want = row < height && column < width
                                    ? x.data[((b * height + row) * width + column) * channels + c] : padding?.data[c] ?? 0
                                #expect(got == want)
                            }
                        }
                    }
                }
            }
        }
        #expect(partition.merge(windows, batch: batch) == x)
        }
        let windows = partition.partition(x)
        // With a residual, merge adds it in the same pass: x + 0.5 * index.
        let residual = FloatTensor(shape: x.shape, data: (0..<x.count).map { Float($0) * 0.5 })
        #expect(partition.merge(windows, batch: batch, plusResidual: residual).data == zip(x.data, residual.data).map { $0 + $1 })

        // A map of exactly one window (TinyViTBlock's unpartitioned branch, L340-341): no-ops.
        let single = TinyViT.WindowPartition(resolution: .init(height: 3, width: 3), window: 3)
        let tokens = FloatTensor(shape: [2, 9, 4], data: (0..<72).map(Float.init))
        #expect(!single.needsPadding && single.partition(tokens) == tokens && single.merge(tokens, batch: 2) == tokens)
    }

    // MARK: - The committed tiny reference set

    @Test func tinyReferenceMatchesEndToEndAndPerModule() throws {
        let config = try ReferenceFolder.tiny.config()
        let weights = WeightStore(try ReferenceFolder.tiny.encoderWeights(), source: "tiny/mobile_sam.h5")
        let encoder = try TinyViT(weights: weights, prefix: "image_encoder", config: config)
        try weights.finish()
        #expect(encoder.outputResolution == .init(height: 8, width: 8))

        var observed: [(path: String, output: FloatTensor)] = []
        let embeddings = try encoder(try ReferenceFolder.tiny.tensor("references/input_image.npy")) { path, output in
            observed.append((path, output))
        }
        let expected = try ReferenceFolder.tiny.tensor("references/image_embeddings.npy")
        #expect(embeddings.shape == expected.shape)
        let difference = Difference(embeddings.data, expected.data)
        #expect(difference.within(Self.tolerance), "image_embeddings: \(difference)")

        // Every observed module against the PyTorch forward-hook dump of the same path.
        let (dumps, pytorchOrder) = try ReferenceFolder.tiny.moduleDumps()
        var calls: [String: Int] = [:]
        var worst: (path: String, maxAbs: Float) = ("", 0)
        for (path, output) in observed {
            let call = calls[path, default: 0]
            calls[path] = call + 1
            guard let file = dumps[ReferenceFolder.DumpKey(module: path, call: call)] else {
                Issue.record("no PyTorch dump for module \(path) (call \(call))")
                continue
            }
            let reference = try ReferenceFolder.tiny.tensor(file)
            #expect(output.shape == reference.shape, "\(path): shape \(output.shape) vs PyTorch \(reference.shape)")
            guard output.shape == reference.shape else { continue }
            let moduleDifference = Difference(output.data, reference.data)
            #expect(moduleDifference.within(Self.tolerance), "\(path): \(moduleDifference)")
            if moduleDifference.maxAbs >= worst.maxAbs { worst = (path, moduleDifference.maxAbs) }
        }
        // Observed in PyTorch's execution order (which lists a module once, at its first call).
        var observedPaths: [String] = []
        for (path, _) in observed where !observedPaths.contains(path) { observedPaths.append(path) }
        #expect(observedPaths == pytorchOrder.filter(Set(observedPaths).contains))
        #expect(Set(observedPaths).isSuperset(of: ["image_encoder.patch_embed", "image_encoder.layers.1.blocks.0.attn",
                                                    "image_encoder.layers.2.downsample", "image_encoder.neck"]))
        #expect(observedPaths.first == "image_encoder.patch_embed.seq.0" && observedPaths.last == "image_encoder")
        print("ImageEncoder tiny: image_embeddings \(difference); \(observed.count) modules, worst \(worst.path) \(worst.maxAbs)")
    }

    /// The same weights with every Conv2d_BN already folded (`c.weight`, `c.bias`, as ONNX exports
    /// hold them) give the same encoder.
    @Test func foldedBatchNormWeightsGiveTheSameOutput() throws {
        let config = try ReferenceFolder.tiny.config()
        let unfused = try ReferenceFolder.tiny.encoderWeights()
        var folded = unfused.filter { !$0.key.contains(".bn.") }
        for key in unfused.keys where key.hasSuffix(".bn.running_var") {
            let prefix = String(key.dropLast(".bn.running_var".count))
            let pair = try WeightStore(unfused, source: "unfused").takeConvBN(prefix)
            folded["\(prefix).c.weight"] = pair.weight.tensor
            folded["\(prefix).c.bias"] = pair.bias.tensor
        }
        let foldedStore = WeightStore(folded, source: "folded")
        let image = try ReferenceFolder.tiny.tensor("references/input_image.npy")
        let fromFolded = try TinyViT(weights: foldedStore, config: config)(image)
        try foldedStore.finish()
        let fromUnfused = try TinyViT(weights: WeightStore(unfused, source: "unfused"), config: config)(image)
        #expect(fromFolded == fromUnfused)
    }

    // MARK: - Load and input errors

    @Test func missingWeightIsNamed() throws {
        var tensors = try ReferenceFolder.tiny.encoderWeights()
        let key = "image_encoder.layers.1.blocks.0.attn.qkv.bias"
        tensors[key] = nil
        #expect(throws: WeightError.missing(key: key, source: "test")) {
            try TinyViT(weights: WeightStore(tensors, source: "test"), config: try ReferenceFolder.tiny.config())
        }
    }

    @Test func wrongShapeIsNamed() throws {
        var tensors = try ReferenceFolder.tiny.encoderWeights()
        let key = "image_encoder.layers.2.blocks.1.mlp.fc2.weight"
        let original = try #require(tensors[key])
        tensors[key] = Tensor(shape: original.shape.reversed(), floats: original.floats())
        #expect(throws: WeightError.shapeMismatch(key: key, expected: original.shape, actual: original.shape.reversed(), source: "test")) {
            try TinyViT(weights: WeightStore(tensors, source: "test"), config: try ReferenceFolder.tiny.config())
        }
    }

    @Test func configContradictingTheWeightsIsRejected() throws {
        let tensors = try ReferenceFolder.tiny.encoderWeights()
        var heads = try ReferenceFolder.tiny.config()
        heads.numHeads[1] = 4
        do {
            _ = try TinyViT(weights: WeightStore(tensors, source: "test"), config: heads)
            Issue.record("num_heads mismatch was accepted")
        } catch {
            guard case .invalid(let key, let reason, _) = error else { Issue.record("\(error)"); return }
            #expect(key == "image_encoder.layers.1.blocks.0.attn.attention_biases")
            #expect(reason.contains("num_heads[1]"))
        }

        var depths = try ReferenceFolder.tiny.config()
        depths.depths[2] = 3
        do {
            _ = try TinyViT(weights: WeightStore(tensors, source: "test"), config: depths)
            Issue.record("depth mismatch was accepted")
        } catch {
            guard case .invalid(let key, _, _) = error else { Issue.record("\(error)"); return }
            #expect(key == "image_encoder.layers.2.blocks")
        }

        var windows = try ReferenceFolder.tiny.config()
        windows.windowSizes[3] = 8
        do {
            _ = try TinyViT(weights: WeightStore(tensors, source: "test"), config: windows)
            Issue.record("window size mismatch was accepted")
        } catch {
            guard case .invalid(let key, let reason, _) = error else { Issue.record("\(error)"); return }
            #expect(key == "image_encoder.layers.3.blocks.0.attn.attention_biases")
            #expect(reason.contains("window_sizes[3]"))
        }
    }

    @Test func unexpectedWeightIsReportedByFinish() throws {
        var tensors = try ReferenceFolder.tiny.encoderWeights()
        tensors["image_encoder.layers.1.blocks.0.attn.extra"] = Tensor(shape: [1], floats: [0])
        let weights = WeightStore(tensors, source: "test")
        _ = try TinyViT(weights: weights, config: try ReferenceFolder.tiny.config())
        #expect(throws: WeightError.unused(keys: ["image_encoder.layers.1.blocks.0.attn.extra"], source: "test")) {
            try weights.finish()
        }
    }

    @Test func wrongImageShapeThrows() throws {
        let encoder = try TinyViT(weights: WeightStore(try ReferenceFolder.tiny.encoderWeights(), source: "test"),
                                  config: try ReferenceFolder.tiny.config())
        #expect(throws: ImageEncoderError.imageShape(expected: "[B, 3, 128, 128]", actual: [1, 3, 64, 64])) {
            try encoder(FloatTensor(zeros: [1, 3, 64, 64]))
        }
    }
}

/// reference_outputs/tiny, read the way the tests need it.
/// A committed reference set's files: config, weights, tensors and per-module dumps.
struct ReferenceFolder {
    let root: String
    /// The state dict's file name (mobile_sam.h5, sam.h5).
    let weightsFile: String

    static let tiny = ReferenceFolder(root: TestPaths.tinyReferences, weightsFile: "mobile_sam.h5")
    static let vitTiny = ReferenceFolder(root: TestPaths.vitTinyReferences, weightsFile: "sam.h5")

    func path(_ relative: String) -> String { root + "/" + relative }

    /// config.json (which decodes as `SAMConfig`).
    func samConfig() throws -> SAMConfig {
        try JSONDecoder().decode(SAMConfig.self, from: Data(contentsOf: URL(fileURLWithPath: path("config.json"))))
    }

    /// The image-encoder part of config.json, as `type`.
    func config<Configuration: ImageEncoderConfiguration>(_ type: Configuration.Type = TinyViTConfig.self) throws -> Configuration {
        try #require(samConfig().imageEncoder.as(type))
    }

    func allWeights() throws -> [String: Tensor] { try HDF5File(path: path(weightsFile)).readAll() }

    func encoderWeights() throws -> [String: Tensor] { try allWeights().filter { $0.key.hasPrefix("image_encoder.") } }

    func tensor(_ relative: String) throws -> FloatTensor {
        FloatTensor(try NPY.read(path(relative)))
    }

    struct DumpKey: Hashable {
        let module: String
        let call: Int
    }

    /// manifest.json `module_outputs[run]`: (module path, call number) -> .npy file, and
    /// `module_execution_order[run]`: every module path in the order its forward finished.
    func moduleDumps(run: String = "image_encoder") throws -> (files: [DumpKey: String], order: [String]) {
        let data = try Data(contentsOf: URL(fileURLWithPath: path("manifest.json")))
        let manifest = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let outputs = try #require((manifest["module_outputs"] as? [String: Any])?[run] as? [[String: Any]])
        var dumps: [DumpKey: String] = [:]
        for entry in outputs {
            guard let module = entry["module"] as? String, let call = entry["call"] as? Int,
                  let file = entry["file"] as? String else { continue }
            dumps[DumpKey(module: module, call: call)] = file
        }
        let order = try #require((manifest["module_execution_order"] as? [String: Any])?[run] as? [String])
        return (dumps, order)
    }
}
