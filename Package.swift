// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "SAMPort",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "saminspect", targets: ["saminspect"]),
        .executable(name: "samconvert", targets: ["samconvert"]),
        .executable(name: "samrun", targets: ["samrun"]),
        .executable(name: "samtrack", targets: ["samtrack"]),
        .executable(name: "samverify", targets: ["samverify"]),
        .executable(name: "sambench", targets: ["sambench"]),
        // What an app links to segment with a .samw: no converter, HDF5, protobuf-c or crypto library.
        .library(name: "SAMRuntime", targets: ["SAMPipeline", "SAMEverything", "SAMModelFile", "SAMModel", "SAMImage", "SAMKernels",
                                               "SAMTensor", "SAMFiles"]),
        // PNG and JPEG files in and out (libpng, libjpeg); an Apple app can hand pixels in instead.
        .library(name: "SAMImageFiles", targets: ["SAMImageFiles"]),
        // Video files in (FFmpeg's libavformat, libavcodec, libswscale); apps that track folders leave it out.
        .library(name: "SAMVideoFiles", targets: ["SAMVideoFiles"]),
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
        .library(name: "SAMEverythingFiles", targets: ["SAMEverythingFiles"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        // `swift package generate-documentation` (the DocC catalogs); a plugin, linked into nothing.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
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
        // FFmpeg's demuxers, decoders and pixel conversion (Debian's shared libraries; NOTICE has their
        // licence). SwiftPM takes one pkg-config name: the other three share libavformat's include folder.
        .systemLibrary(name: "CFFmpeg", pkgConfig: "libavformat",
                       providers: [.apt(["libavformat-dev", "libavcodec-dev", "libavutil-dev", "libswscale-dev"]), .brew(["ffmpeg"])]),

        // jemalloc and its options for samtrack (Linux): a long run of frames keeps a flat resident
        // peak where glibc's heap fragments. Nothing else links it.
        .target(name: "CJemalloc", linkerSettings: [.linkedLibrary("jemalloc", .when(platforms: [.linux]))]),

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

        // SHA-256 with the CPU's SHA instructions where it has them (no crypto library).
        .target(name: "CSHA256"),

        // The files the toolkit writes and reads itself, what the runtime needs: the .samw format,
        // mapped and atomically replaced files, output rules, checksums and digests.
        .target(name: "SAMFiles", dependencies: ["SAMTensor", "SAMParallel", "CZlib", "CCRC32", "CSHA256", "CFaultContainment"]),

        // Readers (and the .npy writer) for the files people export: ONNX, HDF5, .npy, raw blobs.
        .target(name: "SAMFormats",
                dependencies: ["SAMFiles", "SAMTensor", "SAMParallel", "CONNXProto", "CProtobufC", "CHDF5", "CZlib", "CFaultContainment"]),

        // The one place that picks the BLAS: Accelerate on Apple platforms, OpenBLAS elsewhere.
        .target(name: "SAMBLAS",
                dependencies: [.target(name: "COpenBLAS", condition: .when(platforms: [.linux])), "CCPUFeatures"],
                ),
        // The CPU's vector ISA as OpenBLAS's kernel families need it (SAMBLAS's kernel choice),
        // whether the process may use AMX tiles (CInt8's and CBFloat16's choice), and SAM_CPU_CAP,
        // which holds the numeric kernels' choices below the CPU's (an older CPU's paths on this one).
        .target(name: "CCPUFeatures"),

        // Sixteen-lane (AVX-512) versions of the kernels' eight-lane float loops, chosen at run time.
        .target(name: "CVectorMath", dependencies: ["CCPUFeatures"]),
        // The CPU's float32 fused multiply-add ceiling, for sambench's achieved-vs-peak figures.
        .target(name: "CFMAPeak", dependencies: ["CCPUFeatures"]),
        // Linear layers with bfloat16 products (AVX512_BF16), the opt-in lower-precision path.
        // ... and on AMX tiles (AMX-BF16) where the CPU and the OS allow them.
        .target(name: "CBFloat16", dependencies: ["CCPUFeatures"]),
        // Linear layers with int8 weights and int8 products (AMX-INT8, AVX512_VNNI, AVX2, portable C).
        .target(name: "CInt8", dependencies: ["CCPUFeatures"]),

        // CPU kernels: GEMM-backed convolutions, depthwise conv, norms, activations, attention.
        .target(name: "SAMKernels", dependencies: ["SAMTensor", "SAMBLAS", "SAMParallel", "CVectorMath", "CBFloat16", "CInt8", "CCPUFeatures"]),

        // Architecture facts both the importer and the runtime need (index tables no state dict
        // holds, BatchNorm folding), written once.
        .target(name: "SAMArchitecture"),

        // The native model: image-encoder families, prompt encoder, mask decoder, weight loading.
        .target(name: "SAMModel", dependencies: ["SAMTensor", "SAMKernels", "SAMArchitecture", "SAMImage"]),
        .target(name: "SAMImport", dependencies: ["SAMFiles", "SAMFormats", "SAMTensor", "SAMArchitecture"]),
        // Pixels in memory: resizing and normalising for the encoder, masks back to the image's size.
        .target(name: "SAMImage", dependencies: ["SAMTensor", "SAMParallel", "CVectorMath"]),
        // PNG and JPEG decoding and encoding, with limits on what a file may declare.
        .target(name: "SAMImageFiles", dependencies: ["SAMImage", "SAMFiles", "CPNG", "CJPEG"]),
        // Video files as a VideoFrameSource: decoded through FFmpeg, every frame held to ImageLimits.
        .target(name: "SAMVideoFiles", dependencies: ["SAMImage", "SAMPipeline", "SAMFiles", "CFFmpeg"]),

        // The .samw model file: metadata schema, and a Sam written to / loaded from it.
        .target(name: "SAMModelFile", dependencies: ["SAMModel", "SAMFiles", "SAMTensor"]),

        // Image in, masks out: the predictor API for apps (SegmentAnything) on top of the model and SAMImage.
        .target(name: "SAMPipeline", dependencies: ["SAMModelFile", "SAMModel", "SAMImage", "SAMTensor", "SAMKernels", "SAMFiles", "SAMParallel"]),

        // The automatic mask generator's pure parts (grids, crops, NMS, RLE, small regions), no model.
        .target(name: "SAMEverything", dependencies: ["SAMImage", "SAMModel", "SAMPipeline", "SAMTensor"]),
        // Segment everything over files: folders of photos (datasets, shards), reference sets' photos.
        .target(name: "SAMEverythingFiles", dependencies: ["SAMEverything", "SAMFiles", "SAMImageFiles", "SAMImage", "SAMPipeline"]),

        // Command-line tools, one target each.
        // The command-line tools' shared exit-status contract.
        .target(name: "SAMCommandLine", dependencies: ["SAMFiles", .product(name: "ArgumentParser", package: "swift-argument-parser")]),
        .executableTarget(name: "saminspect", dependencies: [
            "SAMFiles", "SAMCommandLine", "SAMFormats", "SAMTensor",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
        ]),

        // Shared by the test targets: where the fixtures and the full-size reference set are, error figures.
        .target(name: "SAMTestSupport", dependencies: ["SAMTensor", "SAMFormats", "SAMConvert", "CHDF5", "CZlib"], path: "Tests/SAMTestSupport"),

        // Conversion as a library (samconvert is its command line; tests drive it directly).
        .target(name: "SAMConvert", dependencies: ["SAMFiles", "SAMImport", "SAMModel", "SAMModelFile", "SAMFormats", "SAMTensor", "SAMParallel"]),

        .executableTarget(name: "samconvert", dependencies: [
            "SAMFiles", "SAMCommandLine", "SAMConvert", "SAMKernels", "SAMImport", "SAMModel", "SAMModelFile", "SAMFormats", "SAMTensor",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
        ]),

        .target(name: "SAMVerify", dependencies: ["SAMFiles", "SAMImageFiles", "SAMModelFile", "SAMPipeline", "SAMModel", "SAMFormats", "SAMTensor", "SAMImage", "SAMParallel", "SAMBLAS", "SAMKernels"]),
        .executableTarget(name: "samverify", dependencies: ["SAMEverythingFiles", "SAMFiles", "SAMImageFiles", "SAMVerify", "SAMEverything", "SAMPipeline", "SAMImage", "SAMFormats", "SAMModelFile", "SAMModel", "SAMKernels", .product(name: "ArgumentParser", package: "swift-argument-parser")]),

        .executableTarget(name: "sambench", dependencies: ["SAMModelFile", "SAMModel", "SAMImage", "SAMFormats", "SAMTensor", "SAMBLAS", "SAMPipeline", "SAMKernels", "CFMAPeak"]),

        .executableTarget(name: "samrun", dependencies: [
            "SAMEverythingFiles", "SAMFiles", "SAMImageFiles", "SAMCommandLine", "SAMPipeline", "SAMEverything", "SAMModel", "SAMKernels", "SAMImage", "SAMFormats", "SAMTensor",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
        ]),
        .executableTarget(name: "samtrack", dependencies: [
            "CJemalloc", "SAMFiles", "SAMImageFiles", "SAMVideoFiles", "SAMCommandLine", "SAMPipeline", "SAMModelFile", "SAMKernels", "SAMImage", "SAMFormats", "SAMTensor",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
        ]),

        .testTarget(name: "SAMFormatsTests", dependencies: ["SAMFiles", "SAMFormats", "SAMTensor", "SAMTestSupport"],
                    exclude: ["Fixtures"]),
        .testTarget(name: "SAMFilesTests", dependencies: ["SAMFiles", "SAMTensor", "SAMTestSupport"]),
        .testTarget(name: "SAMKernelsTests", dependencies: ["SAMKernels", "SAMBLAS", "SAMParallel", "SAMTestSupport", "CVectorMath", "CBFloat16", "CInt8"]),
        .testTarget(name: "SAMImageTests", dependencies: ["SAMImage", "SAMImageFiles", "SAMTensor", "SAMFormats", "SAMTestSupport"],
                    exclude: ["Fixtures"]),
        .testTarget(name: "SAMVideoFilesTests", dependencies: ["SAMVideoFiles", "SAMImageFiles", "SAMImage", "SAMFiles", "SAMTestSupport"],
                    exclude: ["Fixtures"]),
        .testTarget(name: "SAMConvertTests", dependencies: [
            "SAMFiles", "SAMConvert", "SAMModelFile", "SAMModel", "SAMImport", "SAMFormats", "SAMTensor", "SAMTestSupport",
        ]),
        .testTarget(name: "SAMPipelineTests", dependencies: [
            "SAMBLAS", "SAMImageFiles", "SAMModelFile", "SAMParallel", "SAMPipeline", "SAMModel", "SAMConvert", "SAMImage", "SAMFormats", "SAMTensor", "SAMTestSupport", "SAMKernels",
        ]),
        .testTarget(name: "SAMModelTests", dependencies: ["SAMModel", "SAMArchitecture", "SAMFormats", "SAMKernels", "SAMBLAS", "SAMTensor", "SAMTestSupport"]),
        .testTarget(name: "SAMImportTests", dependencies: ["SAMImport", "SAMFormats", "SAMTensor", "SAMTestSupport"],
                    exclude: ["Fixtures"]),
        .testTarget(name: "HostileInputTests", dependencies: ["SAMFiles", "SAMImageFiles", "SAMFormats", "SAMTensor", "SAMImage", "SAMEverything", "SAMTestSupport", "CHDF5"], exclude: ["Corpus"]),
        .testTarget(name: "SAMEverythingTests", dependencies: [
            "SAMEverythingFiles", "SAMFiles", "SAMImageFiles", "SAMEverything", "SAMPipeline", "SAMConvert", "SAMImage", "SAMModel", "SAMFormats", "SAMTensor", "SAMTestSupport",
        ], exclude: ["Fixtures"]),
        .testTarget(name: "SAMVerifyTests", dependencies: ["SAMFiles", "SAMImageFiles", "SAMVerify", "SAMPipeline", "SAMConvert", "SAMModelFile", "SAMModel", "SAMFormats", "SAMTensor", "SAMImage", "SAMTestSupport", "SAMKernels", "SAMBLAS"]),
    ]
)
