import Foundation
import SAMFormats
import SAMModelFile

extension Provenance {
    /// Every input file with its sha256 and size.
    public static func describing(_ files: [String], converterVersion: String) throws(ConversionFailure) -> Provenance {
        var sources: [SourceFile] = []
        for file in files {
            do {
                let mapped = try MappedFile(path: file)
                sources.append(SourceFile(path: file, sha256: SHA256.hex(mapped.bytes), bytes: mapped.count))
            } catch {
                throw ConversionFailure("\(error)")
            }
        }
        return Provenance(converter: "samconvert", converterVersion: converterVersion, sources: sources)
    }
}
