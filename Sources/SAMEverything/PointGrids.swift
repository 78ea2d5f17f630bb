/// Point grids in [0, 1] × [0, 1], float64 like upstream's numpy arrays. Points are (x, y); row-major
/// order (y outer, x inner), as `np.stack([points_x, points_y], -1).reshape(-1, 2)` lays them out.

/// `build_point_grid`: `pointsPerSide`² points, each side `np.linspace(offset, 1 - offset, n)` with
/// offset = 1 / (2n), computed the way numpy's linspace does (start + i * step, the last point set
/// to the stop value exactly), so every Double equals numpy's.
// ref: segment_anything/utils/amg.py build_point_grid
package func buildPointGrid(pointsPerSide: Int) throws(SAMEverythingError) -> [SIMD2<Double>] {
    // Upstream divides by zero for 0 (ZeroDivisionError); negative counts make no grid either.
    guard pointsPerSide > 0 else {
        throw SAMEverythingError("a point grid needs at least 1 point per side, got \(pointsPerSide)")
    }
    let (squared, overflow) = pointsPerSide.multipliedReportingOverflow(by: pointsPerSide)
    guard !overflow, pointsPerSide < 1 << 26 else {
        throw SAMEverythingError("\(pointsPerSide) points per side is too many")
    }
    let oneSide = linspace(start: 1 / Double(2 * pointsPerSide), stop: 1 - 1 / Double(2 * pointsPerSide), count: pointsPerSide)
    var points = [SIMD2<Double>]()
    points.reserveCapacity(squared)
    for y in oneSide {
        for x in oneSide {
            points.append(SIMD2(x, y))
        }
    }
    return points
}

/// `build_all_layer_point_grids`: one grid per crop layer 0...layerCount, layer i with
/// `int(pointsPerSide / scalePerLayer**i)` points per side (true division, then truncation).
/// Throws where upstream raises: a layer whose count truncates to 0 (ZeroDivisionError upstream).
// ref: segment_anything/utils/amg.py build_all_layer_point_grids
package func buildAllLayerPointGrids(pointsPerSide: Int, layerCount: Int, scalePerLayer: Int) throws(SAMEverythingError) -> [[SIMD2<Double>]] {
    guard layerCount >= 0 else {
        throw SAMEverythingError("the crop layer count must not be negative, got \(layerCount)")
    }
    guard scalePerLayer >= 1 else {
        throw SAMEverythingError("the points-per-side downscale factor must be at least 1, got \(scalePerLayer)")
    }
    var grids = [[SIMD2<Double>]]()
    var scale = 1  // scalePerLayer ** layer, exact while it fits
    var scaleOverflowed = false
    for layer in 0...layerCount {
        if layer > 0, !scaleOverflowed {
            let (next, overflow) = scale.multipliedReportingOverflow(by: scalePerLayer)
            scale = next
            scaleOverflowed = overflow
        }
        // Python's int / int is the correctly rounded quotient; so is Double / Double of exact values.
        let quotient = scaleOverflowed ? 0 : Double(pointsPerSide) / Double(scale)
        let pointsThisLayer = quotient < Double(Int.max) ? Int(quotient) : Int.max
        guard pointsThisLayer > 0 else {
            throw SAMEverythingError("crop layer \(layer) would have int(\(pointsPerSide) / \(scalePerLayer)**\(layer)) = 0 points per side")
        }
        grids.append(try buildPointGrid(pointsPerSide: pointsThisLayer))
    }
    return grids
}

/// numpy's `linspace(start, stop, count)` with endpoint: y[i] = i * step + start with
/// step = (stop - start) / (count - 1), y[count - 1] = stop; for count 1, [start].
func linspace(start: Double, stop: Double, count: Int) -> [Double] {
    guard count > 0 else { return [] }
    let divisions = count - 1
    let delta = stop - start
    guard divisions > 0 else { return [0 * delta + start] }
    let step = delta / Double(divisions)
    var values = [Double](repeating: 0, count: count)
    for i in 0..<count {
        // numpy's special case for a step that underflows to 0 (gh-5437): i / div * delta.
        let scaled = step == 0 ? Double(i) / Double(divisions) * delta : Double(i) * step
        values[i] = scaled + start
    }
    values[count - 1] = stop
    return values
}
