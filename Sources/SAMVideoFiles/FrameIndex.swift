/// What opening a video learned of each frame, in display order: its timestamp, whether decoding
/// can start there, and a checksum of its RGB pixels. A frame reached after a seek is known by its
/// timestamp and checked by its checksum, so a seek never hands out other pixels than a decode
/// from the first frame does.
struct FrameIndex: Sendable {
    struct Record: Sendable {
        /// Presentation time in the stream's time base (nil: the stream gives none).
        var timestamp: Int64?
        var isKeyframe: Bool
        /// CRC-32 of the frame's RGB pixels.
        var checksum: UInt32
    }

    let records: [Record]
    /// Frame positions by timestamp; nil when some frame has none or two share one, and seeking
    /// is off (every backward request decodes from the first frame).
    private let positions: [Int64: Int]?
    /// Keyframes with a timestamp, ascending: where a seek may start.
    private let keyframes: [Int]

    init(_ records: [Record]) {
        self.records = records
        var positions: [Int64: Int]? = [:]
        for (position, record) in records.enumerated() {
            guard let timestamp = record.timestamp, positions?.updateValue(position, forKey: timestamp) == nil else {
                positions = nil
                break
            }
        }
        self.positions = positions
        keyframes = positions == nil ? [] : records.indices.filter { records[$0].isKeyframe }
    }

    var count: Int { records.count }

    /// The frame shown at `timestamp`, if seeking is on and one is.
    func position(of timestamp: Int64?) -> Int? {
        guard let timestamp else { return nil }
        return positions?[timestamp]
    }

    /// The last keyframe at or before `position` a seek may go to; nil when seeking is off.
    func keyframe(atOrBefore position: Int) -> Int? {
        var low = 0, high = keyframes.count
        while low < high {
            let middle = (low + high) / 2
            if keyframes[middle] <= position { low = middle + 1 } else { high = middle }
        }
        return low == 0 ? nil : keyframes[low - 1]
    }
}
