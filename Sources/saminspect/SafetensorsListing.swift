import SAMFiles
import SAMFormats
import SAMTensor

/// The .safetensors part of saminspect's output: the metadata, then every tensor with its byte range.
struct SafetensorsListing {
    let file: SafetensorsFile
    let withStats: Bool

    func print() throws(FormatError) {
        let bytes = file.entries.reduce(0) { $0 + $1.end - $1.begin }
        Console.line("\(file.path): safetensors, \(file.entries.count) tensors, \(bytes) bytes of data from byte \(file.dataStart)")
        for (key, value) in file.metadata.sorted(by: { $0.key < $1.key }) { Console.line("  metadata \(key) = \(value)") }
        let width = min(file.entries.map(\.name.count).max() ?? 0, 72)
        for entry in file.entries {
            let type = entry.elementType == .bfloat16 ? "bf16>f32" : entry.elementType.description
            var line = "  " + TensorListing.pad(entry.name, width) + "  " + TensorListing.pad(type, 9)
                + TensorListing.pad(Shape.text(entry.shape), 18) + "  data_offsets [\(entry.begin), \(entry.end)]"
            if withStats { line += "  " + TensorListing.statsText(try file.tensor(named: entry.name)) }
            Console.line(line)
        }
    }
}
