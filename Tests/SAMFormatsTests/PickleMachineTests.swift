@testable import SAMFormats
import SAMFiles
import Testing

/// Protocol 2 header, the body, STOP.
private func pickle(_ body: [UInt8]) -> [UInt8] { [0x80, 2] + body + [0x2E] }

/// SHORT_BINUNICODE.
private func text(_ value: String) -> [UInt8] {
    let bytes = Array(value.utf8)
    return [0x8C, UInt8(bytes.count)] + bytes
}

private func global(_ module: String, _ name: String) -> [UInt8] { [0x63] + Array("\(module)\n\(name)\n".utf8) }

/// The restricted pickle machine on hand-assembled pickles: the opcodes and corner cases the
/// torch.save fixtures do not reach (opcode encodings from CPython's pickletools).
@Suite("Pickle machine")
struct PickleMachineTests {
    static func run(_ bytes: [UInt8], mode: PickleMachine.Mode = .load, limits: PickleMachine.Limits = .init())
        throws(FormatError) -> (PickleValue, PickleMachine) {
        var result: Result<(PickleValue, PickleMachine), FormatError>!
        bytes.withUnsafeBytes { buffer in
            var machine = PickleMachine(bytes: buffer, file: "test.pth", entry: "archive/data.pkl", mode: mode, limits: limits)
            result = Result { () throws(FormatError) in (try machine.run(), machine) }
        }
        return try result.get()
    }

    /// The machine's top-level dict as [key: value] (values must be scalars here).
    static func dict(_ bytes: [UInt8]) throws -> [String: String] {
        let (root, machine) = try run(bytes)
        guard case .dict(let index) = root else { Issue.record("not a dict: \(root.kind)"); return [:] }
        let dict = machine.heap.dicts[index]
        var out: [String: String] = [:]
        for key in dict.keys {
            switch dict[key]! {
            case .int(let value): out[key.description] = "int \(value)"
            case .bigInt: out[key.description] = "bigint"
            case .float(let value): out[key.description] = "float \(value)"
            case .string(let value): out[key.description] = "str \(value)"
            case .bytes(let count): out[key.description] = "bytes \(count)"
            case .bool(let value): out[key.description] = "bool \(value)"
            case .none: out[key.description] = "None"
            case .tuple(let t): out[key.description] = "tuple \(machine.heap.tuples[t].count)"
            case .list(let l): out[key.description] = "list \(machine.heap.lists[l].count)"
            default: out[key.description] = dict[key]!.kind
            }
        }
        return out
    }

