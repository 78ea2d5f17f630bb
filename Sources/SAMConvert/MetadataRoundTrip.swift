import Foundation
import SAMFiles
import SAMFormats
import SAMModelFile

/// The metadata a `.samw` carries goes through JSON as the model file stores it (numbers as JSON
/// numbers, read back as doubles) and must come back equal: an integer beyond 2^53 would come back
/// rounded, and a model whose metadata does not read back as written would not load. Checked before
/// anything is written.
enum MetadataRoundTrip {
    static func check(_ metadata: ModelFileMetadata, output: String) throws(ConversionFailure) {
        let readBack: ModelFileMetadata
        do {
            let stored = try JSONDecoder().decode(JSONValue.self, from: JSONEncoder().encode(metadata))
            readBack = try JSONDecoder().decode(ModelFileMetadata.self, from: JSONEncoder().encode(stored))
        } catch {
            throw ConversionFailure("\(output): the model's metadata does not read back: \(error); nothing was written")
        }
        guard readBack == metadata else {
            throw ConversionFailure("\(output): the model's metadata does not read back as written (a number too large to store exactly); nothing was written")
        }
    }
}
