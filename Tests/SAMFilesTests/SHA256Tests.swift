import Foundation
@testable import SAMFiles
import SAMTestSupport
import Testing

@Suite("SHA-256")
struct SHA256Tests {
    @Test("Standard test vectors (FIPS 180-2 examples)")
    func vectors() {
        func digest(_ text: String) -> String { Array(text.utf8).withUnsafeBytes { SHA256.hex($0) } }
        #expect(digest("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(digest("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(digest("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")
                == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
        // python3 -c "import hashlib; print(hashlib.sha256(b'a' * 1000).hexdigest())" (crosses a block boundary)
        #expect(digest(String(repeating: "a", count: 1000)) == "41edece42d63e8d9bf515a9ba6932e1c20cbc9f5a5d134645adb5db1b9737ea3")
    }

    @Test("A 39 MB buffer, hashed in 16 MB steps, gives Python's SHA-256 and CRC-32")
    func largeBuffer() throws {
        // b = bytes((i*7+3) & 255 for i in range(1 << 16)) * 600
        // hashlib.sha256(b).hexdigest(), zlib.crc32(b)
        let pattern = (0..<(1 << 16)).map { UInt8(truncatingIfNeeded: $0 * 7 + 3) }
        let bytes = [[UInt8]](repeating: pattern, count: 600).flatMap { $0 }
        bytes.withUnsafeBytes { buffer in
            #expect(SHA256.hex(buffer) == "39e1334bf644ea995b9db301b53153cf2f5696de0074372fb46930ae3a26b36f")
            #expect(CRC32.checksum(buffer) == 3_754_959_592)
            var stepsAsked = 0
            #expect(throws: SHA256.Stopped.self) { try SHA256.hex(buffer) { stepsAsked += 1; return stepsAsked > 1 } }
            #expect(stepsAsked == 2)
        }
    }

    @Test("The plain C rounds give the same digests as the SHA instructions, at every length and split")
    func portableRoundsAgree() {
        func digest(_ text: String) -> String { Array(text.utf8).withUnsafeBytes { SHA256.hexByPortableRounds($0) } }
        #expect(digest("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(digest(String(repeating: "a", count: 1000)) == "41edece42d63e8d9bf515a9ba6932e1c20cbc9f5a5d134645adb5db1b9737ea3")
        var generator = SplitMix64(seed: 7)
        let bytes = (0..<4099).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
        bytes.withUnsafeBytes { all in
            // Every length through four blocks and then some: padding falls in each place of a block.
            for length in Array(0...300) + [511, 512, 513, 4099] {
                let part = UnsafeRawBufferPointer(rebasing: all[0..<length])
                #expect(SHA256.hex(part) == SHA256.hexByPortableRounds(part), "length \(length)")
            }
        }
    }

    @Test("A file's digest is sha256sum's")
    func fileMatchesSha256sum() throws {
        let path = try TestPaths.temporaryFolder("sha256-file") + "/random.bin"
        var generator = SplitMix64(seed: 11)
        try Data((0..<(3 << 20) + 17).map { _ in UInt8(truncatingIfNeeded: generator.next()) }).write(to: URL(fileURLWithPath: path))
        // coreutils' sha256sum prints the digest first.
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["sha256sum", path]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let printed = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let expected = String(decoding: printed.prefix(64), as: UTF8.self)
        #expect(expected.count == 64)
        #expect(try SHA256.hex(ofFile: path) == expected)
    }
}
