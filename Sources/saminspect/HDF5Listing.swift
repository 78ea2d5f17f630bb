import SAMFiles
import SAMFormats
import SAMTensor

/// The HDF5 part of saminspect's output.
struct HDF5Listing {
    let file: HDF5File
    let withStats: Bool

    func print() throws(FormatError) {
        let datasets = file.datasets
        let totalBytes = datasets.reduce(0) { $0 + ((try? Shape.byteCount($1.shape, $1.dtype)) ?? 0) }
        Console.line("\(file.path): HDF5, \(datasets.count) datasets, \(totalBytes) bytes of data")
        let width = min(datasets.map(\.key.count).max() ?? 0, 72)
        for dataset in datasets {
            var line = "  " + TensorListing.pad(dataset.key, width) + "  " + TensorListing.pad(dataset.dtype.shortName, 5)
                + Shape.text(dataset.shape)
            if dataset.path.dropFirst().contains("/") { line += "  (\(dataset.path))" }
            if dataset.storage.layout != .contiguous || !dataset.storage.filters.isEmpty { line += "  [\(dataset.storage)]" }
            if withStats { line += "  " + TensorListing.statsText(try file.tensor(dataset)) }
            if !dataset.attributes.isEmpty {
                line += "  attrs: " + dataset.attributes.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
            }
            Console.line(line)
        }
    }
}
