/// The pickle opcodes the restricted machine executes: those `torch.save` writes for a state dict
/// (protocol 2), plus the protocol-4 framing and STACK_GLOBAL, and a few harmless relatives.
/// ref: CPython Lib/pickletools.py (opcode table), Lib/pickle.py (_Unpickler.load_*)
enum PickleOpcode: UInt8 {
    case proto = 0x80           // \x80 protocol version
    case frame = 0x95           // \x95 8-byte frame length (protocol 4)
    case stop = 0x2E            // .
    case mark = 0x28            // (
    case pop = 0x30             // 0
    case popMark = 0x31         // 1
    case dup = 0x32             // 2
    case none = 0x4E            // N
    case newTrue = 0x88
    case newFalse = 0x89
    case binInt = 0x4A          // J  4-byte signed
    case binInt1 = 0x4B         // K  1-byte unsigned
    case binInt2 = 0x4D         // M  2-byte unsigned
    case long1 = 0x8A           // 1-byte length, little-endian two's complement
    case long4 = 0x8B           // 4-byte length
    case binFloat = 0x47        // G  8-byte big-endian double
    case binUnicode = 0x58      // X  4-byte length, UTF-8
    case shortBinUnicode = 0x8C // 1-byte length
    case binUnicode8 = 0x8D     // 8-byte length
    case binString = 0x54       // T  (Python 2 str, read as UTF-8 like torch.load does)
    case shortBinString = 0x55  // U
    case binBytes = 0x42        // B
    case shortBinBytes = 0x43   // C
    case binBytes8 = 0x8E
    case emptyDict = 0x7D       // }
    case emptyList = 0x5D       // ]
    case emptyTuple = 0x29      // )
    case tuple = 0x74           // t  items since the mark
    case tuple1 = 0x85
    case tuple2 = 0x86
    case tuple3 = 0x87
    case list = 0x6C            // l  items since the mark
    case dict = 0x64            // d  key/value pairs since the mark
    case append = 0x61          // a
    case appends = 0x65         // e
    case setItem = 0x73         // s
    case setItems = 0x75        // u
    case global = 0x63          // c  "module\nname\n"
    case stackGlobal = 0x93     // module and name from the stack
    case inst = 0x69            // i  "module\nname\n", then a call: only ever refused
    case reduce = 0x52          // R  callable(*args)
    case build = 0x62           // b  obj.__setstate__(state)
    case binPersID = 0x51       // Q  persistent id: a storage
    case binPut = 0x71          // q
    case longBinPut = 0x72      // r
    case binGet = 0x68          // h
    case longBinGet = 0x6A      // j
    case memoize = 0x94
}
