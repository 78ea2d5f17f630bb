// swift-tools-version:6.0
// An app that uses the toolkit the way apps add it: a versioned package dependency on the runtime
// product alone (plus PNG/JPEG reading, or video files), with a model converted beforehand. SwiftPM refuses such a
// dependency when one of its targets carries unsafeFlags, so building this package is also the check
// that the library stays adoptable. scripts/check-dependency.sh builds it against a tagged clone of
// this repository (SAM_PORT_URL=file:///path/to/clone), runs it, and checks what its binary links.
import Foundation
import PackageDescription

guard let toolkitURL = ProcessInfo.processInfo.environment["SAM_PORT_URL"] else {
    fatalError("set SAM_PORT_URL to the toolkit's repository (a URL with a version tag)")
}

let package = Package(
    name: "DependentPackage",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(url: toolkitURL, from: "0.1.0"),
    ],
    targets: [
        .executableTarget(name: "segment-photo", dependencies: [
            .product(name: "SAMRuntime", package: "SAMPort"),
            .product(name: "SAMImageFiles", package: "SAMPort"),
        ]),
        // A video app: frames from a video file, no PNG/JPEG library.
        .executableTarget(name: "read-video", dependencies: [
            .product(name: "SAMRuntime", package: "SAMPort"),
            .product(name: "SAMVideoFiles", package: "SAMPort"),
        ]),
    ]
)
