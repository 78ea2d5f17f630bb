/// The generator's last step when `min_mask_region_area` > 0: holes, then islands, smaller than the
/// area are removed from every mask, and duplicates are removed again by box NMS, a mask that the
/// cleanup changed yielding to one it left alone (scores 0 and 1, as upstream).
/// ref: segment_anything/automatic_mask_generator.py SamAutomaticMaskGenerator.postprocess_small_regions
enum SmallRegionCleanup {
    static func apply(to records: [MaskRecord], minArea: Int, nmsThreshold: Double) throws(EverythingError) -> [MaskRecord] {
        guard !records.isEmpty else { return records }
        var cleaned = records
        var scores: [Float] = []
        scores.reserveCapacity(records.count)
        // One mask at a time: only a changed mask's new counts and box are kept, never all masks at once.
        for index in records.indices {
            let mask: BinaryMask
            do { mask = try records[index].rle.mask() } catch { throw .invalidSettings([error.message]) }
            let (filled, holesChanged) = removeSmallRegions(mask, areaThreshold: Double(minArea), mode: .holes)
            let (result, islandsChanged) = removeSmallRegions(filled, areaThreshold: Double(minArea), mode: .islands)
            let unchanged = !holesChanged && !islandsChanged
            scores.append(unchanged ? 1 : 0)
            // ref: boxes = batched_mask_to_box(masks) of every mask; a changed one's counts and box replaced.
            if !unchanged {
                cleaned[index].rle = UncompressedRLE(mask: result)
                cleaned[index].box = maskToBox(result)
            }
        }
        return try AutomaticMaskGenerator.deduplicated(cleaned, scores: scores, threshold: nmsThreshold)
    }
}
