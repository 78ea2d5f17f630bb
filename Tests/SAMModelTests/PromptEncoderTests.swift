import Foundation
import SAMKernels
import SAMTensor
import Testing
@testable import SAMModel

/// The prompt encoder's contracts on small seeded weights (C = 16, g = 4, 32-pixel input); its
/// numbers against PyTorch are checked on the tiny reference set and the full-size set.
@Suite("PromptEncoder")
struct PromptEncoderTests {
    let tensors = SyntheticDecoder.tensors()
    var c: Int { SyntheticDecoder.config.promptEncoder.embedDim }

    func weight(_ key: String) -> [Float] { tensors[key]!.floats() }

    /// [sin(2πp), cos(2πp)] with p = (2·(x + 0.5)/size − 1, …) · G, in double precision.
    func expectedEncoding(x: Float, y: Float, size: Int) -> [Double] {
        let gaussian = weight("prompt_encoder.pe_layer.positional_encoding_gaussian_matrix").map(Double.init)
        let f = gaussian.count / 2
        let cx = 2 * (Double(x) + 0.5) / Double(size) - 1, cy = 2 * (Double(y) + 0.5) / Double(size) - 1
        let angles = (0..<f).map { 2 * Double.pi * (cx * gaussian[$0] + cy * gaussian[f + $0]) }
        return angles.map { sin($0) } + angles.map { cos($0) }
    }

    func points(_ xy: [Float], labels: [Float]) -> (FloatTensor, FloatTensor) {
        (FloatTensor(shape: [1, labels.count, 2], data: xy), FloatTensor(shape: [1, labels.count], data: labels))
    }

    @Test("point encoding: +0.5 pixel centre, / input size, random Fourier features, plus the label's embedding")
    func pointEncodingFollowsUpstream() throws {
        let encoder = try SyntheticDecoder.promptEncoder(tensors)
        let (coords, labels) = points([3, 29.25, 17.5, 0], labels: [1, 0])
        let sparse = try encoder.embedPoints(coords: coords, labels: labels)
        #expect(sparse.shape == [1, 2, c])
        for (token, (x, y, label)) in [(Float(3), Float(29.25), 1), (17.5, 0, 0)].enumerated() {
            let added = weight("prompt_encoder.point_embeddings.\(label).weight")
            let expected = zip(expectedEncoding(x: x, y: y, size: 32), added).map { $0 + Double($1) }
            let actual = sparse.data[(token * c)..<((token + 1) * c)]
            let worst = zip(actual, expected).map { abs(Double($0) - $1) }.max()!
            #expect(worst < 1e-5, "token \(token): max error \(worst)")
        }
    }

    @Test("labels -1...3: -1 replaces the encoding by not_a_point_embed, 0...3 add point_embeddings[label]")
    func labelEmbeddings() throws {
        let encoder = try SyntheticDecoder.promptEncoder(tensors)
        let (coords, labels) = points([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], labels: [-1, 0, 1, 2, 3])
        var encoding = FloatTensor(zeros: [])
        let sparse = try encoder.embedPoints(coords: coords, labels: labels) { path, value in
            if path == "prompt_encoder.pe_layer:points" { encoding = value }
        }
        #expect(encoding.shape == [1, 5, c])
        #expect(Array(sparse.data[0..<c]) == weight("prompt_encoder.not_a_point_embed.weight"))
        for label in 0...3 {
            let token = label + 1
            let expected = zip(encoding.data[(token * c)..<((token + 1) * c)], weight("prompt_encoder.point_embeddings.\(label).weight")).map { $0 + $1 }
            #expect(Array(sparse.data[(token * c)..<((token + 1) * c)]) == expected, "label \(label)")
        }
    }

    @Test("appendPaddingPoint adds one not-a-point token and leaves the others alone")
    func paddingPoint() throws {
        let encoder = try SyntheticDecoder.promptEncoder(tensors)
        let (coords, labels) = points([4, 5, 20, 30], labels: [1, 0])
        let plain = try encoder.embedPoints(coords: coords, labels: labels)
        let padded = try encoder.embedPoints(coords: coords, labels: labels, appendPaddingPoint: true)
        #expect(plain.shape == [1, 2, c])
        #expect(padded.shape == [1, 3, c])
        #expect(Array(padded.data[0..<(2 * c)]) == plain.data)
        #expect(Array(padded.data[(2 * c)...]) == weight("prompt_encoder.not_a_point_embed.weight"))
    }

