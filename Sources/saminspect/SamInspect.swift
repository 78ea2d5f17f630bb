import Foundation
import ArgumentParser
import SAMCommandLine
import SAMFiles
import SAMFormats
import SAMTensor

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `saminspect FILE...`: what is inside ONNX, HDF5, PyTorch, safetensors, .npy and raw tensor files.
@main
struct SamInspect: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "saminspect",
        abstract: "Show what is inside ONNX, HDF5, PyTorch (.pth/.pt), safetensors, .npy and raw blob files.",
        discussion: """
        ONNX: metadata, inputs and outputs (symbolic dims by name), an op histogram, every initializer.
        HDF5: every dataset with dtype, shape and attributes. .samw: metadata and the tensor table (checksums verified). .npy and blobs: shape, dtype, min, max, mean.
        .pth/.pt: every global the pickle names (refused ones marked; nothing is ever run), then every tensor with its storage,
        offset and strides. .safetensors: metadata and every tensor with its data_offsets.
        A raw blob needs --dtype and --shape, except image_points_embeddings.bin (f32 [1,256,64,64]).
        Exit status: 0 when every file was read, 2 when any could not be.
        """)

    @Argument(help: "Files to inspect.")
    var files: [String]

    @Option(help: "Element type of raw blobs (f32 f16 f64 i64 i32 u8 bool).")
    var dtype: String?

    @Option(help: "Shape of raw blobs, comma-separated, e.g. 1,256,64,64.")
    var shape: String?

    @Flag(help: "Also print min, max and mean of every tensor of ONNX, HDF5, PyTorch and safetensors files (reads all data).")
    var stats = false

    /// Exit statuses as every tool's (`mainExitingWithToolStatus`): 2 for bad input or usage.
    static func main() {
        FaultContainment.install()  // a libhdf5 crash on a corrupt .h5, or a mapped file truncated, exits 2 naming the file
        mainExitingWithToolStatus()
    }

    mutating func run() throws {
        var failures = 0
        for (index, file) in files.enumerated() {
            if index > 0 { Console.line("") }
            do {
                try inspect(file)
            } catch let error as FormatError {
                printError("saminspect: \(error)")
                failures += 1
            } catch let error as ValidationError {
                printError("saminspect: \(file): \(error.message)")
                failures += 1
            }
        }
        if failures > 0 { throw ExitCode(2) }
    }

    private func inspect(_ path: String) throws {
        switch try FileKind.detect(path) {
        case .onnx: try ONNXListing(model: ONNXModel(path: path), withStats: stats).print()
        case .hdf5: try HDF5Listing(file: HDF5File(path: path), withStats: stats).print()
        case .pytorch: try PyTorchListing(path: path, withStats: stats).print()
        case .safetensors: try SafetensorsListing(file: SafetensorsFile(path: path), withStats: stats).print()
        case .samw: try SAMWListing(file: SAMWFile(path: path), withStats: stats).print()
        case .npy: TensorListing.print(title: "\(path): .npy", tensor: try NPY.read(path))
        case .png(let header): Console.line("\(path): PNG image \(header)")
        case .blob:
            let (blobType, blobShape) = try blobLayout(for: path)
            TensorListing.print(title: "\(path): raw blob", tensor: try RawBlob.read(path, dtype: blobType, shape: blobShape))
        }
    }

    /// --dtype/--shape when given; the dense positional encoding blob by its well-known name.
    private func blobLayout(for path: String) throws -> (DType, [Int]) {
        if let shape {
            let dims = shape.split(separator: ",").map { Int($0.filter { $0 != " " }) }
            guard !dims.isEmpty, dims.allSatisfy({ $0 != nil && $0! >= 0 }) else {
                throw ValidationError("--shape '\(shape)' is not a comma-separated list of non-negative integers")
            }
            return (try parseDType(dtype ?? "f32"), dims.map { $0! })
        }
        if path.hasSuffix("image_points_embeddings.bin") { return (.float32, [1, 256, 64, 64]) }
        throw ValidationError("raw blob: give --dtype and --shape (the file has no header)")
    }

    private func parseDType(_ text: String) throws -> DType {
        guard let dtype = DType.allCases.first(where: { $0.shortName == text || $0.rawValue == text }) else {
            throw ValidationError("--dtype '\(text)' is not one of " + DType.allCases.map(\.shortName).joined(separator: " "))
        }
        return dtype
    }
}

func printError(_ message: String) {
    var standardError = StandardError()
    print(TerminalText.escaped(message), to: &standardError)
}

/// Standard output, one line at a time. Names from the files (tensors, datasets, metadata) are in
/// every line: printed escaped (`TerminalText`), so a name cannot drive the terminal.
enum Console {
    static func line(_ text: String) { Swift.print(TerminalText.escaped(text)) }
}

struct StandardError: TextOutputStream {
    mutating func write(_ string: String) { _ = string.withCString { Glibc.write(2, $0, strlen($0)) } }
}

