import Foundation
import SAMFiles
import SAMFormats

/// Hostile PNG and JPEG files written byte by byte (no image library, no Python): decompression
/// bombs that declare far more pixels than they hold, and a progressive JPEG whose last scan repeats.
enum HostileImages {
    // MARK: PNG

    /// A PNG declaring `width`x`height` (8-bit gray or RGB) whose IDAT holds `rows` rows of zeros
    /// (stored deflate blocks), then IEND: a bomb's header with as much data as a test needs.
    static func png(width: Int, height: Int, rgb: Bool = false, rows: Int = 1) -> Data {
        var out = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
        var header = Data()
        header.append(bigEndian: UInt32(width))
        header.append(bigEndian: UInt32(height))
        header.append(contentsOf: [8, rgb ? 2 : 0, 0, 0, 0])
        out.append(chunk: "IHDR", header)
        let rowBytes = 1 + width * (rgb ? 3 : 1)
        out.append(chunk: "IDAT", zlibStored(Data(count: rowBytes * min(rows, height))))
        out.append(chunk: "IEND", Data())
        return out
    }

    /// zlib stream of stored (uncompressed) deflate blocks.
    static func zlibStored(_ payload: Data) -> Data {
        var out = Data([0x78, 0x01])
        var offset = 0
        repeat {
            let length = min(65535, payload.count - offset)
            let final: UInt8 = offset + length == payload.count ? 1 : 0
            out.append(final)
            out.append(littleEndian: UInt16(length))
            out.append(littleEndian: ~UInt16(length))
            out.append(payload[offset..<(offset + length)])
            offset += length
        } while offset < payload.count
        var a: UInt32 = 1, b: UInt32 = 0
        for byte in payload { a = (a + UInt32(byte)) % 65521; b = (b + a) % 65521 }
        out.append(bigEndian: b << 16 | a)
        return out
    }

    // MARK: JPEG

    /// A baseline JPEG header (SOF0, gray) declaring `width`x`height`, with a scan of a few bytes: a
    /// bomb's header; decoding it fully would cost width * height bytes.
    static func baselineJPEG(width: Int, height: Int) -> Data {
        var out = Data([0xFF, 0xD8])
        out.append(segment: 0xDB, Data([0x00]) + Data(repeating: 1, count: 64))
        out.append(segment: 0xC0, Data([8]) + Data(bigEndian16: height) + Data(bigEndian16: width) + Data([1, 1, 0x11, 0]))
        out.append(segment: 0xC4, huffmanTable(class: 0, id: 0, symbols: [0x00]))
        out.append(segment: 0xC4, huffmanTable(class: 1, id: 0, symbols: [0x00]))
        out.append(segment: 0xDA, Data([1, 1, 0x00, 0, 63, 0]))
        out.append(Data(repeating: 0x00, count: 16))
        out.append(contentsOf: [0xFF, 0xD9])
        return out
    }

    /// A progressive gray JPEG of `width`x`height` (all blocks zero): one DC scan, then the same AC
    /// scan `repeats` times (each codes every block with end-of-band runs, so it is a few bytes
    /// long but makes the decoder visit every block), then EOI.
    static func repeatedScanJPEG(width: Int, height: Int, repeats: Int) -> Data {
        let blocks = ((width + 7) / 8) * ((height + 7) / 8)
        var out = Data([0xFF, 0xD8])
        out.append(segment: 0xDB, Data([0x00]) + Data(repeating: 1, count: 64))
        out.append(segment: 0xC2, Data([8]) + Data(bigEndian16: height) + Data(bigEndian16: width) + Data([1, 1, 0x11, 0]))
        // DC: one symbol, category 0 (difference 0), code "0". AC: end-of-band runs EOB0...EOB14, 4-bit codes.
        out.append(segment: 0xC4, huffmanTable(class: 0, id: 0, symbols: [0x00]))
        out.append(segment: 0xC4, huffmanTable(class: 1, id: 0, symbols: (0...14).map { UInt8($0 << 4) }, length: 4))
        // DC first scan: one 0 bit per block.
        out.append(segment: 0xDA, Data([1, 1, 0x00, 0, 0, 0]))
        var dc = BitWriter()
        for _ in 0..<blocks { dc.write(0, bits: 1) }
        out.append(dc.finish())
        // The AC band 1...63 of every block as end-of-band runs (EOBn: 2^n + n extra bits blocks).
        var ac = BitWriter()
        var left = blocks
        while left > 0 {
            let run = min(left, 32767)
            let n = Int.bitWidth - 1 - run.leadingZeroBitCount
            ac.write(UInt32(n), bits: 4)  // the code of symbol n << 4 is n (canonical, 4 bits each)
            if n > 0 { ac.write(UInt32(run - (1 << n)), bits: n) }
            left -= run
        }
        let acData = ac.finish()
        for _ in 0..<repeats {
            out.append(segment: 0xDA, Data([1, 1, 0x00, 1, 63, 0]))
            out.append(acData)
        }
        out.append(contentsOf: [0xFF, 0xD9])
        return out
    }

    /// A DHT payload: table class/id, then `symbols` all with codes of `length` bits.
    static func huffmanTable(class tableClass: UInt8, id: UInt8, symbols: [UInt8], length: Int = 1) -> Data {
        var counts = [UInt8](repeating: 0, count: 16)
        counts[length - 1] = UInt8(symbols.count)
        return Data([tableClass << 4 | id] + counts + symbols)
    }

    struct BitWriter {
        var bytes = Data()
        var current: UInt32 = 0
        var used = 0

        mutating func write(_ value: UInt32, bits: Int) {
            for shift in stride(from: bits - 1, through: 0, by: -1) {
                current = current << 1 | (value >> UInt32(shift) & 1)
                used += 1
                if used == 8 { flush() }
            }
        }

        private mutating func flush() {
            let byte = UInt8(current & 0xFF)
            bytes.append(byte)
            if byte == 0xFF { bytes.append(0x00) }  // byte stuffing
            current = 0
            used = 0
        }

        /// Pads the last byte with 1 bits, as JPEG requires.
        mutating func finish() -> Data {
            while used != 0 { write(1, bits: 1) }
            return bytes
        }
    }
}

extension Data {
    mutating func append(bigEndian value: UInt32) { Swift.withUnsafeBytes(of: value.bigEndian) { append(contentsOf: $0) } }
    mutating func append(littleEndian value: UInt16) { Swift.withUnsafeBytes(of: value.littleEndian) { append(contentsOf: $0) } }

    init(bigEndian16 value: Int) { self.init([UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]) }

    /// A PNG chunk: length, type, data, CRC-32 of type and data.
    mutating func append(chunk type: String, _ data: Data) {
        append(bigEndian: UInt32(data.count))
        let typed = Data(type.utf8) + data
        append(typed)
        append(bigEndian: typed.withUnsafeBytes { CRC32.checksum($0) })
    }

    /// A JPEG marker segment: FF, marker, length (payload + 2), payload.
    mutating func append(segment marker: UInt8, _ payload: Data) {
        append(contentsOf: [0xFF, marker])
        append(Data(bigEndian16: payload.count + 2))
        append(payload)
    }
}
