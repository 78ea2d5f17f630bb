import Foundation
import SAMEverything
import SAMImage
import SAMImageFiles
import SAMPipeline

/// `samverify` on a segment-everything reference set: the native generator runs with the set's
/// parameters on each photo, and its masks are compared with upstream's as sets (`MaskSetComparison`).
/// An image passes when at least `requiredFraction` of the masks on each side are matched at IoU >=
/// `iouThreshold`; the unmatched masks are listed, and can be drawn over the photo.
public enum EverythingVerification {
    /// The issue's bar: 98% of each side matched by a mask with IoU >= 0.95.
    public static let requiredFraction = 0.98
    public static let iouThreshold = 0.95

    public struct ImageResult: Sendable, Codable, Equatable {
        public var name: String
        public var nativeMasks: Int
        public var referenceMasks: Int
        public var matched: Int
        public var nativeMatchedFraction: Double
        public var referenceMatchedFraction: Double
        /// Matched pairs' IoU: lowest, 5th percentile, median.
        public var iouMin: Double
        public var iouP5: Double
        public var iouMedian: Double
        /// Largest difference of a matched pair's predicted IoU and stability score.
        public var predictedIoUMaxDifference: Double
        public var stabilityMaxDifference: Double
        public var unmatchedNative: [Int]
        public var unmatchedReference: [Int]
        public var seconds: Double
        public var passed: Bool

        enum CodingKeys: String, CodingKey {
            case name, matched, seconds, passed
            case nativeMasks = "native_masks", referenceMasks = "reference_masks"
            case nativeMatchedFraction = "native_matched_fraction", referenceMatchedFraction = "reference_matched_fraction"
            case iouMin = "iou_min", iouP5 = "iou_p5", iouMedian = "iou_median"
            case predictedIoUMaxDifference = "predicted_iou_max_difference", stabilityMaxDifference = "stability_max_difference"
            case unmatchedNative = "unmatched_native", unmatchedReference = "unmatched_reference"
        }
    }

    /// One photo of the set: the result, and what a picture of it needs.
    public struct ImageRun: Sendable {
        public var result: ImageResult
        public var photo: RGBImage
        public var native: [MaskAnnotation]
        public var reference: [MaskAnnotation]
    }

    /// Runs the generator of `segmenter` with the set's parameters on every photo of `set`.
    public static func run(_ segmenter: SegmentAnything, set: AutomaticMaskReferenceSet,
                           progress: (String) -> Void = { _ in }) throws(EverythingError) -> [ImageRun] {
        let generator = try AutomaticMaskGenerator(segmenter: segmenter, settings: set.settings)
        var runs: [ImageRun] = []
        for image in set.images {
            progress("\(image.name): generating")
            let photo: RGBImage
            do { photo = try ImageIO.read(image.imagePath) } catch { throw .image(error) }
            let reference = try AutomaticMaskReferenceSet.annotations(at: image.masksPath)
            // Checked before any mask is decoded: a hostile size would ask for its height x width bytes.
            if let wrong = reference.firstIndex(where: { $0.segmentation.height != photo.height || $0.segmentation.width != photo.width }) {
                throw .referenceSet("\(image.masksPath): annotation \(wrong) is \(reference[wrong].segmentation.width)x"
                                    + "\(reference[wrong].segmentation.height), the photo \(photo.width)x\(photo.height)")
            }
            let started = Date()
            let native = try generator.generate(photo)
            let seconds = Date().timeIntervalSince(started)
            let comparison: MaskSetComparison
            do {
                comparison = MaskSetComparison(native: try native.map { try $0.segmentation.mask() },
                                               reference: try reference.map { try $0.segmentation.mask() }, threshold: iouThreshold)
            } catch {
                throw .referenceSet("\(image.masksPath): \(error)")
            }
            let quantiles = comparison.iouQuantiles([0, 0.05, 0.5])
            let pairs = comparison.matched.map { (native[$0.native], reference[$0.reference]) }
            let result = ImageResult(
                name: image.name, nativeMasks: native.count, referenceMasks: reference.count, matched: comparison.matched.count,
                nativeMatchedFraction: comparison.nativeMatchedFraction, referenceMatchedFraction: comparison.referenceMatchedFraction,
                iouMin: quantiles[0], iouP5: quantiles[1], iouMedian: quantiles[2],
                predictedIoUMaxDifference: pairs.map { Double(abs($0.0.predictedIoU - $0.1.predictedIoU)) }.max() ?? 0,
                stabilityMaxDifference: pairs.map { Double(abs($0.0.stabilityScore - $0.1.stabilityScore)) }.max() ?? 0,
                unmatchedNative: comparison.unmatchedNative, unmatchedReference: comparison.unmatchedReference, seconds: seconds,
                passed: comparison.nativeMatchedFraction >= requiredFraction && comparison.referenceMatchedFraction >= requiredFraction)
            runs.append(ImageRun(result: result, photo: photo, native: native, reference: reference))
        }
        return runs
    }

    /// The photo with the native masks no reference mask matched in red and the reference masks no
    /// native mask matched in blue (both at half opacity), for the report.
    public static func unmatchedPicture(_ run: ImageRun) -> RGBImage {
        var image = run.photo
        func tint(_ annotation: MaskAnnotation, _ colour: [Double]) {
            annotation.segmentation.forEachSetPixel { x, y in
                guard x < image.width, y < image.height else { return }
                for channel in 0..<3 {
                    image[x, y, channel] = UInt8((Double(image[x, y, channel]) * 0.5 + colour[channel] * 0.5).rounded())
                }
            }
        }
        for index in run.result.unmatchedNative { tint(run.native[index], [255, 40, 40]) }
        for index in run.result.unmatchedReference { tint(run.reference[index], [40, 80, 255]) }
        return image
    }

    /// A table for people: one line per photo.
    public static func table(_ runs: [ImageRun]) -> String {
        var lines = ["image        native  upstream  matched  native%  upstream%  IoU min / p5 / median      seconds  status"]
        for run in runs {
            let r = run.result
            let name = r.name.count >= 12 ? r.name : r.name + String(repeating: " ", count: 12 - r.name.count)
            lines.append(name + String(format: " %6d  %8d  %7d  %6.1f%%  %8.1f%%  %.5f / %.5f / %.5f  %7.2f  ",
                                       r.nativeMasks, r.referenceMasks, r.matched, 100 * r.nativeMatchedFraction,
                                       100 * r.referenceMatchedFraction, r.iouMin, r.iouP5, r.iouMedian, r.seconds)
                         + (r.passed ? "PASS" : "FAIL"))
        }
        let failed = runs.filter { !$0.result.passed }.count
        lines.append("\(runs.count) image(s): \(runs.count - failed) passed, \(failed) failed (each side >= "
                     + "\(Int(requiredFraction * 100))% matched at IoU >= \(iouThreshold)) -> \(failed == 0 ? "PASS (exit 0)" : "FAIL (exit 1)")")
        return lines.joined(separator: "\n") + "\n"
    }
}
