/// SAM 2's small-hole filling on mask scores (the video predictor's `fill_hole_area`, 8 when
/// `build_sam2_video_predictor` applies its post-processing): background pixels are those with a
/// score <= 0; each 8-connected component of the background whose area is at most `maxArea`
/// pixels becomes foreground with the score 0.1; every other score is left as it is.
///
/// A "hole" is any small background component, one touching the border included (upstream labels
/// the whole background, with no notion of inside). NaN is not background (`NaN <= 0` is false,
/// in torch as here), so a NaN score is kept and never joins a component.
///
/// ref: sam2/utils/misc.py fill_holes_in_mask_scores: `labels, areas = get_connected_components(mask <= 0)`,
/// `is_hole = (labels > 0) & (areas <= max_area)`, `torch.where(is_hole, 0.1, mask)`.
/// ref: sam2/csrc/connected_components.cu merge (sam2 1.1.0, lines 83-84 and 105-116): `if (img[idx])
/// P |= 0x777` (a pixel's whole 3x3 neighbourhood) and the unions with the top-left block
/// (`union_(label, idx, idx - 2 * W - 2)`), the top, top-right and left ones:
/// 8-connectivity, as get_connected_components' docstring says. Upstream's kernel needs even
/// heights and widths; this labels any size exactly, which is what the kernel computes on even ones.
///
/// Upstream runs this only where its CUDA extension (`sam2._C`) is built; without it the step is
/// skipped with a warning and the scores are left unchanged, so a reference made on a CPU has no
/// holes filled.
package enum MaskHoles {
    /// The score a filled hole gets. ref: misc.py fill_holes_in_mask_scores `torch.where(is_hole, 0.1, mask)`
    package static let filledScore: Float = 0.1

    /// Fills the holes of each `width` x `height` mask in `scores` (row-major; several masks one
    /// after another, as a [N, 1, H, W] tensor holds them, each labelled on its own). `maxArea`
    /// must be positive (upstream asserts it). Time and memory are linear in the pixels.
    package static func fill(_ scores: inout [Float], width: Int, height: Int, maxArea: Int) throws(ImageError) {
        guard width > 0, height > 0, width <= RGBImage.maxDimension, height <= RGBImage.maxDimension else {
            throw ImageError(.invalidArgument, file: ImageError.inMemory,
                             "cannot fill holes in a \(width)x\(height) mask (1...\(RGBImage.maxDimension) a side)")
        }
        let pixels = width * height
        guard scores.count % pixels == 0 else {
            throw ImageError(.invalidArgument, file: ImageError.inMemory,
                             "\(scores.count) scores are not whole \(width)x\(height) masks")
        }
        guard maxArea > 0 else {
            throw ImageError(.invalidArgument, file: ImageError.inMemory, "hole area limit \(maxArea) must be positive")
        }
        var parent = [Int32](repeating: 0, count: pixels)
        var area = [Int32](repeating: 0, count: pixels)
        scores.withUnsafeMutableBufferPointer { all in
            for start in stride(from: 0, to: all.count, by: pixels) {
                let mask = UnsafeMutableBufferPointer(rebasing: all[start..<start + pixels])
                fillOne(mask, width: width, height: height, maxArea: maxArea, parent: &parent, area: &area)
            }
        }
    }

    /// Union-find over the background in one raster scan, each pixel joined to the four
    /// neighbours already seen (left, and the three above); a root always has the smallest index
    /// of its tree, so one more forward pass points every pixel straight at its root.
    private static func fillOne(_ mask: UnsafeMutableBufferPointer<Float>, width: Int, height: Int, maxArea: Int,
                                parent: inout [Int32], area: inout [Int32]) {
        let notBackground: Int32 = -1
        parent.withUnsafeMutableBufferPointer { parent in
            /// The root of `index`'s tree, halving the path on the way.
            func root(_ index: Int) -> Int {
                var node = index
                while Int(parent[node]) != node {
                    let grandparent = parent[Int(parent[node])]
                    parent[node] = grandparent
                    node = Int(grandparent)
                }
                return node
            }
            func join(_ a: Int, _ b: Int) {
                let rootA = root(a), rootB = root(b)
                if rootA < rootB { parent[rootB] = Int32(rootA) } else if rootB < rootA { parent[rootA] = Int32(rootB) }
            }
            for y in 0..<height {
                for x in 0..<width {
                    let index = y * width + x
                    // ref: misc.py fill_holes_in_mask_scores `mask <= 0` (false for NaN)
                    guard mask[index] <= 0 else { parent[index] = notBackground; continue }
                    parent[index] = Int32(index)
                    if x > 0, parent[index - 1] != notBackground { join(index, index - 1) }
                    if y > 0 {
                        let above = index - width
                        if x > 0, parent[above - 1] != notBackground { join(index, above - 1) }
                        if parent[above] != notBackground { join(index, above) }
                        if x + 1 < width, parent[above + 1] != notBackground { join(index, above + 1) }
                    }
                }
            }
            area.withUnsafeMutableBufferPointer { area in
                for index in 0..<width * height where parent[index] != notBackground {
                    // parent[index] <= index, and every smaller index already points at its root
                    let rootIndex = parent[Int(parent[index])]
                    parent[index] = rootIndex
                    area[Int(rootIndex)] = 0
                }
                for index in 0..<width * height where parent[index] != notBackground { area[Int(parent[index])] += 1 }
                // ref: misc.py fill_holes_in_mask_scores `is_hole = (labels > 0) & (areas <= max_area)`
                for index in 0..<width * height where parent[index] != notBackground && Int(area[Int(parent[index])]) <= maxArea {
                    mask[index] = filledScore
                }
            }
        }
    }
}
