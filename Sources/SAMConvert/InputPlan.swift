import Foundation
import SAMFiles
import SAMFormats
import SAMImport

/// Which files a conversion reads: inputs expanded (folders to their model files), each checked to
/// be a regular file before any is read (a FIFO or a device is refused at once, never waited on).
public struct InputPlan: Sendable {
    /// .onnx / .h5 / .hdf5 / .pth / .pt / .safetensors files and raw dense-PE blobs, in the order given.
    public var weightFiles: [String] = []
    /// config.json to use, if any (--config wins over one found in an input folder).
    public var configFile: String?
    /// The files given or found that end up in the model, for provenance (weights, blobs, config).
    /// Files the inputs reference (ONNX external data) are added once the import has read them:
    /// nothing is hashed, or even opened, for merely lying beside an input.
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
            try Self.requireRegular(imagePE, role: "--image-pe")
            if !weightFiles.contains(imagePE) { weightFiles.append(imagePE) }
        }
        if let config, !FileManager.default.fileExists(atPath: config) { throw ConversionFailure("\(config): no such file (--config)") }
        configFile = config ?? folderConfig
        for file in weightFiles { try Self.requireRegular(file, role: nil) }
        if let configFile { try Self.requireRegular(configFile, role: "--config") }
        provenanceFiles = weightFiles + (configFile.map { [$0] } ?? [])
    }

    static func requireRegular(_ path: String, role: String?) throws(ConversionFailure) {
        do { try RegularFile.require(path, role: role) } catch { throw ConversionFailure("\(error)") }
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
}
