/// TinyViT's relative-position index for attention over a `height` x `width` window (upstream
/// `attention_bias_idxs`, a non-persistent buffer that no state dict holds, so both the importer and
/// the runtime rebuild it).
///
/// Window positions are (row, column) pairs in `itertools.product(range(h), range(w))` order; every
/// ordered pair of positions maps to the offset (|Δrow|, |Δcolumn|), and offsets are numbered in the
/// order they are first met (a Python dict keeps insertion order).
/// ref: mobile_sam/modeling/tiny_vit_sam.py Attention.__init__ (attention_offsets, idxs)
public struct AttentionBiasOffsets: Sendable, Equatable {
    public let height: Int
    public let width: Int
    /// [N * N], row-major [N, N] with N = height * width: the offset number of each (query, key) pair.
    public let indices: [Int]
    /// Number of distinct offsets (the second dimension of `attention_biases`).
    public let offsetCount: Int

    public init(height: Int, width: Int) {
        precondition(height >= 0 && width >= 0, "AttentionBiasOffsets: negative window \(height)x\(width)")
        self.height = height
        self.width = width
        let points = (0..<height).flatMap { row in (0..<width).map { column in (row, column) } }
        // A flat table replaces upstream's dict (-1: not seen yet): same numbering, no hashing.
        var offsetIndex = [Int](repeating: -1, count: height * width)
        var offsetCount = 0
        var indices: [Int] = []
        indices.reserveCapacity(points.count * points.count)
        for p1 in points {
            for p2 in points {
                let slot = abs(p1.0 - p2.0) * width + abs(p1.1 - p2.1)
                if offsetIndex[slot] < 0 {
                    offsetIndex[slot] = offsetCount
                    offsetCount += 1
                }
                indices.append(offsetIndex[slot])
            }
        }
        self.indices = indices
        self.offsetCount = offsetCount
    }
}
