import Foundation
import SAMFiles
import SAMFormats
import SAMTensor
import SAMTestSupport
import Testing

/// What reading a PyTorch checkpoint may cost: deflated storages declaring far more than the file can
/// honestly hold are refused when it opens, before anything is inflated; a storage is inflated only
/// when a tensor viewing it is read; copies of views count against one budget.
@Suite("PyTorch checkpoints: memory budgets and lazy reading")
struct PyTorchBudgetTests {
    static func temporary(_ name: String) -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("pth-budget-\(UUID().uuidString)-\(name)").path
    }

    @Test("eight storages that really inflate to 1 GiB each, from a 1 MB stream: refused at open, nothing inflated")
    func bombRefusedAtOpen() throws {
        let (stream, crc) = TorchCheckpointWriter.deflatedZeros(count: 1 << 30)
        var writer = TorchCheckpointWriter()
        for index in 0..<8 {
            writer.storages.append(.init(name: "\(index)", elementCount: 1 << 28, member: .deflated(compressed: stream, size: 1 << 30, crc32: crc)))
            writer.views.append(.init(key: "junk.\(index)", storage: "\(index)", shape: [1 << 28]))
        }
        let path = Self.temporary("bomb.pth")
        try writer.write(to: path)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let started = Date()
        let error = #expect(throws: FormatError.self) { _ = try PyTorchCheckpoint(path: path) }
        #expect(Date().timeIntervalSince(started) < 1)
        #expect(error?.code == .limitExceeded && error?.file == path, "\(String(describing: error))")
        #expect(error?.message.contains("declare 8589934592 bytes") == true && error?.message.contains("PyTorchLimits.maximumExpansion") == true,
                "\(String(describing: error))")
    }

    @Test("a deflated data.pkl declaring 200 MB in a 200 KB file: refused before it is inflated")
    func pickleBomb() throws {
        let (stream, crc) = TorchCheckpointWriter.deflatedZeros(count: 16 << 20)
        var writer = TorchCheckpointWriter()
        writer.pickleMember = .deflated(compressed: Array(repeating: stream, count: 12).flatMap { $0 }, size: 200 << 20, crc32: crc)
        let path = Self.temporary("pickle-bomb.pth")
        try writer.write(to: path)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let error = #expect(throws: FormatError.self) { _ = try PyTorchCheckpoint(path: path) }
        #expect(error?.code == .limitExceeded && error?.message.contains("archive/data.pkl") == true
                && error?.message.contains("PyTorchLimits.maximumExpansion") == true, "\(String(describing: error))")
    }

    @Test("a storage is inflated only when a tensor viewing it is read (a broken stream under another key is never touched)")
    func lazyStorages() throws {
        var writer = TorchCheckpointWriter()
        let values = (0..<6).flatMap { withUnsafeBytes(of: Float($0).bitPattern.littleEndian, Array.init) }
        writer.storages = [
            .init(name: "good", elementCount: 6, member: .stored(values)),
            // Declares 4 KiB from 64 bytes of garbage: inflating it fails, so reading it shows.
            .init(name: "broken", elementCount: 1024, member: .deflated(compressed: [UInt8](repeating: 0xFF, count: 64), size: 4096, crc32: 0)),
        ]
        writer.views = [.init(key: "good.weight", storage: "good", shape: [2, 3]), .init(key: "broken.weight", storage: "broken", shape: [1024])]
        let path = Self.temporary("lazy.pth")
        try writer.write(to: path)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let checkpoint = try PyTorchCheckpoint(path: path)
        #expect(checkpoint.deflatedStorageBytes == 4096 && checkpoint.storageBytes == 4096 + 24)
        #expect(try checkpoint.tensor(named: "good.weight").floats() == [0, 1, 2, 3, 4, 5])
        let error = #expect(throws: FormatError.self) { _ = try checkpoint.tensor(named: "broken.weight") }
        #expect(error?.code == .corrupt && error?.message.contains("deflate") == true, "\(String(describing: error))")
    }

    @Test("copies of strided views count against one budget: 4x the storages' bytes, the view past it named")
    func copyBudget() throws {
        let side = 1024, count = side * side
        var writer = TorchCheckpointWriter()
        writer.storages = [.init(name: "0", elementCount: count, member: .stored([UInt8](repeating: 0, count: count * 4)))]
        // Transposed views copy 4 MiB each; the budget is 4 x 4 MiB + 1 MiB.
        writer.views = (0..<6).map { .init(key: "view.\($0)", storage: "0", shape: [side, side], strides: [1, side]) }
        let path = Self.temporary("views.pth")
        try writer.write(to: path)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let checkpoint = try PyTorchCheckpoint(path: path)
        for index in 0..<4 { _ = try checkpoint.tensor(named: "view.\(index)") }
        let error = #expect(throws: FormatError.self) { _ = try checkpoint.tensor(named: "view.4") }
        #expect(error?.code == .limitExceeded && error?.tensor == "view.4", "\(String(describing: error))")
        #expect(error?.message.contains("PyTorchLimits.memoryAllowance") == true, "\(String(describing: error))")
    }

    @Test("memory the system cannot provide is nil, never a trap")
    func failedAllocation() {
        #expect(TensorStorage(zeroedByteCountIfAvailable: 1 << 60) == nil)
        #expect(TensorStorage(zeroedByteCountIfAvailable: -1) == nil)
        #expect(TensorStorage(zeroedByteCountIfAvailable: 4096)?.bytes.count == 4096)
    }
}
