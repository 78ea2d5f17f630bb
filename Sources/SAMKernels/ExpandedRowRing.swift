extension Kernels {
    /// The three expanded rows an inverted residual's depthwise window needs, each a slot of
    /// `slotSize` floats holding one padded row (its layout is the caller's: channel-major or
    /// channels-last, a zero pad column or pixel either side), row r in slot r % 3, plus a zero slot
    /// for the padding above and below the map. Slots start zero; callers write only inside the map.
    struct ExpandedRowRing {
        let slotSize: Int
        let base: UnsafeMutablePointer<Float>
        /// The map row each slot holds (-1: none yet).
        private var rows = [-1, -1, -1]

        init(slotSize: Int) {
            self.slotSize = slotSize
            base = .allocate(capacity: 4 * slotSize)
            base.initialize(repeating: 0, count: 4 * slotSize)
        }

        func holds(_ row: Int) -> Bool { rows[row % 3] == row }

        /// The slot for `row`, now marked as holding it (the caller fills it).
        mutating func slot(for row: Int) -> UnsafeMutablePointer<Float> {
            rows[row % 3] = row
            return base + (row % 3) * slotSize
        }

        /// `row`'s slot, or the zero slot when `row` lies outside the map (of `height` rows).
        func paddedRow(_ row: Int, height: Int) -> UnsafePointer<Float> {
            let slot = row >= 0 && row < height ? row % 3 : 3
            precondition(slot == 3 || rows[slot] == row, "inverted residual: row \(row) not expanded")
            return UnsafePointer(base + slot * slotSize)
        }

        func deallocate() { base.deallocate() }

        /// One band's work, as both inverted-residual kernels run it: for each output row of `rows`, the
        /// input rows its 3x3 window reads that the ring does not hold yet are expanded into their slots
        /// (`expand(row, slot)`, each row once per band), then `output(oy, ring, depthwiseRow)` makes the
        /// row, with `depthwiseFloats` floats of scratch for its depthwise output.
        static func eachOutputRow(_ rows: Range<Int>, stride: Int, height: Int, slotSize: Int, depthwiseFloats: Int,
                                  expand: (Int, UnsafeMutablePointer<Float>) -> Void,
                                  output: (Int, ExpandedRowRing, UnsafeMutablePointer<Float>) -> Void) {
            var ring = ExpandedRowRing(slotSize: slotSize)
            defer { ring.deallocate() }
            let depthwiseRow = UnsafeMutablePointer<Float>.allocate(capacity: depthwiseFloats)
            defer { depthwiseRow.deallocate() }
            for oy in rows {
                for row in inputRows(of: oy, stride: stride, height: height) where !ring.holds(row) {
                    expand(row, ring.slot(for: row))
                }
                output(oy, ring, depthwiseRow)
            }
        }

        /// Output rows of band `band` of `bands` over `outHeight` rows (the tasks' split).
        static func band(_ band: Int, of bands: Int, outHeight: Int) -> Range<Int> {
            (band * outHeight / bands)..<((band + 1) * outHeight / bands)
        }

        /// The input rows output row `oy`'s 3x3 window (padding 1) reads inside the map.
        static func inputRows(of oy: Int, stride: Int, height: Int) -> ClosedRange<Int> {
            max(0, oy * stride - 1)...min(height - 1, oy * stride + 1)
        }
    }
}
