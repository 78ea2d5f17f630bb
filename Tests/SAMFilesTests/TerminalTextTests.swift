@testable import SAMFiles
import Testing

@Suite("Names printed escaped: controls and bidi overrides cannot reach the terminal")
struct TerminalTextTests {
    @Test("escape sequences, C1 controls, bidi overrides and separators are shown as escapes")
    func escapes() {
        #expect(TerminalText.escaped("a\u{1B}[31mred\u{1B}[0m") == "a\\x1b[31mred\\x1b[0m")
        #expect(TerminalText.escaped("weight\u{202E}txt.exe") == "weight\\u{202e}txt.exe")
        #expect(TerminalText.escaped("x\u{9B}2J\u{7F}\u{0}") == "x\\x9b2J\\x7f\\x00")
        #expect(TerminalText.escaped("line\u{2028}sep\u{2066}iso\u{2069}") == "line\\u{2028}sep\\u{2066}iso\\u{2069}")
        #expect(TerminalText.escaped("two\nlines\r") == "two\\x0alines\\x0d")
        #expect(TerminalText.escaped("two\nlines\r", keepingNewlines: true) == "two\nlines\\x0d")
    }

    @Test("ordinary names, other scripts and emoji are left as they are")
    func untouched() {
        for text in ["image_encoder.layers.0.blocks.0.attn.qkv.weight", "模型.权重", "poids_é", "🙂 tensor", "/tmp/a b/c.onnx"] {
            #expect(TerminalText.escaped(text) == text)
        }
    }

    @Test("a format error escapes its file, tensor and message")
    func formatError() {
        let error = FormatError(.corrupt, file: "m\u{1B}.onnx", tensor: "w\u{202E}", "bad \u{7}bell")
        #expect(error.description == "m\\x1b.onnx: tensor 'w\\u{202e}': bad \\x07bell [corrupt]")
    }
}
