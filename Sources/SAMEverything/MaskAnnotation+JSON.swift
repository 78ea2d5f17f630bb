import Foundation

extension MaskAnnotation {
    /// The annotation as upstream's `scripts/amg.py --convert-to-rle` writes it (json.dump of the
    /// generator's dict, keys in its order): `segmentation` {`size` [h, w], `counts` (COCO RLE string)},
    /// `area`, `bbox` XYWH, `predicted_iou`, `point_coords` [[x, y]], `stability_score`, `crop_box` XYWH.
    /// Floats print as Python prints them (the shortest text that reads back to the same double).
    public var jsonText: String {
        // Counts of a mask this generator made always encode; a hand-made annotation's may not.
        let counts = (try? COCORLE(segmentation).counts) ?? ""
        return "{\"segmentation\": {\"size\": [\(segmentation.height), \(segmentation.width)], \"counts\": \(COCOInstances.jsonString(counts))}, "
            + "\"area\": \(area), \"bbox\": \(Self.list(bbox)), \"predicted_iou\": \(Self.number(Double(predictedIoU))), "
            + "\"point_coords\": [[\(Self.number(pointCoords[0])), \(Self.number(pointCoords[1]))]], "
            + "\"stability_score\": \(Self.number(Double(stabilityScore))), \"crop_box\": \(Self.list(cropBox))}"
    }

    /// A list of annotations as one JSON array, one annotation a line.
    public static func jsonText(_ annotations: [MaskAnnotation]) -> String {
        annotations.isEmpty ? "[]\n" : "[\n" + annotations.map { "  " + $0.jsonText }.joined(separator: ",\n") + "\n]\n"
    }

    static func list(_ values: [Int]) -> String { "[" + values.map(String.init).joined(separator: ", ") + "]" }

    /// Python's float repr: shortest round-trip digits, `1.0` for integral values, NaN as Python's json writes it.
    static func number(_ value: Double) -> String {
        if value.isNaN { return "NaN" }
        if value.isInfinite { return value < 0 ? "-Infinity" : "Infinity" }
        let text = "\(value)"
        return text
    }
}
