import Testing
@testable import SAMEverything

/// build_point_grid / build_all_layer_point_grids against upstream's float64 grids, bit for bit.
@Suite("Point grids")
struct PointGridTests {
    struct Case: Decodable {
        struct Layer: Decodable { let offset: Int; let count: Int }
        let points_per_side: Int
        let layers: Int
        let scale_per_layer: Int
        let grids: [Layer]
    }
    struct File: Decodable { let cases: [Case] }

    @Test("every layer's grid equals upstream's, bit for bit")
    func grids() throws {
        let file = try Fixtures.json("grids.json", as: File.self)
        let values = try Fixtures.npy("grids.npy").float64()
        #expect(file.cases.count >= 10)
        for c in file.cases {
            let grids = try buildAllLayerPointGrids(pointsPerSide: c.points_per_side, layerCount: c.layers, scalePerLayer: c.scale_per_layer)
            #expect(grids.count == c.grids.count)
            for (layer, expected) in zip(grids, c.grids) {
                let flat = layer.flatMap { [$0.x, $0.y] }
                let reference = Array(values[(expected.offset * 2)..<((expected.offset + expected.count) * 2)])
                expectEqualElements(flat.map(\.bitPattern), reference.map(\.bitPattern),
                                    "n \(c.points_per_side) layers \(c.layers) scale \(c.scale_per_layer)")
            }
            #expect(try buildPointGrid(pointsPerSide: c.points_per_side) == grids[0])
        }
    }

    @Test("counts upstream cannot grid are errors")
    func invalid() {
        #expect(throws: SAMEverythingError.self) { try buildPointGrid(pointsPerSide: 0) }
        #expect(throws: SAMEverythingError.self) { try buildPointGrid(pointsPerSide: -3) }
        // int(4 / 2**3) = 0 points per side: ZeroDivisionError upstream.
        #expect(throws: SAMEverythingError.self) { try buildAllLayerPointGrids(pointsPerSide: 4, layerCount: 3, scalePerLayer: 2) }
        #expect(throws: SAMEverythingError.self) { try buildAllLayerPointGrids(pointsPerSide: 4, layerCount: -1, scalePerLayer: 2) }
        #expect(throws: SAMEverythingError.self) { try buildAllLayerPointGrids(pointsPerSide: 4, layerCount: 1, scalePerLayer: 0) }
    }

    @Test("layout: x varies fastest, one point per cell centre")
    func layout() throws {
        let grid = try buildPointGrid(pointsPerSide: 2)
        #expect(grid == [SIMD2(0.25, 0.25), SIMD2(0.75, 0.25), SIMD2(0.25, 0.75), SIMD2(0.75, 0.75)])
        #expect(try buildPointGrid(pointsPerSide: 1) == [SIMD2(0.5, 0.5)])
    }
}
