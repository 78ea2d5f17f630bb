import SAMFiles
/// `torch.save`'s formats before the zip one (torch < 1.6, or `_use_new_zipfile_serialization=False`):
/// a pickle stream (it starts with a PROTO opcode and a magic number) or, older still, a tar file.
/// Not read: they interleave pickles with raw storages, and a current torch re-saves them as a zip.
enum LegacyCheckpoint {
    static func refuse(_ bytes: UnsafeRawBufferPointer, file: String) throws(FormatError) {
        let pickleStream = bytes.count >= 2 && bytes[0] == PickleOpcode.proto.rawValue
        let tar = bytes.count >= 262 && Array(bytes[257..<262]) == Array("ustar".utf8)
        guard pickleStream || tar else { return }
        throw FormatError(.unsupported, file: file,
                          "a PyTorch checkpoint in the legacy \(tar ? "tar" : "pickle-stream") format (torch < 1.6 or "
                          + "_use_new_zipfile_serialization=False); re-save it with a current torch: "
                          + "torch.save(torch.load(path, weights_only=True), new_path)")
    }
}
