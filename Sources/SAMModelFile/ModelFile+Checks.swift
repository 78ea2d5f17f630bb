import SAMFiles
import SAMModel

extension ModelFile {
    /// What a load checks before anything is built or allocated from the file: the stored configuration
    /// is within `ConfigBounds` (`readMetadata`), the components and the dense positional encoding it
    /// names agree with the tensor table, and, unless `verifyingChecksums` is false, every tensor the
    /// model uses still has the CRC-32 the table records. The checksums cost about 0.5 ms per MB on 2
    /// cores (`sambench load`, with and without `--skip-checksums`): MobileSAM's 39 MB loads in 62 ms
    /// instead of 35, a ViT-B-sized 372 MB file in 270-320 ms instead of 125-140 (a busy machine). On a
    /// quiet one, file in the page cache: ViT-H's 2.56 GB f32 file loads in 225 ms, its f16 file in 122 ms.
    package static func checkBeforeBuilding(_ file: SAMWFile, metadata: ModelFileMetadata,
                                           verifyingChecksums: Bool = true) throws(ModelFileError) {
        let components = Set(file.names.compactMap(Sam.component(ofTensor:)))
        guard components == Set(metadata.components) else {
            throw .metadata(file: file.path, "lists components \(metadata.components.sorted()) but its tensors hold \(components.sorted())")
        }
        if let name = metadata.densePositionalEncoding {
            guard let entry = file.entry(named: name) else {
                throw .metadata(file: file.path, "names dense positional encoding '\(TerminalText.escaped(name))', which is not in the tensor table")
            }
            let prompt = metadata.config.promptEncoder
            let expected = [1, prompt.embedDim, prompt.imageEmbeddingSize, prompt.imageEmbeddingSize]
            guard entry.shape == expected else {
                throw .metadata(file: file.path, "dense positional encoding '\(TerminalText.escaped(name))' has shape \(entry.shape), "
                                + "the configuration says \(expected)")
            }
        }
        if verifyingChecksums {
            do { try file.verifyChecksums(of: file.names) } catch { throw .format(error) }
        }
    }
}
