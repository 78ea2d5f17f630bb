import Foundation
import SAMFiles
import SAMFormats
import SAMTensor

/// The .samw part of saminspect's output: the metadata as JSON, then every tensor.
struct SAMWListing {
    let file: SAMWFile
    let withStats: Bool

    func print() throws(FormatError) {
        try file.verifyChecksums()
        let bytes = file.entries.reduce(0) { $0 + $1.length }
        Console.line("\(file.path): .samw model, \(file.entries.count) tensors, \(bytes) bytes of data, checksums verified")
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        if let json = try? encoder.encode(file.metadata), let text = String(data: json, encoding: .utf8) {
            Console.line("  metadata: " + text)
        }
        let width = min(file.entries.map(\.name.count).max() ?? 0, 72)
        for entry in file.entries {
            var line = "  " + TensorListing.pad(entry.name, width) + "  " + TensorListing.pad(entry.dtype, 5)
                + TensorListing.pad(Shape.text(entry.shape), 18) + "  @\(entry.offset) +\(entry.length) B"
            if withStats {
                // A quantized weight's statistics are those of the values it stands for.
                let tensor = SAMWFile.isQuantized(entry)
                    ? try file.quantizedWeight(named: entry.name).floatTensorForListing
                    : try file.tensor(named: entry.name)
                line += "  " + TensorListing.statsText(tensor)
            }
            Console.line(line)
        }
    }
}

extension QuantizedWeight {
    /// The dequantized values as a float32 tensor (one weight at a time, for statistics).
    var floatTensorForListing: Tensor { Tensor(shape: shape, floats: floats()) }
}
