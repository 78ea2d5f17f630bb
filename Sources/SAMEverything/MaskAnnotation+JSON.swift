import Foundation

extension MaskAnnotation {
    /// The annotation as upstream's `scripts/amg.py --convert-to-rle` writes it (json.dump of the
    /// generator's dict, keys in its order): `segmentation` {`size` [h, w], `counts` (COCO RLE string)},
    /// `area`, `bbox` XYWH, `predicted_iou`, `point_coords` [[x, y]], `stability_score`, `crop_box` XYWH.
    /// Floats print as Python prints them (the shortest text that reads back to the same double).
    public var jsonText: String { jsonText(.cocoRLE) }

    /// The annotation with its segmentation as `format` gives it: a COCO RLE string (`coco_rle`) or
    /// upstream's uncompressed RLE (`uncompressed_rle`: `counts` a list of run lengths, column-major,
    /// starting with a run of zeros).
    /// ref: segment_anything/utils/amg.py mask_to_rle_pytorch, coco_encode_rle
    public func jsonText(_ format: SegmentationFormat) -> String {
        let counts: String
        switch format {
        case .cocoRLE:
            // Counts of a mask this generator made always encode; a hand-made annotation's may not.
            counts = JSONText.quoted((try? COCORLE(segmentation).counts) ?? "")
        case .uncompressedRLE:
            counts = Self.list(segmentation.counts)
        }
        return "{\"segmentation\": {\"size\": [\(segmentation.height), \(segmentation.width)], \"counts\": \(counts)}, "
            + "\"area\": \(area), \"bbox\": \(Self.list(bbox)), \"predicted_iou\": \(Self.number(Double(predictedIoU))), "
            + "\"point_coords\": [[\(Self.number(pointCoords[0])), \(Self.number(pointCoords[1]))]], "
            + "\"stability_score\": \(Self.number(Double(stabilityScore))), \"crop_box\": \(Self.list(cropBox))}"
    }

    /// How a JSON annotation holds its mask (upstream's `output_mode` values that JSON can hold).
    public enum SegmentationFormat: Sendable {
        /// COCO's compressed RLE string (`COCORLE`), upstream's `"coco_rle"`.
        case cocoRLE
        /// Run lengths as a list of integers (`UncompressedRLE`), upstream's `"uncompressed_rle"`.
        case uncompressedRLE
    }

    /// A list of annotations as one JSON array, one annotation a line.
    public static func jsonText(_ annotations: [MaskAnnotation], format: SegmentationFormat = .cocoRLE) -> String {
        annotations.isEmpty ? "[]\n" : "[\n" + annotations.map { "  " + $0.jsonText(format) }.joined(separator: ",\n") + "\n]\n"
    }

    /// `metadata.csv` as upstream's `scripts/amg.py` writes it beside the masks' PNGs (`<i>.png`)
    /// when it does not convert them to RLE: a header and one row per mask, values as Python's `str`
    /// prints them, lines joined by newlines with none after the last.
    /// ref: segment_anything scripts/amg.py write_masks_to_folder
    public static func metadataCSV(_ annotations: [MaskAnnotation]) -> String {
        let header = "id,area,bbox_x0,bbox_y0,bbox_w,bbox_h,point_input_x,point_input_y,predicted_iou,stability_score,"
            + "crop_box_x0,crop_box_y0,crop_box_w,crop_box_h"
        let rows = annotations.enumerated().map { index, annotation in
            ([String(index), String(annotation.area)] + annotation.bbox.map(String.init)
                + annotation.pointCoords.map(number) + [number(Double(annotation.predictedIoU)), number(Double(annotation.stabilityScore))]
                + annotation.cropBox.map(String.init)).joined(separator: ",")
        }
        return ([header] + rows).joined(separator: "\n")
    }

    package static func list(_ values: [Int]) -> String { "[" + values.map(String.init).joined(separator: ", ") + "]" }

    /// Python's float repr: shortest round-trip digits, `1.0` for integral values, NaN as Python's json writes it.
    package static func number(_ value: Double) -> String {
        if value.isNaN { return "NaN" }
        if value.isInfinite { return value < 0 ? "-Infinity" : "Infinity" }
        let text = "\(value)"
        return text
    }
}
