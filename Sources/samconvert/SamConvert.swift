import ArgumentParser
import Foundation
import SAMCommandLine
import SAMConvert
import SAMFiles
import SAMFormats
import SAMKernels

/// `samconvert INPUT... --out model.samw`: exported weights in, one native model file out.
@main
struct SamConvert: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "samconvert",
        abstract: "Convert exported SAM weights (ONNX, state dicts as HDF5, PyTorch or safetensors, raw dense-PE blobs) into one .samw model.",
        discussion: """
        INPUT is an .onnx file (external data is found beside it), a state dict, or a folder.
        State dicts: .h5/.hdf5; .pth/.pt as torch.save writes them, read without Python (a pickle naming anything but tensors is refused, nothing is run); .safetensors.
        A folder contributes its .onnx, .h5, .hdf5, .pth, .pt and .safetensors files, its image_points_embeddings.bin and its config.json.
        Several inputs merge; a tensor two inputs both hold must agree, or conversion stops naming both files.
        Hyperparameters come from --config (or a config.json in an input folder), else from the weights'
        shapes and what ONNX graphs state (input size, strides), with MobileSAM's values for the rest.
        A transformers Sam2Model or Sam2VideoModel folder (model.safetensors and its config.json) converts as it is.
        --out is written through a temporary renamed into place; SIGINT or SIGTERM removes the temporary. Without --force nothing may stand at --out, \
        also when a file appears there during the conversion; with --force only a regular file is replaced. \
        A directory, link, device or FIFO at --out, or --out naming one of the inputs, is refused and left as it is.
        A weight holding NaN or infinity, or beyond f16's range with --dtype f16, is refused naming it unless --allow-nonfinite.
        Exit status: 0 converted, 2 bad input or usage (nothing is written then).
        """,
        version: Converter.version)

    @Argument(help: "Input files or folders.")
    var inputs: [String]

    @Option(name: .long, help: "The .samw file to write.")
    var out: String

    @Option(name: .customLong("image-pe"), help: "Raw little-endian f32 dense positional encoding [1,C,g,g] (image_points_embeddings.bin).")
    var imagePE: String?

    @Option(help: "A config.json with the architecture hyperparameters (SAMConfig keys, or transformers' Sam2Config / Sam2VideoConfig).")
    var config: String?

    @Option(name: .customLong("max-points"), help: "Largest point count the model accepts (default 100).")
    var maxPoints: Int?

    @Option(help: "Storage precision of the weights: f32, f16, int8 (the image encoder's linear and pointwise-convolution matrices int8 per output channel; the rest of the model's matrices f16) or q4 (those matrices 4-bit in groups of 32). Quantized matrices are widened to float32 when run, or multiplied as int8 with samrun/samverify --int8-products.")
    var dtype: String = "f32"

    @Option(name: .customLong("half-matrices"), help: ArgumentHelp("With --dtype int8 or q4: image-encoder matrices whose names match GLOB (a shell pattern, e.g. 'image_encoder.blocks.[0-5].*') are stored float16 instead; repeatable. converters/int8_sensitivity.py shows which cost the masks most.", valueName: "GLOB"))
    var halfMatrices: [String] = []

    @Flag(help: "Replace --out if a regular file stands there.")
    var force = false

    @Flag(name: .customLong("allow-unmapped"), help: "Convert even when an input holds weight-like tensors no rule maps (they are listed and left out).")
    var allowUnmapped = false

    @Flag(name: .customLong("allow-nonfinite"), help: "Write weights holding NaN or infinity (in an input, or beyond f16's range with --dtype f16) instead of refusing them; they are listed.")
    var allowNonFinite = false

    /// Exit statuses as every tool's (`mainExitingWithToolStatus`): 2 for bad input or usage.
    static func main() {
        FaultContainment.install()  // a libhdf5 crash on a corrupt .h5, or a mapped input truncated, exits 2 naming the file
        FaultContainment.removeTemporariesOnInterrupt()  // Ctrl-C leaves no half-written model beside --out
        ConversionMemory.returnLargeBuffersWhenFreed()  // tensors are read one at a time; their buffers must not pile up
        mainExitingWithToolStatus()
    }

    mutating func run() throws {
        guard let precision = StoragePrecision(rawValue: dtype) else {
            ConsoleProgress.error("samconvert: --dtype must be f32, f16, int8 or q4, not '\(TerminalText.escaped(dtype))'")
            throw ExitCode(2)
        }
        var request = ConversionRequest(inputs: inputs, output: out)
        request.imagePE = imagePE
        request.configFile = config
        request.maxPoints = maxPoints
        request.precision = precision
        request.halfMatrices = halfMatrices
        request.overwrite = force
        request.allowUnmapped = allowUnmapped
        request.allowNonFinite = allowNonFinite
        // This process is the tool's own: BLAS on one thread, as its idle threads would spin beside
        // the model check. Freed memory is returned as usual (conversion's peak is what matters).
        Kernels.runBLASOnOneThread()
        let started = Date()
        do {
            let result = try Converter.run(request) { ConsoleProgress.step($0) }
            ConversionSummary(result: result, output: out, seconds: Date().timeIntervalSince(started)).print()
        } catch {
            ConsoleProgress.error("samconvert: \(error.message)")
            throw ExitCode(2)
        }
    }
}
