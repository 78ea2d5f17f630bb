import Foundation

/// The C kernels that choose an implementation by CPU (CInt8, CBFloat16), as their tests walk them.
enum KernelImplementations {
    /// Runs `body` at every level from `best` down to `lowest`, each set by `limit`, then gives the
    /// kernels back their own choice (`limit(-1)`).
    static func each(from best: Int32, through lowest: Int32, limit: (Int32) -> Void,
                     _ body: (Int32) throws -> Void) rethrows {
        defer { limit(-1) }
        for level in stride(from: best, through: lowest, by: -1) {
            limit(level)
            try body(level)
        }
    }

    /// Whether /proc/cpuinfo lists `flag` (amx_int8, amx_bf16 ...); nil where it cannot be read.
    static func cpuinfoLists(_ flag: String) -> Bool? {
        guard let cpuinfo = try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8),
              let flags = cpuinfo.split(separator: "\n").first(where: { $0.hasPrefix("flags") }) else { return nil }
        return flags.split(separator: " ").contains { $0 == flag }
    }
}
