import Foundation

/// Why a configuration file could not be used.
public struct ConfigError: Error, CustomStringConvertible, Equatable {
    public let file: String
    public let message: String
    public var description: String { "\(file): \(message)" }
}

extension SAMConfig {
    /// A config.json is a few hundred bytes; anything past this is not one.
    public static let maximumFileBytes = 1 << 20

    /// Reads a config.json in this type's own key names (what `converters/export_reference.py` writes;
    /// keys it does not know, such as derived geometry, are ignored), then checks its sizes
    /// (`validate`). Only a regular file is read: a FIFO or a device is refused at once.
    public init(contentsOf path: String) throws(ConfigError) {
        let data = try ConfigFile.contents(of: path, limit: Self.maximumFileBytes)
        do { self = try JSONDecoder().decode(SAMConfig.self, from: data) } catch {
            throw ConfigError(file: path, message: "not a SAM config: \(error)")
        }
        try validate(file: path)
    }

    /// Compact JSON of this configuration (stored in .samw metadata).
    public func jsonData() -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return (try? encoder.encode(self)) ?? Data("{}".utf8)  // a struct of numbers and arrays always encodes
    }
}