    @Test("integers, floats, strings and bytes in all their encodings")
    func scalars() throws {
        let body: [UInt8] = [0x7D, 0x28]  // EMPTY_DICT, MARK
            + text("binint") + [0x4A, 0xFE, 0xFF, 0xFF, 0xFF]                  // BININT -2
            + text("binint2") + [0x4D, 0x34, 0x12]                             // BININT2 0x1234
            + text("long1") + [0x8A, 0x05, 0x01, 0x00, 0x00, 0x00, 0x80]       // LONG1: -(2^39) + 1
            + text("long1_wide") + [0x8A, 0x09] + [UInt8](repeating: 0xFF, count: 9)  // 9 bytes of sign: -1
            + text("long1_big") + [0x8A, 0x09] + [UInt8](repeating: 0, count: 8) + [0x01]  // 2^64
            + text("long4") + [0x8B, 0x02, 0x00, 0x00, 0x00, 0x00, 0x01]       // LONG4: 256
            + text("float") + [0x47, 0x3F, 0xF8, 0, 0, 0, 0, 0, 0]             // BINFLOAT 1.5 (big-endian)
            + text("bytes") + [0x43, 0x03, 1, 2, 3]                            // SHORT_BINBYTES
            + text("unicode") + [0x58, 0x02, 0, 0, 0, 0xC3, 0xA9]              // BINUNICODE "é"
            + text("true") + [0x88] + text("none") + [0x4E]
            + [0x75]                                                           // SETITEMS
        #expect(try Self.dict(pickle(body)) == [
            "binint": "int -2", "binint2": "int 4660", "long1": "int \(-(Int(1) << 39) + 1)", "long1_wide": "int -1",
            "long1_big": "bigint", "long4": "int 256", "float": "float 1.5", "bytes": "bytes 3", "unicode": "str é",
            "true": "bool true", "none": "None",
        ])
    }

    @Test("memo (BINPUT, LONG_BINPUT, MEMOIZE, gets), DUP, POP, POP_MARK, LIST, DICT, APPENDS, FRAME")
    func structure() throws {
        var body: [UInt8] = [0x95] + [UInt8](repeating: 0, count: 8)  // FRAME of length 0 (only checked)
        body += [0x7D, 0x71, 0x00]                                      // EMPTY_DICT, BINPUT 0
        body += text("x") + [0x72, 0x10, 0x27, 0x00, 0x00]              // "x", LONG_BINPUT 10000
        body += [0x4B, 0x07, 0x94, 0x73]                                // 7, MEMOIZE (as 2), SETITEM x=7
        body += [0x6A, 0x10, 0x27, 0x00, 0x00, 0x32, 0x30]              // LONG_BINGET 10000, DUP, POP: "x" left
        body += [0x30]                                                  // POP it
        body += text("list") + [0x28, 0x4B, 1, 0x4B, 2, 0x6C]           // MARK 1 2 LIST
        body += [0x28, 0x4B, 3, 0x68, 0x02, 0x65]                       // MARK 3 BINGET 2 (7) APPENDS
        body += [0x73]                                                  // SETITEM list=[1,2,3,7]
        body += text("dict") + [0x28] + text("k") + [0x4E, 0x64, 0x73]  // MARK "k" None DICT, SETITEM
        body += [0x28, 0x4B, 9, 0x4B, 9, 0x31]                          // MARK 9 9 POP_MARK: nothing left
        let (root, machine) = try Self.run(pickle(body))
        guard case .dict(let index) = root else { Issue.record("\(root.kind)"); return }
        let dict = machine.heap.dicts[index]
        #expect(dict.keys == [.string("x"), .string("list"), .string("dict")])
        guard case .int(7)? = dict[.string("x")], case .list(let list)? = dict[.string("list")],
              case .dict(let inner)? = dict[.string("dict")] else { Issue.record("wrong values"); return }
        #expect(machine.heap.lists[list].map { if case .int(let n) = $0 { n } else { -1 } } == [1, 2, 3, 7])
        #expect(machine.heap.dicts[inner].keys == [.string("k")])
    }

    @Test("OrderedDict + BUILD (_metadata) and _rebuild_parameter_with_state give a dict of one tensor view")
    func torchCalls() throws {
        var body: [UInt8] = global("collections", "OrderedDict") + [0x29, 0x52, 0x71, 0x00]  // OrderedDict(), BINPUT 0
        body += text("w") + global("torch._utils", "_rebuild_parameter_with_state")
        body += [0x28] + global("torch._utils", "_rebuild_tensor_v2")
        body += [0x28, 0x28] + text("storage") + global("torch", "HalfStorage") + text("3") + text("cuda:0") + [0x4B, 12, 0x74, 0x51]
        body += [0x4B, 2, 0x4B, 2, 0x4B, 5, 0x86, 0x4B, 1, 0x4B, 2, 0x86, 0x89, 0x68, 0x00, 0x74, 0x52]  // offset 2, (2,5), (1,2)
        body += [0x88, 0x68, 0x00, 0x7D, 0x74, 0x52, 0x73]           // True, hooks, {} state, TUPLE, REDUCE, SETITEM
        body += [0x7D, 0x62]                                          // BUILD with {} (attributes: ignored)
        let (root, machine) = try Self.run(pickle(body))
        guard case .dict(let index) = root, case .tensor(let tensor)? = machine.heap.dicts[index][.string("w")] else {
            Issue.record("not {w: tensor}"); return
        }
        let view = machine.heap.tensors[tensor]
        #expect(view.storageOffset == 2 && view.shape == [2, 5] && view.strides == [1, 2])
        #expect(machine.heap.storages[view.storage] == TorchStorageReference(key: "3", elementType: .plain(.float16), elementCount: 12, location: "cuda:0"))
        #expect(machine.globals.map(\.name) == ["collections.OrderedDict", "torch._utils._rebuild_parameter_with_state",
                                                "torch._utils._rebuild_tensor_v2", "torch.HalfStorage"])
    }

    @Test("a STACK_GLOBAL name with control characters is refused with them escaped")
    func escapedGlobal() throws {
        let body = text("os") + text("system\u{1B}[2K") + [0x93]
        let error = #expect(throws: FormatError.self) { _ = try Self.run(pickle(body)) }
        #expect(error?.code == .refusedGlobal)
        #expect(error?.message.contains("'os.system\\u{1B}[2K'") == true, "\(String(describing: error))")
        #expect(error?.message.contains("\u{1B}") == false)
        let (_, machine) = try Self.run(pickle(body + [0x30, 0x4E]), mode: .inventory)
        #expect(machine.globals == [PickleGlobalName(name: "os.system\\u{1B}[2K", accepted: false)])
    }

    struct Refusal: CustomStringConvertible, Sendable {
        var name: String
        var body: [UInt8]
        var code: FormatError.Code
        var mentions: String
        var limits = PickleMachine.Limits()
        var description: String { name }
    }

    static let refusalCases: [Refusal] = [
        Refusal(name: "pop below a MARK", body: [0x4E, 0x28, 0x30], code: .corrupt, mentions: "empty stack"),
        Refusal(name: "SETITEM on a list", body: [0x5D, 0x4E, 0x4E, 0x73], code: .corrupt, mentions: "sets items on a list"),
        Refusal(name: "a list as dict key", body: [0x7D, 0x5D, 0x4E, 0x73], code: .unsupported, mentions: "dict key of kind list"),
        Refusal(name: "REDUCE of a storage type", body: global("torch", "FloatStorage") + [0x29, 0x52], code: .corrupt, mentions: "not callable"),
        Refusal(name: "OrderedDict with arguments", body: global("collections", "OrderedDict") + [0x5D, 0x85, 0x52],
                code: .unsupported, mentions: "OrderedDict built from 1"),
        Refusal(name: "a persistent id that is not a storage", body: text("x") + [0x51], code: .corrupt, mentions: "persistent id"),
        Refusal(name: "one storage key with two sizes",
                body: [0x28] + text("storage") + global("torch", "FloatStorage") + text("0") + text("cpu") + [0x4B, 4, 0x74, 0x51]
                    + [0x28] + text("storage") + global("torch", "FloatStorage") + text("0") + text("cpu") + [0x4B, 5, 0x74, 0x51],
                code: .corrupt, mentions: "storage '0' is named as both"),
        Refusal(name: "a string that is not UTF-8", body: [0x8C, 0x02, 0xC3, 0x28], code: .corrupt, mentions: "not UTF-8"),
        Refusal(name: "a string longer than the pickle", body: [0x58, 0xFF, 0xFF, 0xFF, 0x7F], code: .truncated, mentions: "declares"),
        Refusal(name: "protocol 6", body: [0x80, 0x06], code: .unsupported, mentions: "protocol 6"),
        Refusal(name: "the EXT1 opcode", body: [0x82, 0x01], code: .unsupported, mentions: "0x82"),
        Refusal(name: "memo limit", body: [0x4E, 0x71, 0, 0x71, 1, 0x71, 2], code: .corrupt, mentions: "memo entries",
                limits: { var l = PickleMachine.Limits(); l.memo = 2; return l }()),
        Refusal(name: "object limit", body: [0x5D, 0x5D, 0x5D], code: .corrupt, mentions: "objects",
                limits: { var l = PickleMachine.Limits(); l.objects = 2; return l }()),
        Refusal(name: "element limit", body: [0x5D, 0x28, 0x4E, 0x4E, 0x4E, 0x65], code: .corrupt, mentions: "values in containers",
                limits: { var l = PickleMachine.Limits(); l.elements = 2; return l }()),
    ]

    @Test("malformed or unsupported pickles are typed errors naming the pickle and the byte", arguments: refusalCases)
    func refusals(_ refusal: Refusal) {
        let error = #expect(throws: FormatError.self) { _ = try Self.run(pickle(refusal.body), limits: refusal.limits) }
        #expect(error?.code == refusal.code, "\(String(describing: error))")
        #expect(error?.file == "test.pth")
        #expect(error?.message.contains("archive/data.pkl") == true)
        #expect(error?.message.contains(refusal.mentions) == true, "\(String(describing: error))")
    }
}
