import CVectorMath
import SAMTensor

extension Kernels {
    /// SAM ViT's decomposed relative-position tables laid out for `sam_relative_positions_avx512`, so
    /// that rel_h and rel_w come out of one small product per group of queries that share a table (a
    /// query grid row for heights, a query grid column for widths) instead of one dot product per
    /// query and key: for each query grid row, heights[qh] as [headDim, heightLanes] (key rows along
    /// the lanes), and likewise widths[qw] as [headDim, widthLanes]; lanes are the key count rounded
    /// up to 16, zero past it. The caller owns the memory (`deallocate`).
    /// ref: segment_anything/modeling/image_encoder.py add_decomposed_rel_pos (the two einsums)
    struct TransposedRelativeTables {
        let gridHeight: Int, gridWidth: Int, headDim: Int
        /// Floats per query in the rel_h and rel_w rows `relativePositions` writes (≥ the key count).
        let heightLanes: Int, widthLanes: Int
        private let heights: UnsafeMutablePointer<Float>, widths: UnsafeMutablePointer<Float>

        init(_ positions: RelativePositionTables) {
            (gridHeight, gridWidth, headDim) = (positions.gridHeight, positions.gridWidth, positions.headDim)
            (heightLanes, widthLanes) = ((gridHeight + 15) / 16 * 16, (gridWidth + 15) / 16 * 16)
            heights = Self.transposed(positions.heights, side: gridHeight, headDim: headDim, lanes: heightLanes)
            widths = Self.transposed(positions.widths, side: gridWidth, headDim: headDim, lanes: widthLanes)
        }

        func deallocate() {
            heights.deallocate()
            widths.deallocate()
        }

        /// table [side queries, side keys, headDim] as [side queries, headDim, lanes], zero past `side` keys.
        private static func transposed(_ table: FloatTensor, side: Int, headDim: Int, lanes: Int) -> UnsafeMutablePointer<Float> {
            let out = UnsafeMutablePointer<Float>.allocate(capacity: side * headDim * lanes)
            out.initialize(repeating: 0, count: side * headDim * lanes)
            table.data.withUnsafeBufferPointer { source in
                for query in 0..<side {
                    transpose(source.baseAddress! + query * side * headDim, stride: headDim, rows: side, columns: headDim,
                              into: out + query * headDim * lanes, stride: lanes)
                }
            }
            return out
        }

        /// One group's decomposed relative positions for one head whose queries start at `q` (rows
        /// `rowStride` apart, grid order): group g < gridHeight is query grid row g's rel_h, written to
        /// relativeHeights [tokens, heightLanes]; group gridHeight + c is query grid column c's rel_w,
        /// written to relativeWidths [tokens, widthLanes]; the lanes past the key count get zeros.
        /// Only with AVX-512.
        func relativePositions(group: Int, q: UnsafePointer<Float>, rowStride: Int,
                               relativeHeights: UnsafeMutablePointer<Float>, relativeWidths: UnsafeMutablePointer<Float>) {
            if group < gridHeight {
                sam_relative_positions_avx512(q + group * gridWidth * rowStride, Int64(rowStride), Int64(gridWidth),
                                              Int64(headDim), heights + group * headDim * heightLanes, Int64(heightLanes),
                                              relativeHeights + group * gridWidth * heightLanes, Int64(heightLanes))
            } else {
                let column = group - gridHeight
                sam_relative_positions_avx512(q + column * rowStride, Int64(gridWidth * rowStride), Int64(gridHeight),
                                              Int64(headDim), widths + column * headDim * widthLanes, Int64(widthLanes),
                                              relativeWidths + column * widthLanes, Int64(gridWidth * widthLanes))
            }
        }
    }
}
