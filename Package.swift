// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "SAMPort",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "saminspect", targets: ["saminspect"]),
        .executable(name: "samconvert", targets: ["samconvert"]),
        .executable(name: "samrun", targets: ["samrun"]),
        .executable(name: "samverify", targets: ["samverify"]),
        .executable(name: "sambench", targets: ["sambench"]),
        .library(name: "SAMModel", targets: ["SAMModel"]),
        .library(name: "SAMKernels", targets: ["SAMKernels"]),
        .library(name: "SAMFormats", targets: ["SAMFormats"]),
        .library(name: "SAMImport", targets: ["SAMImport"]),
        .library(name: "SAMModelFile", targets: ["SAMModelFile"]),
        .library(name: "SAMPipeline", targets: ["SAMPipeline"]),
        .library(name: "SAMImage", targets: ["SAMImage"]),
        .library(name: "SAMConvert", targets: ["SAMConvert"]),
        .library(name: "SAMVerify", targets: ["SAMVerify"]),
        .library(name: "SAMEverything", targets: ["SAMEverything"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
    ],
    targets: [
        // System libraries (headers and link flags from pkg-config; `make setup` installs them).
        .systemLibrary(name: "CProtobufC", pkgConfig: "libprotobuf-c",
                       providers: [.apt(["libprotobuf-c-dev"]), .brew(["protobuf-c"])]),
        .systemLibrary(name: "CHDF5", pkgConfig: "hdf5",
                       providers: [.apt(["libhdf5-dev"]), .brew(["hdf5"])]),
        .systemLibrary(name: "COpenBLAS", pkgConfig: "openblas",
                       providers: [.apt(["libopenblas-dev"])]),
        .systemLibrary(name: "CPNG", pkgConfig: "libpng", providers: [.apt(["libpng-dev"])]),
        .systemLibrary(name: "CJPEG", pkgConfig: "libjpeg", providers: [.apt(["libjpeg62-turbo-dev"])]),
        .systemLibrary(name: "CZlib", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"]), .brew(["zlib"])]),
        .systemLibrary(name: "CLibCrypto", pkgConfig: "libcrypto", providers: [.apt(["libssl-dev"]), .brew(["openssl@3"])]),

        // protobuf-c code generated once from onnx.proto (see Sources/CONNXProto/GENERATED.md).
        .target(name: "CONNXProto", dependencies: ["CProtobufC"],
                exclude: ["onnx.proto", "GENERATED.md"]),

        // The one pool of worker threads every parallel loop runs on (SAM_NUM_THREADS).
        .target(name: "SAMParallel"),

        // Tensors: dtypes, shapes, storage that may borrow a reader's bytes.
        .target(name: "SAMTensor"),

        // A fault inside libhdf5 while it parses a user's file becomes an error naming the file.
        .target(name: "CFaultContainment"),
        // CRC-32 folding with PCLMULQDQ (per-function target attributes; no build flags needed).
        .target(name: "CCRC32"),

        // Readers (and the .npy writer) for the files people export: ONNX, HDF5, .npy, raw blobs.
        .target(name: "SAMFormats",
                dependencies: ["SAMTensor", "SAMParallel", "CONNXProto", "CProtobufC", "CHDF5", "CZlib", "CLibCrypto",
                               "CFaultContainment", "CCRC32"]),

        // The one place that picks the BLAS: Accelerate on Apple platforms, OpenBLAS elsewhere.
        .target(name: "SAMBLAS",
                dependencies: [.target(name: "COpenBLAS", condition: .when(platforms: [.linux])), "CCPUFeatures"],
                ),
        // The CPU's vector ISA as OpenBLAS's kernel families need it (SAMBLAS's kernel choice).
        .target(name: "CCPUFeatures"),

        // Sixteen-lane (AVX-512) versions of the kernels' eight-lane float loops, chosen at run time.
        .target(name: "CVectorMath"),
        // The CPU's float32 fused multiply-add ceiling, for sambench's achieved-vs-peak figures.
        .target(name: "CFMAPeak"),
        // Linear layers with bfloat16 products (AVX512_BF16), the opt-in lower-precision path.
        .target(name: "CBFloat16"),

        // CPU kernels: GEMM-backed convolutions, depthwise conv, norms, activations, attention.
        .target(name: "SAMKernels", dependencies: ["SAMTensor", "SAMBLAS", "SAMParallel", "CVectorMath", "CBFloat16"]),

        // Architecture facts both the importer and the runtime need (index tables no state dict
        // holds, BatchNorm folding), written once.
        .target(name: "SAMArchitecture"),

        // The native model: image-encoder families, prompt encoder, mask decoder, weight loading.
        .target(name: "SAMModel", dependencies: ["SAMTensor", "SAMKernels", "SAMArchitecture"]),
        .target(name: "SAMImport", dependencies: ["SAMFormats", "SAMTensor", "SAMArchitecture"]),
        .target(name: "SAMImage", dependencies: ["SAMTensor", "SAMParallel", "SAMFormats", "CPNG", "CJPEG", "CVectorMath"]),

        // The .samw model file: metadata schema, and a Sam written to / loaded from it.
        .target(name: "SAMModelFile", dependencies: ["SAMModel", "SAMFormats", "SAMTensor"]),

        // Image in, masks out: the predictor API for apps (SegmentAnything) on top of the model and SAMImage.
        .target(name: "SAMPipeline", dependencies: ["SAMModelFile", "SAMModel", "SAMImage", "SAMTensor", "SAMKernels"]),

        // The automatic mask generator's pure parts (grids, crops, NMS, RLE, small regions), no model.
        .target(name: "SAMEverything", dependencies: ["SAMImage", "SAMModel", "SAMPipeline", "SAMTensor", "SAMFormats"]),

        // Command-line tools, one target each.
        // The command-line tools' shared exit-status contract.
        .target(name: "SAMCommandLine", dependencies: [.product(name: "ArgumentParser", package: "swift-argument-parser")]),
        .executableTarget(name: "saminspect", dependencies: [
            "SAMCommandLine", "SAMFormats", "SAMTensor",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
        ]),

        // Shared by the test targets: where the fixtures and the full-size reference set are, error figures.
        .target(name: "SAMTestSupport", dependencies: ["SAMTensor", "SAMFormats", "SAMConvert", "CHDF5", "CZlib"], path: "Tests/SAMTestSupport"),

        // Conversion as a library (samconvert is its command line; tests drive it directly).
        .target(name: "SAMConvert", dependencies: ["SAMImport", "SAMModel", "SAMModelFile", "SAMFormats", "SAMTensor", "SAMParallel"]),

        .executableTarget(name: "samconvert", dependencies: [
            "SAMCommandLine", "SAMConvert", "SAMKernels", "SAMImport", "SAMModel", "SAMModelFile", "SAMFormats", "SAMTensor",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
        ]),

        .target(name: "SAMVerify", dependencies: ["SAMModelFile", "SAMModel", "SAMFormats", "SAMTensor", "SAMImage", "SAMParallel", "SAMBLAS", "SAMKernels"]),
        .executableTarget(name: "samverify", dependencies: ["SAMVerify", "SAMEverything", "SAMPipeline", "SAMImage", "SAMFormats", "SAMModelFile", "SAMModel", "SAMKernels", .product(name: "ArgumentParser", package: "swift-argument-parser")]),

        .executableTarget(name: "sambench", dependencies: ["SAMModelFile", "SAMModel", "SAMImage", "SAMFormats", "SAMTensor", "SAMBLAS", "SAMPipeline", "SAMKernels", "CFMAPeak"]),

        .executableTarget(name: "samrun", dependencies: [
            "SAMCommandLine", "SAMPipeline", "SAMEverything", "SAMModel", "SAMKernels", "SAMImage", "SAMFormats", "SAMTensor",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
        ]),

        .testTarget(name: "SAMFormatsTests", dependencies: ["SAMFormats", "SAMTensor", "SAMTestSupport"],
                    exclude: ["Fixtures"]),
        .testTarget(name: "SAMKernelsTests", dependencies: ["SAMKernels", "SAMBLAS", "SAMParallel", "SAMTestSupport", "CVectorMath", "CBFloat16"]),
        .testTarget(name: "SAMImageTests", dependencies: ["SAMImage", "SAMTensor", "SAMFormats", "SAMTestSupport"],
                    exclude: ["Fixtures"]),
        .testTarget(name: "SAMConvertTests", dependencies: [
            "SAMConvert", "SAMModelFile", "SAMModel", "SAMImport", "SAMFormats", "SAMTensor", "SAMTestSupport",
        ]),
        .testTarget(name: "SAMPipelineTests", dependencies: [
            "SAMPipeline", "SAMModel", "SAMConvert", "SAMImage", "SAMFormats", "SAMTensor", "SAMTestSupport", "SAMKernels",
        ]),
        .testTarget(name: "SAMModelTests", dependencies: ["SAMModel", "SAMArchitecture", "SAMFormats", "SAMKernels", "SAMBLAS", "SAMTensor", "SAMTestSupport"]),
        .testTarget(name: "SAMImportTests", dependencies: ["SAMImport", "SAMFormats", "SAMTensor", "SAMTestSupport"],
                    exclude: ["Fixtures"]),
        .testTarget(name: "HostileInputTests", dependencies: ["SAMFormats", "SAMTensor", "SAMImage", "SAMEverything", "SAMTestSupport", "CHDF5"], exclude: ["Corpus"]),
        .testTarget(name: "SAMEverythingTests", dependencies: [
            "SAMEverything", "SAMPipeline", "SAMConvert", "SAMImage", "SAMModel", "SAMFormats", "SAMTensor", "SAMTestSupport",
        ], exclude: ["Fixtures"]),
        .testTarget(name: "SAMVerifyTests", dependencies: ["SAMVerify", "SAMConvert", "SAMModelFile", "SAMModel", "SAMFormats", "SAMTensor", "SAMImage", "SAMTestSupport", "SAMKernels", "SAMBLAS"]),
    ]
)
