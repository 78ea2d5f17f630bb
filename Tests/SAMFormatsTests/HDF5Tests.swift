import Foundation
import SAMFormats
import SAMTensor
import Testing

@Suite("HDF5 reader")
struct HDF5Tests {
    /// The datasets of hdf5_flat.h5 / hdf5_nested.h5, sorted by key (see make_format_fixtures.py).
    static let expected: [(key: String, dtype: DType, shape: [Int])] = [
        ("encoder.layers.0.conv.bias", .float16, [4]),
        ("encoder.layers.0.conv.weight", .float32, [4, 2, 3, 3]),
        ("encoder.layers.0.norm.num_batches_tracked", .int64, []),
        ("encoder.layers.0.norm.running_var", .float64, [4]),
        ("encoder.layers.1.bytes", .uint8, [5]),
        ("encoder.layers.1.index", .int64, [2, 3]),
        ("encoder.layers.1.mask", .bool, [2, 2]),
        ("encoder.layers.1.offsets", .int32, [3, 2]),
    ]

    static let weightAttributes = ["layout": "OIHW", "scale": "0.5", "dims": "[4, 2, 3, 3]", "tag": "fixed"]

    static func checkValues(_ name: String, _ tensor: Tensor, sourceLocation: SourceLocation = #_sourceLocation) {
        if name.hasSuffix("num_batches_tracked") {
            #expect(tensor.dtype == .int64, sourceLocation: sourceLocation)
            #expect(tensor.shape == [], sourceLocation: sourceLocation)
            #expect(tensor.int64s() == [12_345_678_901], sourceLocation: sourceLocation)
        } else if let entry = expected.first(where: { $0.key == name }) {
            expectFormula(tensor, entry.dtype, entry.shape, sourceLocation: sourceLocation)
        } else {
            Issue.record("unexpected dataset \(name)", sourceLocation: sourceLocation)
        }
    }

    @Test("flat file: dotted names are the keys, with dtypes, shapes and attributes")
    func flatListing() throws {
        let file = try HDF5File(path: Fixtures.path("hdf5_flat.h5"))
        #expect(file.datasets.map(\.key) == Self.expected.map(\.key))
        #expect(file.datasets.map(\.path) == Self.expected.map { "/" + $0.key })
        #expect(file.datasets.map(\.dtype) == Self.expected.map(\.dtype))
        #expect(file.datasets.map(\.shape) == Self.expected.map(\.shape))
        for dataset in file.datasets {
            #expect(dataset.attributes == (dataset.key == "encoder.layers.0.conv.weight" ? Self.weightAttributes : [:]), "\(dataset.key)")
        }
    }

    @Test("nested file: group paths become the same dotted keys")
    func nestedListing() throws {
        let file = try HDF5File(path: Fixtures.path("hdf5_nested.h5"))
        #expect(file.datasets.map(\.key) == Self.expected.map(\.key))
        #expect(file.datasets.map(\.path) == Self.expected.map { "/" + $0.key.replacingOccurrences(of: ".", with: "/") })
        #expect(file.datasets.map(\.dtype) == Self.expected.map(\.dtype))
        #expect(file.datasets.map(\.shape) == Self.expected.map(\.shape))
        #expect(file.dataset(named: "encoder.layers.0.conv.weight")?.attributes == Self.weightAttributes)
    }

    @Test("every dataset has the closed-form values", arguments: ["hdf5_flat.h5", "hdf5_nested.h5"])
    func values(fileName: String) throws {
        let file = try HDF5File(path: Fixtures.path(fileName))
        for entry in Self.expected {
            Self.checkValues(entry.key, try file.tensor(named: entry.key))
        }
    }

    @Test("readAll gives every key, and flat and nested files are bit-identical")
    func readAll() throws {
        let flat = try HDF5File(path: Fixtures.path("hdf5_flat.h5")).readAll()
        let nested = try HDF5File(path: Fixtures.path("hdf5_nested.h5")).readAll()
        #expect(flat.keys.sorted() == Self.expected.map(\.key))
        #expect(nested.keys.sorted() == Self.expected.map(\.key))
        for (key, tensor) in flat {
            Self.checkValues(key, tensor)
            #expect(nested[key].map(tensor.isBitwiseEqual) == true, "\(key)")
        }
    }

    @Test("the int64 scalar num_batches_tracked has shape [] and value 12345678901")
    func scalar() throws {
        let file = try HDF5File(path: Fixtures.path("hdf5_flat.h5"))
        let tensor = try file.tensor(named: "encoder.layers.0.norm.num_batches_tracked")
        #expect(tensor.shape == [])
        #expect(tensor.elementCount == 1)
        #expect(tensor.int64s() == [12_345_678_901])
    }

    @Test("datasets are found by key and by HDF5 path")
    func lookupByPath() throws {
        let nested = try HDF5File(path: Fixtures.path("hdf5_nested.h5"))
        let byKey = try nested.tensor(named: "encoder.layers.1.offsets")
        let byPath = try nested.tensor(named: "/encoder/layers/1/offsets")
        let byRelativePath = try nested.tensor(named: "encoder/layers/1/offsets")
        #expect(byKey.isBitwiseEqual(to: byPath))
        #expect(byKey.isBitwiseEqual(to: byRelativePath))
        let flat = try HDF5File(path: Fixtures.path("hdf5_flat.h5"))
        #expect(try flat.tensor(named: "/encoder.layers.1.offsets").isBitwiseEqual(to: byKey))
    }

    @Test("an unknown name is missingTensor naming file and tensor")
    func missingDataset() throws {
        let path = Fixtures.path("hdf5_flat.h5")
        let file = try HDF5File(path: path)
        #expect(file.dataset(named: "encoder.layers.2.conv.weight") == nil)
        expectFormatError(.missingTensor, file: path, tensor: "encoder.layers.2.conv.weight") {
            _ = try file.tensor(named: "encoder.layers.2.conv.weight")
        }
    }
}
