import SAMFiles
/// A restricted pickle interpreter: it executes only the opcodes `torch.save` writes for a state dict
/// and accepts only the globals in `PickleGlobal`, so it builds dicts, lists, tuples, scalars, storage
/// references and tensor views, and nothing else. It cannot call code. Every resource is bounded
/// (stack, marks, memo, objects, container elements, line lengths) and no opcode loops or recurses,
/// so a hostile pickle ends in a `FormatError`, never a crash or a hang.
/// ref: CPython Lib/pickle.py (_Unpickler), Lib/pickletools.py (argument encodings)
struct PickleMachine {
    enum Mode {
        /// Refuse a global the moment a GLOBAL opcode names it.
        case load
        /// Carry refused globals along as inert values, to list every global a pickle names.
        case inventory
    }

    struct Limits {
        var stack = 1 << 20
        var marks = 1 << 12
        var memo = 1 << 20
        var objects = 1 << 21
        /// Values placed into containers, in total: bounds the memory a small pickle can claim.
        var elements = 1 << 24
        var lineLength = 256
    }

    /// For messages: the checkpoint and the pickle's entry in it.
    let file: String
    let entry: String
    let bytes: UnsafeRawBufferPointer
    let mode: Mode
    let limits: Limits

    private(set) var heap = PickleHeap()
    /// Every global the pickle names, in order of first appearance, and whether it is accepted.
    private(set) var globals: [PickleGlobalName] = []
    private var globalsSeen: Set<String> = []
    private var position = 0
    private var opcodeStart = 0
    private var stack: [PickleValue] = []
    /// Stack heights at each MARK: operations never reach below the innermost one (as in Python's metastack).
    private var marks: [Int] = []
    private var memo: [Int: PickleValue] = [:]
    private var elementCount = 0
    private var storageIndex: [String: Int] = [:]

    init(bytes: UnsafeRawBufferPointer, file: String, entry: String, mode: Mode = .load, limits: Limits = Limits()) {
        self.bytes = bytes
        self.file = file
        self.entry = entry
        self.mode = mode
        self.limits = limits
    }

    /// Runs to STOP and returns the pickled value (its containers are in `heap`).
    mutating func run() throws(FormatError) -> PickleValue {
        while position < bytes.count {
            opcodeStart = position
            let code = try readByte()
            guard let opcode = PickleOpcode(rawValue: code) else {
                throw error(.unsupported, "opcode 0x\(String(code, radix: 16)) is not one torch.save writes for a state dict")
            }
            if opcode == .stop { return try pop() }
            try execute(opcode)
        }
        throw FormatError(.truncated, file: file, "pickle '\(entry)' ends without a STOP opcode")
    }

