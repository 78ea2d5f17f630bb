/// Bounds on what a tracking run is asked to do, so a prompts file cannot make a run allocate or
/// loop without end. The defaults are far above any hand-written file.
public struct TrackLimits: Sendable, Equatable {
    /// Distinct objects tracked at once (upstream keeps per-object state and runs the decoder per object).
    public var maxObjects: Int
    /// Points in one entry of a prompts file.
    public var maxPointsPerEntry: Int
    /// Entries in a prompts file.
    public var maxEntries: Int
    /// Bytes of a prompts file, checked before it is parsed.
    public var maxFileBytes: Int

    /// Limits of the values given; the defaults are `TrackLimits.default`'s.
    public init(maxObjects: Int = 64, maxPointsPerEntry: Int = 256, maxEntries: Int = 10_000, maxFileBytes: Int = 16 << 20) {
        self.maxObjects = maxObjects
        self.maxPointsPerEntry = maxPointsPerEntry
        self.maxEntries = maxEntries
        self.maxFileBytes = maxFileBytes
    }

    /// 64 objects, 256 points per entry, 10,000 entries, 16 MiB files.
    public static let `default` = TrackLimits()
}
