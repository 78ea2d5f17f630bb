/// Which regions `removeSmallRegions` removes.
package enum SmallRegionMode: String, Sendable, CaseIterable {
    /// Fill small holes: small 8-connected components of the *unset* pixels become set.
    case holes
    /// Drop small islands: small 8-connected components of the set pixels become unset.
    case islands
}

/// `remove_small_regions`: removes the 8-connected regions of fewer than `areaThreshold` pixels —
/// holes (components of the unset pixels) or islands (components of the set pixels) — and says
/// whether it did anything.
///
/// Upstream runs `cv2.connectedComponentsWithStats(working_mask, 8)`; this labels natively with
/// the same components and, where it matters, cv2's label order. The rules, as upstream has them:
/// - A region is small when `size < areaThreshold` (strict; sizes compared as float64).
/// - No small region: the mask is returned as is, `changed` false.
/// - Holes: every small component of the unset pixels is set. That includes background touching
///   the image border (there is no border rule), and holes are 8-connected, not 4-connected.
/// - Islands: only the components that are not small are kept. If *every* component is small, the
///   largest is kept; on a tie, the one cv2 labels first: cv2 (Spaghetti, 2×2 blocks) numbers the
///   components by the first 2×2 block (row pair, then column pair) that holds one of their
///   pixels, which is not always the first pixel in raster order.
/// - `changed` is true whenever a small region exists, even when the result equals the input (a
///   single island below the threshold is kept as the largest, yet reported changed).
///
/// Linear time: runs of pixels per row, joined with the overlapping runs of the row above by
/// union-find.
// ref: segment_anything/utils/amg.py remove_small_regions
package func removeSmallRegions(_ mask: BinaryMask, areaThreshold: Double, mode: SmallRegionMode) -> (mask: BinaryMask, changed: Bool) {
    let components = RunComponents(mask, foreground: mode == .islands ? 1 : 0)
    var small = [Bool](repeating: false, count: components.count)
    var anySmall = false
    for component in 0..<components.count where Double(components.sizes[component]) < areaThreshold {
        small[component] = true
        anySmall = true
    }
    guard anySmall else { return (mask, false) }

    switch mode {
    case .holes:
        // The mask's own pixels (cv2's label 0) plus every small hole.
        var pixels = mask.pixels
        components.paint(into: &pixels, width: mask.width) { small[$0] }
        return (BinaryMask(unchecked: mask.width, height: mask.height, pixels: pixels), true)
    case .islands:
        var keep = small.map { !$0 }
        if !keep.contains(true) {
            // Every island is small: keep the largest, the first in cv2's label order on a tie.
            var best = 0
            for component in 1..<components.count {
                let size = components.sizes[component], bestSize = components.sizes[best]
                if size > bestSize || (size == bestSize && components.firstBlock[component] < components.firstBlock[best]) {
                    best = component
                }
            }
            keep[best] = true
        }
        var pixels = [UInt8](repeating: 0, count: mask.pixels.count)
        components.paint(into: &pixels, width: mask.width) { keep[$0] }
        return (BinaryMask(unchecked: mask.width, height: mask.height, pixels: pixels), true)
    }
}

/// The 8-connected components of the pixels equal to `foreground`, from runs per row.
struct RunComponents {
    /// Runs: row, [start, end) columns, and the component (dense index) of each.
    private(set) var runRow: [Int32] = []
    private(set) var runStart: [Int32] = []
    private(set) var runEnd: [Int32] = []
    private(set) var runComponent: [Int32] = []
    /// Per component: pixel count and the index of its first 2×2 block in block raster order
    /// ((row / 2) * blocksPerRow + column / 2), cv2's labelling order.
    private(set) var sizes: [Int] = []
    private(set) var firstBlock: [Int] = []

    var count: Int { sizes.count }

