import Foundation
@testable import SAMFiles
import Testing

/// The .samw header parser against Foundation's JSONDecoder: the same values where both accept,
/// a refusal with its byte offset where the document is not JSON.
@Suite("JSON parser")
struct JSONParserTests {
    static func parse(_ text: String) -> Result<JSONValue, JSONParser.Failure> {
        Array(text.utf8).withUnsafeBytes { bytes in Result { () throws(JSONParser.Failure) in try JSONParser.parse(bytes) } }
    }

    static let documents = [
        #"{"a": 1, "b": [true, false, null], "c": {"d": "e"}}"#,
        #"  [ -0.5, 12e3, 1E-2, 0, -0, 9007199254740993, 3.141592653589793 ]  "#,
        #""esc \" \\ \/ \b \f \n \r \t \u00e9 \u20AC \uD83D\uDE00 end""#,
        #"{"ünïcødé": "日本語", "empty": "", "nested": [[[]], {}]}"#,
        #"{"tensors": [{"name": "x.weight", "dtype": "f32", "shape": [2, 3], "offset": 64, "length": 24, "crc32": 4294967295}]}"#,
        "123", "\"just a string\"", "null",
    ]

    @Test("gives what JSONDecoder gives", arguments: documents)
    func agreesWithFoundation(_ text: String) throws {
        let foundation = try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8))
        #expect(try Self.parse(text).get() == foundation)
    }

    static let refused: [(text: String, offset: Int)] = [
        ("", 0), ("{", 1), (#"{"a" 1}"#, 5), (#"{"a": 1,}"#, 8), ("[1,]", 3), ("[1 2]", 3), ("01", 0), ("-", 1),
        ("1.", 2), ("1e", 2), (".5", 0), ("tru", 0), ("nul", 0), (#""abc"#, 4), (#""\x""#, 3), (#""\u12G4""#, 5),
        (#""\uD800""#, 7), (#""\uDC00""#, 7), (#""\uD800\u0041""#, 13), ("\"a\u{01}b\"", 2), ("[1] x", 4), ("1e999", 0),
        (#"{"a": 1, "a": 2}"#, 9),
    ]

    @Test("refuses what is not JSON, naming the byte", arguments: 0..<refused.count)
    func refuses(_ index: Int) {
        let (text, offset) = Self.refused[index]
        switch Self.parse(text) {
        case .success(let value): Issue.record("\(text.debugDescription) parsed as \(value)")
        case .failure(let failure): #expect(failure.offset == offset, "\(text.debugDescription): \(failure)")
        }
    }

    @Test("refuses invalid UTF-8 in strings")
    func invalidUTF8() {
        for bytes: [UInt8] in [[0x22, 0xFF, 0x22], [0x22, 0xC3, 0x22], [0x22, 0xED, 0xA0, 0x80, 0x22]] {
            let result = bytes.withUnsafeBytes { raw in Result { () throws(JSONParser.Failure) in try JSONParser.parse(raw) } }
            #expect(throws: JSONParser.Failure.self) { try result.get() }
        }
    }

    @Test("stops deep nesting at its limit instead of the stack")
    func deepNesting() {
        let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        guard case .failure(let failure) = Self.parse(deep) else { Issue.record("parsed"); return }
        #expect(failure.offset == JSONParser.maximumDepth)
        let allowed = String(repeating: "[", count: JSONParser.maximumDepth) + String(repeating: "]", count: JSONParser.maximumDepth)
        #expect((try? Self.parse(allowed).get()) != nil)
    }
}
