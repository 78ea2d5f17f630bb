import Foundation
import SAMModel

/// Explicit point grids from a JSON file (`samrun --point-grids FILE`, the format
/// converters/export_amg.py takes): a list holding one grid per crop layer, each a list of [x, y]
/// points in 0...1 of the crop (upstream's `point_grids`, `List[np.ndarray]` of shape [N, 2]).
/// The values' bounds are `AutomaticMaskSettings.problems`'s to check.
package enum PointGridsFile {
    /// Far above any grid set the settings accept in practice (a 1024x1024 grid written out is
    /// ~45 MB); a larger file is refused before it is read.
    package static let maximumBytes = 64 << 20

    package static func read(_ path: String) throws(EverythingError) -> [[[Double]]] {
        func failure(_ reason: String) -> EverythingError { .invalidSettings(["--point-grids \(path): \(reason)"]) }
        let data: Data
        do { data = try ConfigFile.contents(of: path, limit: maximumBytes, what: "a point-grid file") } catch { throw failure(error.message) }
        do {
            return try JSONDecoder().decode([[[Double]]].self, from: data)
        } catch {
            throw failure("not a JSON list of point grids (one list of [x, y] points in 0...1 per crop layer)")
        }
    }
}