    private mutating func execute(_ opcode: PickleOpcode) throws(FormatError) {
        switch opcode {
        case .proto:
            let version = try readByte()
            guard version <= 5 else { throw error(.unsupported, "pickle protocol \(version)") }
        case .frame:
            let length = try readLength(8)
            guard length <= bytes.count - position else { throw error(.truncated, "a frame of \(length) bytes runs past the end") }
        case .stop: break  // handled by run()
        case .mark:
            guard marks.count < limits.marks else { throw error(.corrupt, "more than \(limits.marks) nested MARKs") }
            marks.append(stack.count)
        case .pop: _ = try pop()
        case .popMark: _ = try popMark()
        case .dup: try push(try top())
        case .none: try push(.none)
        case .newTrue: try push(.bool(true))
        case .newFalse: try push(.bool(false))
        case .binInt: try push(.int(Int(Int32(bitPattern: try readUInt(4, as: UInt32.self)))))
        case .binInt1: try push(.int(Int(try readByte())))
        case .binInt2: try push(.int(Int(try readUInt(2, as: UInt16.self))))
        case .long1: try push(try readLong(lengthBytes: 1))
        case .long4: try push(try readLong(lengthBytes: 4))
        case .binFloat: try push(.float(Double(bitPattern: UInt64(bigEndian: try readUInt(8, as: UInt64.self)))))
        case .binUnicode, .binString: try push(.string(try readString(lengthBytes: 4)))
        case .shortBinUnicode, .shortBinString: try push(.string(try readString(lengthBytes: 1)))
        case .binUnicode8: try push(.string(try readString(lengthBytes: 8)))
        case .binBytes: try push(.bytes(count: try skip(lengthBytes: 4)))
        case .shortBinBytes: try push(.bytes(count: try skip(lengthBytes: 1)))
        case .binBytes8: try push(.bytes(count: try skip(lengthBytes: 8)))
        case .emptyDict: try push(try newDict())
        case .emptyList: try push(try newList([]))
        case .emptyTuple: try push(try newTuple([]))
        case .tuple: try push(try newTuple(try popMark()))
        case .tuple1, .tuple2, .tuple3:
            let count = Int(opcode.rawValue - PickleOpcode.tuple1.rawValue) + 1
            var items: [PickleValue] = []
            for _ in 0..<count { items.append(try pop()) }
            try push(try newTuple(items.reversed()))
        case .list: try push(try newList(try popMark()))
        case .dict:
            let items = try popMark()
            let dict = try newDict()
            try setItems(items, in: dict)
            try push(dict)
        case .append: try append([try pop()], to: try top())
        case .appends:
            let items = try popMark()
            try append(items, to: try top())
        case .setItem:
            let value = try pop()
            let key = try pop()
            try setItems([key, value], in: try top())
        case .setItems:
            let items = try popMark()
            try setItems(items, in: try top())
        case .global:
            let module = try readLine()
            let name = try readLine()
            try push(try resolve(module: module, name: name))
        case .stackGlobal:
            let name = try pop(), module = try pop()
            guard case .string(let nameText) = name, case .string(let moduleText) = module else {
                throw error(.corrupt, "STACK_GLOBAL needs two strings, got \(module.kind) and \(name.kind)")
            }
            try push(try resolve(module: moduleText, name: nameText))
        case .inst:
            // Protocol 0's call-a-class opcode: torch.save never writes it; refused naming its global.
            let module = try readLine()
            let name = try readLine()
            let global = try resolve(module: module, name: name)
            guard case .refused(let refused) = global else {
                throw error(.unsupported, "the INST opcode (calling \(global.kind)) is not one torch.save writes")
            }
            _ = try popMark()
            try push(.refused(refused))
        case .reduce:
            let arguments = try pop()
            let callable = try pop()
            try push(try call(callable, arguments))
        case .build:
            let state = try pop()
            try build(try top(), state: state)
        case .binPersID: try push(try persistentLoad(try pop()))
        case .binPut: try put(Int(try readByte()))
        case .longBinPut: try put(Int(try readUInt(4, as: UInt32.self)))
        case .memoize: try put(memo.count)
        case .binGet: try push(try get(Int(try readByte())))
        case .longBinGet: try push(try get(Int(try readUInt(4, as: UInt32.self))))
        }
    }

    // MARK: - Globals

    private mutating func resolve(module: String, name: String) throws(FormatError) -> PickleValue {
        // STACK_GLOBAL names come from arbitrary strings: escape control characters, so a listing or a
        // message shows the name as it is and a terminal cannot be made to hide it.
        let dotted = (module + "." + name).unicodeScalars.map { scalar in
            (0x20..<0x7F).contains(scalar.value) ? String(scalar) : scalar.escaped(asASCII: true)
        }.joined()
        let global = PickleGlobal.named(module: module, name: name)
        if globalsSeen.insert(dotted).inserted { globals.append(PickleGlobalName(name: dotted, accepted: global != nil)) }
        if let global { return .global(global) }
        if mode == .inventory { return .refused(dotted) }
        throw FormatError(.refusedGlobal, file: file,
                          "pickle '\(entry)' byte \(opcodeStart): refused global '\(dotted)': a state dict needs only \(PickleGlobal.acceptedText); nothing was run")
    }

    // MARK: - Stack, marks, memo

    private mutating func push(_ value: PickleValue) throws(FormatError) {
        guard stack.count < limits.stack else { throw error(.corrupt, "more than \(limits.stack) values on the stack") }
        stack.append(value)
    }

    private mutating func pop() throws(FormatError) -> PickleValue {
        guard stack.count > (marks.last ?? 0) else { throw error(.corrupt, "pops from an empty stack") }
        return stack.removeLast()
    }

    private func top() throws(FormatError) -> PickleValue {
        guard stack.count > (marks.last ?? 0), let value = stack.last else { throw error(.corrupt, "reads an empty stack") }
        return value
    }

    /// The values pushed since the innermost MARK, which is removed.
    private mutating func popMark() throws(FormatError) -> [PickleValue] {
        guard let start = marks.popLast() else { throw error(.corrupt, "needs a MARK and there is none") }
        let items = Array(stack[start...])
        stack.removeSubrange(start...)
        return items
    }

    private mutating func put(_ index: Int) throws(FormatError) {
        if memo[index] == nil {
            guard memo.count < limits.memo else { throw error(.corrupt, "more than \(limits.memo) memo entries") }
        }
        memo[index] = try top()
    }

    private func get(_ index: Int) throws(FormatError) -> PickleValue {
        guard let value = memo[index] else { throw error(.corrupt, "reads memo entry \(index), which was never written") }
        return value
    }

    // MARK: - Containers

