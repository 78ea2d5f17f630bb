import Foundation
import SAMConvert
import SAMFiles
import SAMFormats
import SAMModelFile
import SAMTensor
import SAMTestSupport
import Testing
@testable import SAMVerify

/// A fresh temporary folder for one test.
func temporaryFolder(_ label: String) throws -> String { try TestPaths.temporaryFolder("samverify-\(label)") }

/// Models under test, made the way users make them: samconvert's library on the reference set's own weights.
enum ModelUnderTest {
    /// `reference_outputs/tiny/mobile_sam.h5` + its config.json -> `folder/tiny.samw`.
    static func tiny(in folder: String) throws -> String { try TestModels.tiny(in: folder) }

    /// The full-size set's `mobile_sam.h5` (full-size MobileSAM) -> `folder/fullSet.samw`.
    static func fullSizeSet(in folder: String) throws -> String { try TestModels.fullSizeSet(in: folder) }

    /// A copy of the .samw at `path` with `edit` applied to its tensor table (same metadata, same order).
    static func edited(_ path: String, to output: String,
                       _ edit: (inout [(name: String, tensor: Tensor)]) throws -> Void) throws -> String {
        let file = try SAMWFile(path: path)
        var tensors = try file.names.map { (name: $0, tensor: try file.tensor(named: $0)) }
        try edit(&tensors)
        try SAMWWriter.write(tensors: tensors, metadata: file.metadata, to: output)
        return output
    }

    /// One element of one weight moved by `delta`.
    static func perturbed(_ path: String, tensor name: String, element: Int = 0, delta: Float, to output: String) throws -> String {
        try edited(path, to: output) { tensors in
            let position = try #require(tensors.firstIndex { $0.name == name }, "\(name) is not in \(path)")
            var values = tensors[position].tensor.floats()
            values[element] += delta
            tensors[position].tensor = Tensor(shape: tensors[position].tensor.shape, floats: values)
        }
    }
}

/// A writable copy of the tiny reference set (manifest.json and references/), for tests that damage it.
enum ReferenceCopy {
    static func tiny(in folder: String) throws -> String {
        let root = folder + "/tinyref"
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: TestPaths.tinyReferences + "/references", toPath: root + "/references")
        try FileManager.default.copyItem(atPath: TestPaths.tinyReferences + "/manifest.json", toPath: root + "/manifest.json")
        return root
    }

    /// Rewrites `root/relative` (.npy) with `edit` applied to its values.
    static func editNPY(_ root: String, _ relative: String, _ edit: (inout [Float]) -> Void) throws {
        let path = root + "/" + relative
        let tensor = try NPY.read(path)
        var values = tensor.floats()
        edit(&values)
        try NPY.write(Tensor(shape: tensor.shape, floats: values), to: path)
    }

    /// Rewrites `root/manifest.json` with `edit` applied to its top-level object.
    static func editManifest(_ root: String, _ edit: (inout [String: Any]) throws -> Void) throws {
        let path = root + "/manifest.json"
        var manifest = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as? [String: Any])
        try edit(&manifest)
        try JSONSerialization.data(withJSONObject: manifest).write(to: URL(fileURLWithPath: path))
    }
}

extension VerificationReport {
    /// "case/output: status" for every check that did not pass, for failure messages.
    var problems: String {
        checks.filter { $0.check.status != .pass }
            .map { "\($0.case.name)/\($0.check.output): \($0.check.status.rawValue) \($0.check.problem ?? "")" }
            .joined(separator: "; ")
    }
}
