import SAMFiles
import SAMFormats
import SAMTensor

/// The .pth/.pt part of saminspect's output: the pickle's globals first (a refused one is shown before
/// the read stops on it), then every tensor with where its bytes live.
struct PyTorchListing {
    let path: String
    let withStats: Bool

    func print() throws(FormatError) {
        let globals = try PyTorchCheckpoint.globalInventory(path: path)
        Console.line("\(path): PyTorch checkpoint (torch.save zip)")
        Console.line("  globals: " + globals.map { $0.accepted ? $0.name : "\($0.name) (REFUSED)" }.joined(separator: ", "))
        let checkpoint = try PyTorchCheckpoint(path: path)
        let storages = Dictionary(checkpoint.entries.map { ($0.storage.key, $0.storage) }, uniquingKeysWith: { first, _ in first })
        let storageBytes = storages.values.reduce(0) { $0 + $1.elementCount * $1.elementType.byteSize }
        let place = checkpoint.wrapperKey.map { "under '\($0)'" } ?? "at the top level"
        Console.line("  \(checkpoint.entries.count) tensors \(place) in archive '\(checkpoint.archiveName)', "
                    + "\(storages.count) storages, \(storageBytes) bytes")
        let width = min(checkpoint.entries.map(\.key.count).max() ?? 0, 72)
        for entry in checkpoint.entries {
            let type = entry.elementType == .bfloat16 ? "bf16>f32" : entry.elementType.description
            var line = "  " + TensorListing.pad(entry.key, width) + "  " + TensorListing.pad(type, 9)
                + TensorListing.pad(Shape.text(entry.shape), 18) + "  storage \(entry.storage.key) @\(entry.storageOffset)"
            if !entry.isContiguous { line += " stride \(Shape.text(entry.strides))" }
            if withStats { line += "  " + TensorListing.statsText(try checkpoint.tensor(named: entry.key)) }
            Console.line(line)
        }
        if !checkpoint.ignoredKeys.isEmpty {
            Console.line("  not tensors (left out): " + checkpoint.ignoredKeys.joined(separator: ", "))
        }
    }
}