    private mutating func claim(objects: Int = 1, elements: Int) throws(FormatError) {
        guard heap.objectCount + objects <= limits.objects else { throw error(.corrupt, "builds more than \(limits.objects) objects") }
        elementCount += elements
        guard elementCount <= limits.elements else { throw error(.corrupt, "holds more than \(limits.elements) values in containers") }
    }

    private mutating func newTuple(_ items: [PickleValue]) throws(FormatError) -> PickleValue {
        try claim(elements: items.count)
        heap.tuples.append(items)
        return .tuple(heap.tuples.count - 1)
    }

    private mutating func newList(_ items: [PickleValue]) throws(FormatError) -> PickleValue {
        try claim(elements: items.count)
        heap.lists.append(items)
        return .list(heap.lists.count - 1)
    }

    private mutating func newDict() throws(FormatError) -> PickleValue {
        try claim(elements: 0)
        heap.dicts.append(PickleDict())
        return .dict(heap.dicts.count - 1)
    }

    private mutating func append(_ items: [PickleValue], to target: PickleValue) throws(FormatError) {
        switch target {
        case .list(let index):
            try claim(objects: 0, elements: items.count)
            heap.lists[index].append(contentsOf: items)
        case .refused: break
        default: throw error(.corrupt, "appends to a \(target.kind)")
        }
    }

    private mutating func setItems(_ items: [PickleValue], in target: PickleValue) throws(FormatError) {
        guard items.count % 2 == 0 else { throw error(.corrupt, "sets dict items from an odd number of values") }
        switch target {
        case .dict(let index):
            try claim(objects: 0, elements: items.count / 2)
            for pair in stride(from: 0, to: items.count, by: 2) {
                guard let key = PickleKey(items[pair]) else {
                    throw error(.unsupported, "a dict key of kind \(items[pair].kind)")
                }
                heap.dicts[index].set(key, items[pair + 1])
            }
        case .refused: break
        default: throw error(.corrupt, "sets items on a \(target.kind)")
        }
    }

    // MARK: - Calls (only the accepted globals; see PickleGlobal)

    private mutating func call(_ callable: PickleValue, _ arguments: PickleValue) throws(FormatError) -> PickleValue {
        guard case .tuple(let tuple) = arguments else {
            throw error(.corrupt, "REDUCE with \(arguments.kind) arguments instead of a tuple")
        }
        let arguments = heap.tuples[tuple]
        switch callable {
        case .refused(let name):
            return .refused(name)
        case .global(.orderedDict):
            // OrderedDict's own __reduce__ passes no arguments; items follow as SETITEMS.
            guard arguments.isEmpty else { throw error(.unsupported, "OrderedDict built from \(arguments.count) arguments") }
            return try newDict()
        case .global(.rebuildTensor):
            return try rebuildTensor(arguments)
        case .global(.rebuildParameter), .global(.rebuildParameterWithState):
            guard (3...4).contains(arguments.count), case .tensor = arguments[0] else {
                throw error(.corrupt, "\(callable.kind) needs (tensor, requires_grad, hooks[, state])")
            }
            return arguments[0]
        default:
            throw error(.corrupt, "REDUCE calls a \(callable.kind), which is not callable")
        }
    }

    /// `_rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad, backward_hooks[, metadata])`.
    private mutating func rebuildTensor(_ arguments: [PickleValue]) throws(FormatError) -> PickleValue {
        guard (6...7).contains(arguments.count), case .storage(let storage) = arguments[0],
              case .int(let offset) = arguments[1] else {
            throw error(.corrupt, "_rebuild_tensor_v2 needs (storage, offset, size, stride, requires_grad, hooks)")
        }
        let shape = try integers(arguments[2], "size")
        let strides = try integers(arguments[3], "stride")
        try claim(elements: shape.count + strides.count)
        heap.tensors.append(PickleTensor(storage: storage, storageOffset: offset, shape: shape, strides: strides))
        return .tensor(heap.tensors.count - 1)
    }

    /// A tuple of at most 64 ints (a tensor's size or stride).
    private func integers(_ value: PickleValue, _ what: String) throws(FormatError) -> [Int] {
        guard case .tuple(let index) = value, heap.tuples[index].count <= 64 else {
            throw error(.corrupt, "a tensor's \(what) is not a tuple of at most 64 ints")
        }
        var result: [Int] = []
        for item in heap.tuples[index] {
            guard case .int(let number) = item else { throw error(.corrupt, "a tensor's \(what) holds a \(item.kind)") }
            result.append(number)
        }
        return result
    }

