import SAMTensor
import Testing
@testable import SAMModel

/// `MLPBlock.Naming` is open: a family names its two layers, and the block takes exactly those.
@Suite("Model: MLP block layer names")
struct MLPBlockNamingTests {
    /// lin1: 2 -> 3 (weights w1, bias b1), lin2: 3 -> 2, under `path.first` and `path.second`.
    static func weights(_ path: String, _ naming: MLPBlock.Naming) -> WeightStore {
        let w1: [Float] = [1, -1, 0.5, 2, -0.5, 1], b1: [Float] = [0.1, -3, 0.2]
        let w2: [Float] = [1, 2, 3, -1, 0.5, 4], b2: [Float] = [0.01, -0.02]
        return WeightStore(["\(path).\(naming.first).weight": Tensor(shape: [3, 2], floats: w1),
                            "\(path).\(naming.first).bias": Tensor(shape: [3], floats: b1),
                            "\(path).\(naming.second).weight": Tensor(shape: [2, 3], floats: w2),
                            "\(path).\(naming.second).bias": Tensor(shape: [2], floats: b2)], source: "test.pth")
    }

    @Test("a family's own names: the same ReLU MLP as SAM's names give, and a missing name names its key")
    func ownNames() throws {
        let fc = MLPBlock.Naming(first: "fc1", second: "fc2")
        let block = try MLPBlock(weights: Self.weights("mlp", fc), path: "mlp", embeddingDim: 2, mlpDim: nil, activation: .relu, naming: fc)
        let sam = try MLPBlock(weights: Self.weights("mlp", .sam), path: "mlp", embeddingDim: 2, mlpDim: nil, activation: .relu)
        let x = FloatTensor(shape: [1, 1, 2], data: [1, 2])
        // hidden = relu([1 - 2 + 0.1, 0.5 + 4 - 3, -0.5 + 2 + 0.2]) = [0, 1.5, 1.7];
        // out = [1.5 * 2 + 1.7 * 3 + 0.01, 1.5 * 0.5 + 1.7 * 4 - 0.02] = [8.11, 7.53]
        let out = block(x)
        #expect(out.shape == [1, 1, 2])
        #expect(abs(out.data[0] - 8.11) < 1e-5 && abs(out.data[1] - 7.53) < 1e-5, "\(out.data)")
        #expect(sam(x).data == out.data)
        #expect(throws: WeightError.missing(key: "mlp.fc1.weight", source: "test.pth")) {
            _ = try MLPBlock(weights: Self.weights("mlp", .sam), path: "mlp", embeddingDim: 2, mlpDim: nil, activation: .relu, naming: fc)
        }
    }
}
