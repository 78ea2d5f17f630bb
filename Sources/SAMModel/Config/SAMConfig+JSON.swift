import Foundation

/// Why a configuration file could not be used.
package struct ConfigError: Error, CustomStringConvertible, Equatable {
    package let file: String
    package let message: String
    package var description: String { "\(file): \(message)" }
}

extension SAMConfig {
    /// A config.json is a few hundred bytes; anything past this is not one.
    package static let maximumFileBytes = 1 << 20

    /// Reads a config.json in this type's own key names (what `converters/export_reference.py` writes;
    /// keys it does not know, such as derived geometry, are ignored), then checks its sizes
    /// (`validate`). Only a regular file is read: a FIFO or a device is refused at once.
    package init(contentsOf path: String) throws(ConfigError) {
        try self.init(json: ConfigFile.contents(of: path, limit: Self.maximumFileBytes), file: path)
    }

    /// `init(contentsOf:)` on a config.json already read from `path` (named in errors).
    package init(json data: Data, file path: String) throws(ConfigError) {
        do { self = try JSONDecoder().decode(SAMConfig.self, from: data) } catch {
            throw ConfigError(file: path, message: "not a SAM config: \(error)")
        }
        // ref: segment_anything/modeling/sam.py Sam.__init__ pixel_mean / pixel_std: a model-level
        // setting upstream (and at the top of converters' config.json); the runtime keeps it with
        // the image encoder whose input it makes.
        if let statistics = try? JSONDecoder().decode(PixelStatistics.self, from: data),
           let mean = statistics.pixelMean, let std = statistics.pixelStd {
            guard mean.count == 3, std.count == 3, mean.allSatisfy(\.isFinite), std.allSatisfy({ $0.isFinite && $0 > 0 }) else {
                throw ConfigError(file: path, message: "pixelMean and pixelStd need 3 finite values each, std positive")
            }
            imageEncoder.preprocessing = ImagePreprocessing(resize: imageEncoder.preprocessing.resize, pixelMean: mean, pixelStd: std)
        }
        try validate(file: path)
    }

    /// The top-level `pixelMean` / `pixelStd` of a config.json, when it has them.
    private struct PixelStatistics: Decodable {
        var pixelMean: [Double]?
        var pixelStd: [Double]?
    }

    /// Compact JSON of this configuration (stored in .samw metadata).
    package func jsonData() -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return (try? encoder.encode(self)) ?? Data("{}".utf8)  // a struct of numbers and arrays always encodes
    }
}