    /// BINPERSID: `('storage', torch.FloatStorage, key, location, numel)`. One key always names one storage.
    private mutating func persistentLoad(_ id: PickleValue) throws(FormatError) -> PickleValue {
        guard case .tuple(let index) = id, heap.tuples[index].count == 5,
              case .string("storage") = heap.tuples[index][0],
              case .global(.storageType(let elementType, _)) = heap.tuples[index][1],
              case .string(let key) = heap.tuples[index][2], case .string(let location) = heap.tuples[index][3],
              case .int(let count) = heap.tuples[index][4], count >= 0 else {
            throw error(.corrupt, "a persistent id that is not ('storage', torch.<Type>Storage, key, location, numel)")
        }
        let storage = TorchStorageReference(key: key, elementType: elementType, elementCount: count, location: location)
        if let known = storageIndex[key] {
            let first = heap.storages[known]
            guard first.elementType == elementType, first.elementCount == count else {
                throw error(.corrupt, "storage '\(key)' is named as both \(first.elementType) x \(first.elementCount) and \(elementType) x \(count)")
            }
            return .storage(known)
        }
        try claim(elements: 0)
        heap.storages.append(storage)
        storageIndex[key] = heap.storages.count - 1
        return .storage(heap.storages.count - 1)
    }

    /// BUILD sets Python attributes (an OrderedDict's `_metadata`, a Parameter's state): nothing a tensor needs.
    private func build(_ target: PickleValue, state: PickleValue) throws(FormatError) {
        switch target {
        case .dict, .tensor, .refused: return
        default: throw error(.corrupt, "BUILD on a \(target.kind)")
        }
    }

    // MARK: - Reading arguments

    private func error(_ code: FormatError.Code, _ message: String) -> FormatError {
        FormatError(code, file: file, "pickle '\(entry)' byte \(opcodeStart): \(message)")
    }

    private mutating func readByte() throws(FormatError) -> UInt8 {
        guard position < bytes.count else { throw error(.truncated, "ends inside an opcode's argument") }
        defer { position += 1 }
        return bytes[position]
    }

    private mutating func readUInt<T: FixedWidthInteger>(_ count: Int, as: T.Type) throws(FormatError) -> T {
        guard count <= bytes.count - position else { throw error(.truncated, "ends inside an opcode's argument") }
        defer { position += count }
        return T(littleEndian: bytes.loadUnaligned(fromByteOffset: position, as: T.self))
    }

    /// A length field of 1, 4 or 8 bytes, checked against what is left of the pickle.
    private mutating func readLength(_ width: Int) throws(FormatError) -> Int {
        let length: UInt64
        switch width {
        case 1: length = UInt64(try readByte())
        case 4: length = UInt64(try readUInt(4, as: UInt32.self))
        default: length = try readUInt(8, as: UInt64.self)
        }
        guard length <= UInt64(bytes.count - position) else {
            throw error(.truncated, "declares \(length) bytes, \(bytes.count - position) are left")
        }
        return Int(length)
    }

    private mutating func readString(lengthBytes: Int) throws(FormatError) -> String {
        let length = try readLength(lengthBytes)
        defer { position += length }
        guard let text = String(validating: bytes[position..<position + length], as: UTF8.self) else {
            throw error(.corrupt, "a string that is not UTF-8")
        }
        return text
    }

    private mutating func skip(lengthBytes: Int) throws(FormatError) -> Int {
        let length = try readLength(lengthBytes)
        position += length
        return length
    }

    /// A GLOBAL/INST argument line: printable ASCII up to a newline.
    private mutating func readLine() throws(FormatError) -> String {
        let start = position
        while position < bytes.count, bytes[position] != 0x0A {
            guard position - start < limits.lineLength, (0x20..<0x7F).contains(bytes[position]) else {
                throw error(.corrupt, "a global name that is not a short printable line")
            }
            position += 1
        }
        guard position < bytes.count else { throw error(.truncated, "ends inside a global name") }
        defer { position += 1 }
        return String(decoding: bytes[start..<position], as: UTF8.self)
    }

    /// LONG1/LONG4: little-endian two's complement of the given length; wider than 64 bits is `.bigInt`.
    private mutating func readLong(lengthBytes: Int) throws(FormatError) -> PickleValue {
        let length = try readLength(lengthBytes)
        let digits = bytes[position..<position + length]
        position += length
        guard let last = digits.last else { return .int(0) }
        let fill: UInt8 = last & 0x80 != 0 ? 0xFF : 0x00
        // Bytes past the eighth must only extend the sign of the eighth.
        if length > 8 {
            guard digits.dropFirst(8).allSatisfy({ $0 == fill }), (digits[digits.startIndex + 7] & 0x80 != 0) == (fill == 0xFF) else {
                return .bigInt
            }
        }
        var value: UInt64 = 0
        for index in 0..<8 {
            let byte = index < length ? digits[digits.startIndex + index] : fill
            value |= UInt64(byte) << (8 * UInt64(index))
        }
        return .int(Int(Int64(bitPattern: value)))
    }
}