    @Test("the point count must lie in config.minPoints...maxPoints (padding not counted)")
    func pointCountRange() throws {
        let encoder = try SyntheticDecoder.promptEncoder(tensors)
        #expect(encoder.pointCountRange == 1...6)
        for count in [0, 7] {
            let (coords, labels) = points([Float](repeating: 3, count: 2 * count), labels: [Float](repeating: 1, count: count))
            SyntheticDecoder.expectError(PromptError.pointCount(count, allowed: 1...6, what: "number of points")) {
                _ = try encoder.embedPoints(coords: coords, labels: labels)
            }
        }
        let (coords, labels) = points([Float](repeating: 3, count: 12), labels: [Float](repeating: 1, count: 6))
        #expect(try encoder.embedPoints(coords: coords, labels: labels, appendPaddingPoint: true).shape == [1, 7, c])
        let message = PromptError.pointCount(7, allowed: 1...6, what: "number of points").description
        #expect(message.contains("1...6"), "\(message)")
    }

    @Test("NaN or infinite coordinates and unknown labels are typed errors")
    func invalidPoints() throws {
        let encoder = try SyntheticDecoder.promptEncoder(tensors)
        do {
            let (coords, labels) = points([1, 2, .nan, 4], labels: [1, 1])
            _ = try encoder.embedPoints(coords: coords, labels: labels)
            Issue.record("NaN coordinate accepted")
        } catch {
            guard case .nonFiniteCoordinate(point: 1, _, _) = error else { Issue.record("wrong error \(error)"); return }
        }
        let (infinite, infiniteLabels) = points([1, .infinity], labels: [1])
        SyntheticDecoder.expectError(PromptError.nonFiniteCoordinate(point: 0, x: 1, y: .infinity)) {
            _ = try encoder.embedPoints(coords: infinite, labels: infiniteLabels)
        }
        for bad: Float in [4, 0.5, -2] {
            let (coords, labels) = points([1, 2, 3, 4], labels: [0, bad])
            SyntheticDecoder.expectError(PromptError.invalidLabel(point: 1, value: bad)) {
                _ = try encoder.embedPoints(coords: coords, labels: labels)
            }
        }
    }

    @Test("wrong input shapes are typed errors")
    func inputShapes() throws {
        let encoder = try SyntheticDecoder.promptEncoder(tensors)
        SyntheticDecoder.expectError(PromptError.shape(input: "point coords", expected: "[1,N,2]", actual: [1, 2, 3])) {
            _ = try encoder.embedPoints(coords: FloatTensor(zeros: [1, 2, 3]), labels: FloatTensor(zeros: [1, 2]))
        }
        SyntheticDecoder.expectError(PromptError.shape(input: "point labels", expected: "[1,2]", actual: [1, 3])) {
            _ = try encoder.embedPoints(coords: FloatTensor(zeros: [1, 2, 2]), labels: FloatTensor(zeros: [1, 3]))
        }
        SyntheticDecoder.expectError(PromptError.shape(input: "mask input", expected: "[1,1,16,16]", actual: [1, 1, 8, 8])) {
            _ = try encoder.denseEmbedding(maskInput: FloatTensor(zeros: [1, 1, 8, 8]), hasMaskInput: 1)
        }
    }

    @Test("dense embedding: no_mask_embed broadcast, the mask branch, and the official has_mask_input blend")
    func denseEmbedding() throws {
        let encoder = try SyntheticDecoder.promptEncoder(tensors)
        let g = 4, plane = 16
        let noMask = weight("prompt_encoder.no_mask_embed.weight")
        let broadcast = try encoder.denseEmbedding(maskInput: nil, hasMaskInput: 0)
        #expect(broadcast.shape == [1, c, g, g])
        #expect(broadcast.data == noMask.flatMap { [Float](repeating: $0, count: plane) })
        SyntheticDecoder.expectError(PromptError.missingMaskInput(hasMaskInput: 1)) {
            _ = try encoder.denseEmbedding(maskInput: nil, hasMaskInput: 1)
        }

        var random = SyntheticDecoder.Random(state: 99)
        let mask = random.tensor([1, 1, 4 * g, 4 * g], scale: 3)
        let maskDownscaling = try #require(encoder.maskDownscaling)
        let downscaled = maskDownscaling(mask)
        #expect(downscaled.shape == [1, c, g, g])
        // has_mask_input 1: the mask branch exactly; 0: no_mask_embed exactly (0 · finite = 0).
        #expect(try encoder.denseEmbedding(maskInput: mask, hasMaskInput: 1) == downscaled)
        #expect(try encoder.denseEmbedding(maskInput: mask, hasMaskInput: 0) == broadcast)
        // Switched off, the branch is skipped unobserved; observed, it runs, with the same result.
        var observed: [String] = []
        #expect(try encoder.denseEmbedding(maskInput: mask, hasMaskInput: 0) { path, _ in observed.append(path) } == broadcast)
        #expect(observed.contains { $0.hasPrefix("prompt_encoder.mask_downscaling") }, "\(observed)")
        // A non-finite mask switched off still gives the graph's NaN (0 · inf), not no_mask_embed.
        var infinite = mask
        infinite.data[5] = .infinity
        #expect(try encoder.denseEmbedding(maskInput: infinite, hasMaskInput: 0).data.contains { $0.isNaN })
        let blend = try encoder.denseEmbedding(maskInput: mask, hasMaskInput: 0.25)
        for index in 0..<blend.count {
            let expected = 0.25 * downscaled.data[index] + 0.75 * noMask[index / plane]
            #expect(abs(blend.data[index] - expected) < 1e-6)
        }
    }

