import Foundation
import SAMImport

/// Which files a conversion reads: inputs expanded (folders to their model files), checked to exist.
public struct InputPlan: Sendable {
    /// .onnx / .h5 / .hdf5 / .pth / .pt / .safetensors files and raw dense-PE blobs, in the order given.
    public var weightFiles: [String] = []
    /// config.json to use, if any (--config wins over one found in an input folder).
    public var configFile: String?
    /// Every file whose bytes end up in the model, for provenance (weights, external data, blobs, config).
    public var provenanceFiles: [String] = []

    static let densePEBlobName = "image_points_embeddings.bin"

    public init(inputs: [String], imagePE: String?, config: String?) throws(ConversionFailure) {
        var folderConfig: String?
        for input in inputs {
            var isFolder: ObjCBool = false
            guard FileManager.default.fileExists(atPath: input, isDirectory: &isFolder) else {
                throw ConversionFailure("\(input): no such file or folder")
            }
            if isFolder.boolValue {
                let found = try Self.modelFiles(inFolder: input)
                guard !found.weights.isEmpty else {
                    throw ConversionFailure("\(input): folder holds no .onnx, .h5/.hdf5, .pth/.pt or .safetensors file")
                }
                weightFiles += found.weights
                folderConfig = folderConfig ?? found.config
            } else {
                guard SAMImporter.kind(of: input) != nil else {
                    throw ConversionFailure("\(input): not an .onnx, .h5/.hdf5, .pth/.pt, .safetensors or raw .bin input")
                }
                weightFiles.append(input)
            }
        }
        if let imagePE {
            guard FileManager.default.fileExists(atPath: imagePE) else { throw ConversionFailure("\(imagePE): no such file (--image-pe)") }
            guard imagePE.lowercased().hasSuffix(".bin") else { throw ConversionFailure("\(imagePE): --image-pe takes a raw .bin blob") }
            if !weightFiles.contains(imagePE) { weightFiles.append(imagePE) }
        }
        if let config, !FileManager.default.fileExists(atPath: config) { throw ConversionFailure("\(config): no such file (--config)") }
        configFile = config ?? folderConfig
        provenanceFiles = weightFiles + Self.externalDataFiles(besides: weightFiles) + (configFile.map { [$0] } ?? [])
    }

    /// A folder's .onnx/.h5/.hdf5/.pth/.pt/.safetensors files (sorted), its dense-PE blob and its config.json.
    static func modelFiles(inFolder folder: String) throws(ConversionFailure) -> (weights: [String], config: String?) {
        let names: [String]
        do { names = try FileManager.default.contentsOfDirectory(atPath: folder).sorted() } catch {
            throw ConversionFailure("\(folder): cannot list: \(error.localizedDescription)")
        }
        let path = { (name: String) in (folder as NSString).appendingPathComponent(name) }
        var weights = names.filter { [.onnx, .hdf5, .pytorch, .safetensors].contains(SAMImporter.kind(of: $0)) }.map(path)
        if names.contains(densePEBlobName) { weights.append(path(densePEBlobName)) }
        return (weights, names.contains("config.json") ? path("config.json") : nil)
    }

    /// `X.onnx.data` / `X.data` files next to ONNX inputs (the common external-data names), for provenance.
    static func externalDataFiles(besides files: [String]) -> [String] {
        files.filter { $0.lowercased().hasSuffix(".onnx") }.flatMap { [$0 + ".data", String($0.dropLast(5)) + ".data"] }
            .filter { FileManager.default.fileExists(atPath: $0) }
    }
}
