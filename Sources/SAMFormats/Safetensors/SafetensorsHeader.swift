import Foundation
import SAMFiles

/// The JSON header of a safetensors file, as written: `{"name": {"dtype", "shape", "data_offsets"}, ...}`
/// plus an optional `"__metadata__"` map of strings. Values are checked by `SafetensorsFile`.
struct SafetensorsHeader: Decodable {
    struct Entry: Decodable {
        let dtype: String
        let shape: [Int]
        let dataOffsets: [Int]

        enum CodingKeys: String, CodingKey {
            case dtype, shape
            case dataOffsets = "data_offsets"
        }
    }

    static let metadataKey = "__metadata__"

    var entries: [String: Entry] = [:]
    var metadata: [String: String] = [:]

    private struct Key: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    init(from decoder: Decoder) throws {
        let container = try decoder.container(keyedBy: Key.self)
        for key in container.allKeys {
            if key.stringValue == Self.metadataKey {
                metadata = try container.decode([String: String].self, forKey: key)
            } else {
                entries[key.stringValue] = try container.decode(Entry.self, forKey: key)
            }
        }
    }

    /// Parses `bytes`; a JSON or schema error names the tensor it was found in. A name given twice is
    /// refused, as Python's safetensors refuses it: JSONDecoder alone would keep one of the two
    /// definitions silently, and the other's bytes would escape the overlap check.
    static func parse(_ bytes: UnsafeRawBufferPointer, file: String) throws(FormatError) -> SafetensorsHeader {
        do {
            _ = try JSONParser.parse(bytes)
        } catch {
            if let key = error.duplicateKey {
                let tensor = error.duplicateDepth == 0 && key != metadataKey ? key : nil
                throw FormatError(.corrupt, file: file, tensor: tensor,
                                  "header: '\(key)' is defined twice (byte \(error.offset)); a name may appear once")
            }
            throw FormatError(.corrupt, file: file, "header is not valid JSON: \(error)")
        }
        do {
            return try JSONDecoder().decode(SafetensorsHeader.self, from: Data(bytes))
        } catch let error as DecodingError {
            let (path, reason) = describe(error)
            let tensor = path.first.flatMap { $0 == metadataKey ? nil : $0 }
            throw FormatError(.corrupt, file: file, tensor: tensor,
                              "header: \(reason)" + (path.isEmpty ? "" : " at \(path.joined(separator: "."))"))
        } catch {
            throw FormatError(.corrupt, file: file, "header is not valid JSON: \(error)")
        }
    }

    private static func describe(_ error: DecodingError) -> (path: [String], reason: String) {
        func names(_ path: [CodingKey]) -> [String] { path.map { $0.intValue.map(String.init) ?? $0.stringValue } }
        switch error {
        case .typeMismatch(let type, let context): return (names(context.codingPath), "expected \(type)")
        case .valueNotFound(let type, let context): return (names(context.codingPath), "missing \(type) value")
        case .keyNotFound(let key, let context): return (names(context.codingPath), "missing field '\(key.stringValue)'")
        case .dataCorrupted(let context):
            let underlying = context.underlyingError.map { ": \($0)" } ?? ""
            return (names(context.codingPath), "invalid JSON (\(context.debugDescription)\(underlying))")
        @unknown default: return ([], "\(error)")
        }
    }
}
