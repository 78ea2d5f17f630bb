import SAMImage
/// A JPEG's scans counted from its markers, before libjpeg decodes anything: each scan of a
/// progressive file is a pass over every block of the image, so a small file that repeats a scan
/// hundreds of times costs minutes of decoding. Counting walks the bytes once (a marker segment is
/// skipped by its length, entropy-coded data byte by byte up to the next marker), so its cost is
/// bounded by the file's size, not by the image's.
/// ref: ITU-T T.81 B.1.1.2 (markers), B.1.1.5 (entropy-coded segments, byte stuffing), B.2.3 (SOS)
struct JPEGMarkers {
    /// Start-of-scan markers met, counted up to one past the limit asked for.
    private(set) var scans = 0
    /// The frame's size from its SOF segment, when one was met.
    private(set) var width: Int?
    private(set) var height: Int?

    /// Walks `bytes` (a file starting with SOI) until EOI, the end of the bytes, or the scan count
    /// passes `limit`. Damaged structure ends the walk quietly: libjpeg reports it when it decodes.
    init(_ bytes: [UInt8], stoppingAfter limit: Int) {
        let count = bytes.count
        var position = 2  // after SOI
        while position + 1 < count {
            guard bytes[position] == 0xFF else { position += 1; continue }  // stray bytes (libjpeg skips them too)
            let marker = bytes[position + 1]
            switch marker {
            case 0xFF, 0x00:  // fill byte before a marker; a stuffed zero outside a scan
                position += 1
                continue
            case 0x01, 0xD0...0xD8:  // TEM, RSTn, SOI: no length field
                position += 2
                continue
            case 0xD9:  // EOI
                return
            default:
                break
            }
            guard position + 3 < count else { return }
            let length = Int(bytes[position + 2]) << 8 | Int(bytes[position + 3])
            guard length >= 2 else { return }
            let payload = position + 4
            if Self.isStartOfFrame(marker), payload + 5 <= count {
                height = Int(bytes[payload + 1]) << 8 | Int(bytes[payload + 2])
                width = Int(bytes[payload + 3]) << 8 | Int(bytes[payload + 4])
            }
            position += 2 + length
            guard marker == 0xDA else { continue }
            scans += 1
            if scans > limit { return }
            // Entropy-coded data: runs until a marker other than a stuffed zero or a restart marker.
            while position + 1 < count {
                if bytes[position] == 0xFF {
                    let next = bytes[position + 1]
                    if next != 0x00 && next != 0xFF && !(0xD0...0xD7).contains(next) { break }
                }
                position += 1
            }
        }
    }

    /// SOF0...SOF15 except DHT (C4), JPG (C8) and DAC (CC), which share the range.
    static func isStartOfFrame(_ marker: UInt8) -> Bool {
        (0xC0...0xCF).contains(marker) && marker != 0xC4 && marker != 0xC8 && marker != 0xCC
    }
}
