import Foundation

/// A reference set for segment everything, as `converters/export_amg.py` writes it with upstream's
/// generator: `manifest.json` (`"kind": "sam_automatic_masks"`, the weights and config, every generator
/// parameter, the photos) beside `images/<name>.png` and `masks/<name>.json` (the annotations as
/// `scripts/amg.py --convert-to-rle` writes them).
public struct AutomaticMaskReferenceSet: Sendable {
    package struct Image: Sendable {
        package var name: String
        /// The photo and its reference annotations, as absolute paths.
        package var imagePath: String
        package var masksPath: String
    }

    package static let kind = "sam_automatic_masks"

    package let folder: String
    package let settings: AutomaticMaskSettings
    /// The weights and config.json the set's model converts from (absolute; the config may be absent).
    package let weightsPath: String
    package let configPath: String?
    package let images: [Image]

    /// Whether `folder`'s manifest names this kind (a quick look; `init` checks the rest).
    package static func isSet(at folder: String) -> Bool {
        struct Kind: Decodable { var kind: String? }
        guard let data = try? Data(contentsOf: URL(fileURLWithPath: folder + "/manifest.json")),
              let manifest = try? JSONDecoder().decode(Kind.self, from: data) else { return false }
        return manifest.kind == kind
    }

    package init(folder: String) throws(EverythingError) {
        self.folder = folder
        let manifestPath = folder + "/manifest.json"
        let manifest: Manifest
        do {
            manifest = try JSONDecoder().decode(Manifest.self, from: Data(contentsOf: URL(fileURLWithPath: manifestPath)))
        } catch {
            throw .referenceSet("\(manifestPath): not a segment-everything manifest: \(error)")
        }
        guard manifest.kind == Self.kind else {
            throw .referenceSet("\(manifestPath): kind '\(manifest.kind)', expected '\(Self.kind)'")
        }
        settings = manifest.generatorParameters
        weightsPath = try Self.inside(folder, manifest.weights, what: "weights")
        configPath = try manifest.configFile.map { name throws(EverythingError) in try Self.inside(folder, name, what: "config") }
        images = try manifest.images.map { entry throws(EverythingError) in
            Image(name: entry.name, imagePath: try Self.inside(folder, entry.file, what: "image"),
                  masksPath: try Self.inside(folder, entry.masks, what: "masks"))
        }
    }

    /// A path of the manifest, resolved against the set's folder. Weights may sit in a sibling set
    /// (`../tiny/mobile_sam.h5`); images and masks must be inside the set.
    static func inside(_ folder: String, _ relative: String, what: String) throws(EverythingError) -> String {
        let resolved = URL(fileURLWithPath: folder).appendingPathComponent(relative).standardizedFileURL.path
        let root = URL(fileURLWithPath: folder).standardizedFileURL.path
        if what != "weights", !(resolved.hasPrefix(root + "/")) {
            throw .referenceSet("\(folder)/manifest.json: \(what) '\(relative)' leaves the set")
        }
        return resolved
    }

    /// The annotations of a masks file (upstream's JSON), segmentations decoded from their COCO strings.
    package static func annotations(at path: String) throws(EverythingError) -> [MaskAnnotation] {
        let records: [WireAnnotation]
        do {
            records = try JSONDecoder().decode([WireAnnotation].self, from: Data(contentsOf: URL(fileURLWithPath: path)))
        } catch {
            throw .referenceSet("\(path): not a list of mask annotations: \(error)")
        }
        var annotations: [MaskAnnotation] = []
        for (index, record) in records.enumerated() {
            guard record.segmentation.size.count == 2, record.pointCoords.first?.count == 2 else {
                throw .referenceSet("\(path): annotation \(index) has no [h, w] size or [[x, y]] point")
            }
            let rle: UncompressedRLE
            do {
                rle = try UncompressedRLE(COCORLE(height: record.segmentation.size[0], width: record.segmentation.size[1],
                                                  counts: record.segmentation.counts))
            } catch {
                throw .referenceSet("\(path): annotation \(index): \(error.message)")
            }
            annotations.append(MaskAnnotation(segmentation: rle, area: record.area, bbox: record.bbox,
                                              predictedIoU: Float(record.predictedIoU), pointCoords: record.pointCoords[0],
                                              stabilityScore: Float(record.stabilityScore), cropBox: record.cropBox))
        }
        return annotations
    }

    struct Manifest: Decodable {
        struct Entry: Decodable {
            var name: String
            var file: String
            var masks: String
        }
        var kind: String
        var weights: String
        var configFile: String?
        var generatorParameters: AutomaticMaskSettings
        var images: [Entry]

        enum CodingKeys: String, CodingKey {
            case kind, weights, images
            case configFile = "config_file", generatorParameters = "generator_parameters"
        }
    }

    package struct WireAnnotation: Decodable {
        package struct Segmentation: Decodable {
            package var size: [Int]
            package var counts: String
        }
        package var segmentation: Segmentation
        package var area: Int
        package var bbox: [Int]
        package var predictedIoU: Double
        package var pointCoords: [[Double]]
        package var stabilityScore: Double
        package var cropBox: [Int]

        enum CodingKeys: String, CodingKey {
            case segmentation, area, bbox
            case predictedIoU = "predicted_iou", pointCoords = "point_coords", stabilityScore = "stability_score", cropBox = "crop_box"
        }
    }
}
