import SAMFiles
import SAMFormats

/// What a file is, from its magic bytes, else its extension.
enum FileKind {
    case onnx, hdf5, pytorch, safetensors, npy, blob, samw
    case png(String)

    static func detect(_ path: String) throws(FormatError) -> FileKind {
        let file = try MappedFile(path: path)
        let head = Array(file.bytes.prefix(32))
        if head.starts(with: [0x93, 0x4E, 0x55, 0x4D, 0x50, 0x59]) { return .npy }
        if head.starts(with: SAMWLayout.magic) || path.lowercased().hasSuffix(".samw") { return .samw }
        if head.starts(with: [0x89, 0x48, 0x44, 0x46, 0x0D, 0x0A, 0x1A, 0x0A]) { return .hdf5 }
        if head.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return .png(pngHeader(head)) }
        if head.starts(with: [0x50, 0x4B, 0x03, 0x04]) { return .pytorch }  // a zip: torch.save's format, whatever the name
        let lower = path.lowercased()
        if lower.hasSuffix(".onnx") { return .onnx }
        if lower.hasSuffix(".h5") || lower.hasSuffix(".hdf5") { return .hdf5 }  // a user block may precede the signature
        if lower.hasSuffix(".pth") || lower.hasSuffix(".pt") { return .pytorch }  // legacy or damaged: the reader says which
        if lower.hasSuffix(".safetensors") { return .safetensors }
        if lower.hasSuffix(".npy") { return .npy }  // reported as bad magic by the reader
        if lower.hasSuffix(".bin") || lower.hasSuffix(".raw") || lower.hasSuffix(".data") { return .blob }
        throw FormatError(.unsupported, file: path, "not a tensor file this tool reads (.onnx, .h5/.hdf5, .pth/.pt, .safetensors, .npy, .samw, raw .bin blobs, .png)")
    }

    /// Width, height, bit depth and colour type from a PNG's IHDR chunk.
    private static func pngHeader(_ head: [UInt8]) -> String {
        guard head.count >= 26 else { return "(truncated header)" }
        func be32(_ at: Int) -> Int { head[at..<at + 4].reduce(0) { $0 << 8 | Int($1) } }
        let colour = [0: "gray", 2: "RGB", 3: "palette", 4: "gray+alpha", 6: "RGBA"][Int(head[25])] ?? "colour type \(head[25])"
        return "\(be32(16))x\(be32(20)), \(head[24])-bit \(colour)"
    }
}
