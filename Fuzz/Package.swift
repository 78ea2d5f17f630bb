// swift-tools-version:6.0
// libFuzzer targets for the readers in SAMFormats (and, for ONNX, the import that names its weights). Built only by scripts/fuzz.sh (`make fuzz`), with
// `-sanitize=fuzzer,address -parse-as-library`; libFuzzer supplies main(). Not part of `swift test`.
import PackageDescription

let package = Package(
    name: "SAMFuzz",
    dependencies: [.package(name: "SAMPort", path: "..")],
    targets: [
        .target(name: "FuzzSupport"),
        .executableTarget(name: "FuzzNPY", dependencies: ["FuzzSupport", .product(name: "SAMFormats", package: "SAMPort")]),
        .executableTarget(name: "FuzzONNX", dependencies: ["FuzzSupport", .product(name: "SAMFormats", package: "SAMPort"),
                                                           .product(name: "SAMImport", package: "SAMPort")]),
        .executableTarget(name: "FuzzSAMW", dependencies: ["FuzzSupport", .product(name: "SAMRuntime", package: "SAMPort")]),
        .executableTarget(name: "FuzzHDF5", dependencies: ["FuzzSupport", .product(name: "SAMFormats", package: "SAMPort"),
                                                           .product(name: "SAMRuntime", package: "SAMPort")]),
        .executableTarget(name: "FuzzPTH", dependencies: ["FuzzSupport", .product(name: "SAMFormats", package: "SAMPort")]),
        .executableTarget(name: "FuzzSafetensors", dependencies: ["FuzzSupport", .product(name: "SAMFormats", package: "SAMPort")]),
    ]
)
