/// Questions about a state dict's key set that shape inference asks.
enum ShapeQueries {
    /// How many consecutive children `prefix.0`, `prefix.1`, ... the keys hold.
    static func childCount(_ prefix: String, in shapes: [String: [Int]]) -> Int {
        let start = prefix + "."
        let indices = Set(shapes.keys.compactMap { key -> Int? in
            guard key.hasPrefix(start) else { return nil }
            return Int(key.dropFirst(start.count).prefix { $0 != "." })
        })
        var count = 0
        while indices.contains(count) { count += 1 }
        return count
    }

    /// The shape stored under `key` when it has `rank` dimensions; nil otherwise (a state dict is
    /// input: a weight of the wrong rank is reported by the strict build, never indexed out of range here).
    static func shape(_ key: String, rank: Int, in shapes: [String: [Int]]) -> [Int]? {
        guard let shape = shapes[key], shape.count == rank else { return nil }
        return shape
    }
}