    init(_ mask: BinaryMask, foreground: UInt8) {
        let width = mask.width
        let height = mask.height
        guard width > 0, height > 0 else { return }
        var parent = [Int32]()
        mask.pixels.withUnsafeBufferPointer { buffer in
            guard let base = buffer.baseAddress else { return }
            var previousRowRuns = 0..<0
            for row in 0..<height {
                let rowStart = base + row * width
                let firstRun = runStart.count
                var column = 0
                while column < width {
                    // Skip to the next foreground pixel, then to the end of its run.
                    column = nextIndex(rowStart, from: column, count: width, equalTo: foreground)
                    guard column < width else { break }
                    let end = nextIndex(rowStart, from: column, count: width, equalTo: foreground ^ 1)
                    runRow.append(Int32(truncatingIfNeeded: row))
                    runStart.append(Int32(truncatingIfNeeded: column))
                    runEnd.append(Int32(truncatingIfNeeded: end))
                    parent.append(Int32(truncatingIfNeeded: parent.count))
                    column = end
                }
                let currentRowRuns = firstRun..<runStart.count
                // 8-connected: runs [s1, e1) above and [s2, e2) here touch when s1 <= e2 and s2 <= e1.
                var above = previousRowRuns.lowerBound
                var here = currentRowRuns.lowerBound
                while above < previousRowRuns.upperBound && here < currentRowRuns.upperBound {
                    if runStart[above] <= runEnd[here] && runStart[here] <= runEnd[above] {
                        union(&parent, Int32(above), Int32(here))
                    }
                    if runEnd[above] < runEnd[here] { above += 1 } else { here += 1 }
                }
                previousRowRuns = currentRowRuns
            }
        }
        // Dense component numbers, sizes and first blocks.
        let blocksPerRow = (width + 1) / 2
        var componentOfRoot = [Int32](repeating: -1, count: parent.count)
        runComponent = [Int32](repeating: 0, count: parent.count)
        for run in 0..<parent.count {
            let root = Int(find(&parent, Int32(run)))
            if componentOfRoot[root] < 0 {
                componentOfRoot[root] = Int32(sizes.count)
                sizes.append(0)
                firstBlock.append(Int.max)
            }
            let component = Int(componentOfRoot[root])
            runComponent[run] = Int32(component)
            sizes[component] += Int(runEnd[run] - runStart[run])
            let block = (Int(runRow[run]) / 2) * blocksPerRow + Int(runStart[run]) / 2
            if block < firstBlock[component] { firstBlock[component] = block }
        }
    }

    /// Sets to 1 every pixel of the components `selected` picks.
    func paint(into pixels: inout [UInt8], width: Int, _ selected: (Int) -> Bool) {
        pixels.withUnsafeMutableBufferPointer { buffer in
            guard let base = buffer.baseAddress else { return }
            for run in 0..<runStart.count where selected(Int(runComponent[run])) {
                let start = Int(runRow[run]) * width + Int(runStart[run])
                (base + start).update(repeating: 1, count: Int(runEnd[run] - runStart[run]))
            }
        }
    }

    /// cv2's labels for these components: label 0 for the other pixels, then 1, 2, ... in cv2's
    /// order (first 2×2 block), with each label's size (label 0's is the count of other pixels).
    func cv2Labels(width: Int, height: Int) -> (labels: [Int32], sizes: [Int]) {
        let order = (0..<count).sorted { firstBlock[$0] < firstBlock[$1] }
        var labelOf = [Int32](repeating: 0, count: count)
        for (rank, component) in order.enumerated() { labelOf[component] = Int32(rank + 1) }
        var labels = [Int32](repeating: 0, count: width * height)
        for run in 0..<runStart.count {
            let start = Int(runRow[run]) * width + Int(runStart[run])
            for i in start..<(start + Int(runEnd[run] - runStart[run])) { labels[i] = labelOf[Int(runComponent[run])] }
        }
        let foreground = sizes.reduce(0, +)
        return (labels, [width * height - foreground] + order.map { sizes[$0] })
    }
}

@inline(__always)
private func find(_ parent: inout [Int32], _ node: Int32) -> Int32 {
    var node = node
    while parent[Int(node)] != node {
        let grandparent = parent[Int(parent[Int(node)])]
        parent[Int(node)] = grandparent  // path halving
        node = grandparent
    }
    return node
}

@inline(__always)
private func union(_ parent: inout [Int32], _ a: Int32, _ b: Int32) {
    let rootA = find(&parent, a)
    let rootB = find(&parent, b)
    if rootA < rootB { parent[Int(rootB)] = rootA } else if rootB < rootA { parent[Int(rootA)] = rootB }
}

/// The first index in from..<count whose byte equals `value` (0 or 1), or `count`; eight bytes at a
/// time (pixels are 0/1, so a word of all-`value ^ 1` bytes is 0 or 0x0101...01).
@inline(__always)
private func nextIndex(_ bytes: UnsafePointer<UInt8>, from start: Int, count: Int, equalTo value: UInt8) -> Int {
    let raw = UnsafeRawPointer(bytes)
    let flip: UInt64 = value == 1 ? 0 : 0x0101_0101_0101_0101
    var i = start
    while i + 8 <= count {
        // Bytes equal to `value` become 1 after the XOR; the rest 0.
        let word = UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: i, as: UInt64.self)) ^ flip
        if word != 0 { return i + word.trailingZeroBitCount / 8 }
        i += 8
    }
    while i < count {
        if bytes[i] == value { return i }
        i += 1
    }
    return count
}
