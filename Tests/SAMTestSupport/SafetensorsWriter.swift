import Foundation
import SAMTensor

/// Writes float32 tensors as a safetensors file (what `safetensors.torch.save_file` writes: an
/// 8-byte header length, the JSON header, the data in header order), so a test can hand the
/// importer a transformers checkpoint with a tensor removed or changed.
public enum SafetensorsWriter {
    public static func write(_ tensors: [String: Tensor], to path: String) throws {
        var header: [String: Any] = ["__metadata__": ["format": "pt"]]
        var data = Data()
        for name in tensors.keys.sorted() {
            let values = tensors[name]!.floats()
            let start = data.count
            values.withUnsafeBufferPointer { data.append(contentsOf: UnsafeRawBufferPointer($0)) }
            header[name] = ["dtype": "F32", "shape": tensors[name]!.shape, "data_offsets": [start, data.count]]
        }
        var text = try JSONSerialization.data(withJSONObject: header, options: [.sortedKeys])
        // Pad the header with spaces to 8 bytes, as safetensors does, so the data stays aligned.
        text.append(contentsOf: [UInt8](repeating: 0x20, count: (8 - text.count % 8) % 8))
        var bytes = withUnsafeBytes(of: UInt64(text.count).littleEndian) { Data($0) }
        bytes.append(text)
        bytes.append(data)
        try bytes.write(to: URL(fileURLWithPath: path))
    }
}