    @Test("get_dense_pe: encodings of the cell centres (i + 0.5) / g, channels first; or a supplied tensor")
    func densePositionalEncoding() throws {
        let encoder = try SyntheticDecoder.promptEncoder(tensors)
        let pe = encoder.denseImagePositionalEncoding()
        #expect(pe.shape == [1, c, 4, 4])
        #expect(!encoder.densePositionalEncodingIsSupplied)
        for (i, j) in [(0, 0), (1, 3), (3, 2)] {
            // cell (i, j) has centre ((j + 0.5) / 4, (i + 0.5) / 4) = pixel (8j + 4 − 0.5, …) of a 32-pixel input
            let expected = expectedEncoding(x: Float(8 * j + 4) - 0.5, y: Float(8 * i + 4) - 0.5, size: 32)
            for channel in 0..<c {
                #expect(abs(Double(pe.data[channel * 16 + i * 4 + j]) - expected[channel]) < 1e-5)
            }
        }
        var reported: [String: [Int]] = [:]
        _ = encoder.denseImagePositionalEncoding { reported[$0] = $1.shape }
        #expect(reported == ["prompt_encoder.pe_layer": [c, 4, 4]])

        var random = SyntheticDecoder.Random(state: 5)
        let supplied = random.tensor([1, c, 4, 4])
        let withSupplied = try SyntheticDecoder.promptEncoder(tensors, densePE: supplied)
        #expect(withSupplied.densePositionalEncodingIsSupplied)
        #expect(withSupplied.denseImagePositionalEncoding() == supplied)
        SyntheticDecoder.expectError(WeightError.shapeMismatch(key: "prompt_encoder.get_dense_pe()", expected: [1, c, 4, 4],
                                                                actual: [1, c, 8, 8], source: "supplied dense positional encoding")) {
            _ = try SyntheticDecoder.promptEncoder(tensors, densePE: FloatTensor(zeros: [1, c, 8, 8]))
        }
    }

    @Test("loading is strict and names the state-dict path")
    func strictLoading() throws {
        let store = WeightStore(tensors.filter { $0.key.hasPrefix("prompt_encoder.") }, source: "synthetic")
        let encoder = try PromptEncoder(weights: store, config: SyntheticDecoder.config)
        try store.finish()
        #expect(encoder.embedDim == 16 && encoder.maskDownscaling?.conv3.outChannels == 8)
        #expect(encoder.pointEmbeddings.map(\.path) == (0...3).map { "prompt_encoder.point_embeddings.\($0)" })

        var missing = tensors
        missing["prompt_encoder.no_mask_embed.weight"] = nil
        SyntheticDecoder.expectError(WeightError.missing(key: "prompt_encoder.no_mask_embed.weight", source: "synthetic")) {
            _ = try SyntheticDecoder.promptEncoder(missing)
        }
        var reshaped = tensors
        reshaped["prompt_encoder.mask_downscaling.4.bias"] = FloatTensor(zeros: [9]).tensor
        SyntheticDecoder.expectError(WeightError.shapeMismatch(key: "prompt_encoder.mask_downscaling.4.bias", expected: [8],
                                                                actual: [9], source: "synthetic")) {
            _ = try SyntheticDecoder.promptEncoder(reshaped)
        }
        var config = SyntheticDecoder.config
        config.promptEncoder.embedDim = 32
        do {
            _ = try PromptEncoder(weights: WeightStore(tensors, source: "synthetic"), config: config)
            Issue.record("embed dim mismatch accepted")
        } catch {
            guard case .invalid(let key, let reason, _) = error else { Issue.record("wrong error \(error)"); return }
            #expect(key == "prompt_encoder.not_a_point_embed.weight")
            #expect(reason.contains("config.promptEncoder.embedDim"), "\(reason)")
        }
    }

    @Test("the observer sees every module in execution order")
    func observerOrder() throws {
        let encoder = try SyntheticDecoder.promptEncoder(tensors)
        var paths: [String] = []
        let (coords, labels) = points([1, 2], labels: [1])
        _ = try encoder.embedPoints(coords: coords, labels: labels) { path, _ in paths.append(path) }
        _ = try encoder.denseEmbedding(maskInput: FloatTensor(zeros: [1, 1, 16, 16]), hasMaskInput: 1) { path, _ in paths.append(path) }
        let downscaling = (0...6).map { "prompt_encoder.mask_downscaling.\($0)" } + ["prompt_encoder.mask_downscaling"]
        #expect(paths == ["prompt_encoder.pe_layer:points", "prompt_encoder:sparse"] + downscaling + ["prompt_encoder:dense"])
    }
}
