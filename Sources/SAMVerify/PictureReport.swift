import Foundation
import SAMFiles
import SAMFormats
import SAMImage
import SAMImageFiles
import SAMTensor

/// `--report DIR`: pictures people look at, per case, and an `index.html` linking them.
///
/// A decoder case gets the photo with its prompt (`-prompt.png`); the reference's best mask, the native
/// mask of the same index and where they differ side by side (`-masks.png`: white both, red reference
/// only, green native only), with the native best mask as a fourth panel when it is another one; and a
/// heat map of |native - reference| of that mask's full-size logits (`-error.png`). The image encoder
/// gets a heat map of the embedding error (mean over channels, per position), the preprocessing case
/// one per stage (largest channel error per pixel). Pictures are drawn as each case finishes and the
/// folder is published whole at the end (`StagedFolder`): a report never mixes two runs.
public final class PictureReport {
    let staged: StagedFolder
    let references: ReferenceSet
    /// Case name -> its pictures (file name, caption), in run order.
    private(set) var pictures: [(name: String, files: [(file: String, caption: String)])] = []
    private var written: [String] = []
    private var problems: [String] = []
    private lazy var photo: RGBImage? = loadPhoto()

    /// Checks that `folder` may receive the report (nothing there that is not a report file of this set's
    /// cases, none of `inputs`) and stages it.
    public init(folder: String, references: ReferenceSet, cases: [String], inputs: [String]) throws(VerifyError) {
        self.references = references
        var owned = ["index.html"]
        for (index, name) in cases.enumerated() {
            owned += Self.suffixes.map { Self.fileName(index: index, caseName: name, suffix: $0) }
        }
        do {
            staged = try StagedFolder(folder: folder, ownedNames: owned,
                                      policy: OutputPolicy(existing: .replace, inputs: inputs, option: "--report"))
        } catch {
            throw VerifyError(error.code == .outputRefused ? .outputRefused : .writeFailed, error.message)
        }
    }

    static let suffixes = ["prompt", "masks", "error", "decoded_image", "resized_image", "input_image"]

    /// "003-points5-masks.png": the run index keeps names unique whatever the case is called.
    static func fileName(index: Int, caseName: String, suffix: String) -> String {
        let safe = String(caseName.unicodeScalars.map { scalar -> Character in
            (scalar.properties.isAlphabetic && scalar.isASCII) || ("0"..."9").contains(scalar) || scalar == "_" || scalar == "-"
                ? Character(scalar) : "_"
        }.prefix(60))
        return String(format: "%03d", index) + "-" + safe + "-" + suffix + ".png"
    }

    /// Draws `artifacts`' pictures (an observer for `Verifier.verify`).
    public func record(_ artifacts: CaseArtifacts) {
        let index = pictures.count
        var files: [(file: String, caption: String)] = []
        func save(_ image: RGBImage, _ suffix: String, _ caption: String) {
            let name = Self.fileName(index: index, caseName: artifacts.name, suffix: suffix)
            do {
                try ImageIO.writePNG(image, to: staged.path(name))
                written.append(name)
                files.append((name, caption))
            } catch {
                problems.append("\(name): \(error)")
            }
        }
        switch artifacts.kind {
        case .decoder: drawDecoder(artifacts, save)
        case .imageEncoder: drawEncoder(artifacts, save)
        case .preprocess: drawPreprocess(artifacts, save)
        }
        pictures.append((artifacts.name, files))
    }

    /// Writes `index.html` for `report` and puts the folder in place.
    public func finish(_ report: VerificationReport) throws(VerifyError) {
        if !problems.isEmpty {
            throw VerifyError(.writeFailed, "--report: cannot write " + problems.prefix(3).joined(separator: "; "))
        }
        do {
            try AtomicFile.write(Array(html(report).utf8), to: staged.path("index.html"), policy: .replace)
            try staged.publish(written + ["index.html"])
        } catch {
            throw VerifyError(error.code == .outputRefused ? .outputRefused : .writeFailed, "--report: \(error.message)")
        }
    }

    // MARK: - Pictures

    typealias Save = (RGBImage, String, String) -> Void

    func drawDecoder(_ artifacts: CaseArtifacts, _ save: Save) {
        guard let frame = artifacts.frame, let native = artifacts.nativeMasks, let reference = artifacts.referenceMasks,
              let prompt = artifacts.result.task?.prompts.first else { return }
        let canvas = PictureCanvas(original: frame.originalSize)
        let background = canvas.photo(photo ?? RGBImage(width: frame.originalSize.width, height: frame.originalSize.height,
                                                        fill: (128, 128, 128)))
        let (points, box) = promptMarks(artifacts.name, frame: frame)
        let marks = points.map(canvas.scaled), boxMark = box.map(canvas.scaled)
        if let image = try? Overlay.render(background, points: marks, box: boxMark) {
            save(image, "prompt", "the prompt on the photo (green foreground, red background, yellow box)")
        }
        let shown = prompt.referenceBest
        let referenceMask = canvas.mask(reference, shown), nativeMask = canvas.mask(native, shown)
        var panels: [RGBImage] = []
        for mask in [referenceMask, nativeMask] {
            if let image = try? Overlay.render(background, mask: mask[...], points: marks, box: boxMark) { panels.append(image) }
        }
        let difference = canvas.difference(reference: referenceMask, native: nativeMask)
        panels.append(difference.image)
        var caption = "mask \(shown) (the reference's best): reference | native | difference (white both, red reference only, "
            + "green native only; \(difference.differing) pixels differ here), IoU \(formatIoU(prompt.masks[shown].iou))"
        if prompt.nativeBest != shown,
           let image = try? Overlay.render(background, mask: canvas.mask(native, prompt.nativeBest)[...], color: Overlay.Color(255, 140, 0),
                                           points: marks, box: boxMark) {
            panels.append(image)
            caption += " | the native best mask, \(prompt.nativeBest) (orange): the best mask DIFFERS"
        }
        save(PictureCanvas.sideBySide(panels), "masks", caption)

        guard let nativeLogits = artifacts.native["low_res_masks"], let referenceLogits = artifacts.reference["low_res_masks"],
              let error = fullSizeError(native: nativeLogits, reference: referenceLogits, mask: shown, frame: frame) else { return }
        let heat = canvas.heatMap(error, width: frame.originalSize.width, height: frame.originalSize.height)
        save(heat.image, "error", "|native - reference| of mask \(shown)'s full-size logits, black 0 to white "
             + "\(formatFigure(heat.scale)) (the largest)")
    }

    func drawEncoder(_ artifacts: CaseArtifacts, _ save: Save) {
        guard let native = artifacts.native["image_embeddings"], let reference = artifacts.reference["image_embeddings"],
              native.shape == reference.shape, native.shape.count == 4 else { return }
        let (channels, rows, columns) = (native.shape[1], native.shape[2], native.shape[3])
        var mean = [Float](repeating: 0, count: rows * columns)
        for channel in 0..<channels {
            for position in 0..<(rows * columns) {
                let index = channel * rows * columns + position
                mean[position] += abs(native.data[index] - reference.data[index]) / Float(channels)
            }
        }
        let canvas = PictureCanvas(original: ImageSize(height: rows, width: columns))
        let heat = canvas.heatMap(mean, width: columns, height: rows)
        save(heat.image, "error", "mean over \(channels) channels of |native - reference| image embeddings per position "
             + "(\(rows)x\(columns)), black 0 to white \(formatFigure(heat.scale))")
    }

    func drawPreprocess(_ artifacts: CaseArtifacts, _ save: Save) {
        for output in ["decoded_image", "resized_image", "input_image"] {
            guard let native = artifacts.native[output], let reference = artifacts.reference[output], native.shape == reference.shape
            else { continue }
            // [H, W, 3] images, or the [1, 3, S, S] input: the largest channel error per pixel.
            let planar = native.shape.count == 4
            let height = planar ? native.shape[2] : native.shape[0], width = planar ? native.shape[3] : native.shape[1]
            guard height > 0, width > 0 else { continue }
            var worst = [Float](repeating: 0, count: height * width)
            for pixel in 0..<(height * width) {
                for channel in 0..<3 {
                    let index = planar ? channel * height * width + pixel : pixel * 3 + channel
                    worst[pixel] = max(worst[pixel], abs(native.data[index] - reference.data[index]))
                }
            }
            let canvas = PictureCanvas(original: ImageSize(height: height, width: width))
            let heat = canvas.heatMap(worst, width: width, height: height)
            save(heat.image, output, "\(output): largest channel |native - reference| per pixel, black 0 to white \(formatFigure(heat.scale))")
        }
    }

    /// |native - reference| of mask `index`'s logits at the original size (both upscaled as the predictor does).
    func fullSizeError(native: FloatTensor, reference: FloatTensor, mask index: Int, frame: MaskFrame) -> [Float]? {
        guard native.shape == reference.shape, native.shape.count == 4, index < native.shape[1] else { return nil }
        let plane = native.shape[2] * native.shape[3]
        func one(_ tensor: FloatTensor) -> FloatTensor {
            FloatTensor(shape: [1, 1, tensor.shape[2], tensor.shape[3]], data: Array(tensor.data[(index * plane)..<((index + 1) * plane)]))
        }
        let postprocessor = MaskPostprocessor(imageSize: frame.imageSize)
        guard let a = try? postprocessor.upscale(one(native), inputSize: frame.inputSize, originalSize: frame.originalSize),
              let b = try? postprocessor.upscale(one(reference), inputSize: frame.inputSize, originalSize: frame.originalSize) else {
            return nil
        }
        return zip(a.data, b.data).map { abs($0 - $1) }
    }

    // MARK: - Inputs

    /// The photo at the masks' size: the set's photo, else its resized image (the original when nothing was resized).
    func loadPhoto() -> RGBImage? {
        if let photo = references.photo, case .success(let path) = references.resolve(photo), let image = try? ImageIO.read(path) {
            return image
        }
        let file = references.referencesPrefix + "/resized_image.npy"
        guard case .success(let path) = references.resolve(file), let tensor = try? NPY.read(path), tensor.dtype == .uint8,
              tensor.shape.count == 3, tensor.shape[2] == 3 else { return nil }
        return try? RGBImage(width: tensor.shape[1], height: tensor.shape[0], pixels: tensor.floats().map { UInt8($0) })
    }

    /// The case's prompt in original-image pixels: its predictor files (`point_coords`, `point_labels`, `box`)
    /// when it has them, else the official inputs mapped back from the input frame.
    func promptMarks(_ caseName: String, frame: MaskFrame) -> (points: [Overlay.Point], box: Overlay.Box?) {
        func read(_ name: String) -> [Float]? {
            let file = references.referencesPrefix + "/" + caseName + "/" + name + ".npy"
            guard case .success(let path) = references.resolve(file), let tensor = try? NPY.read(path) else { return nil }
            let values = tensor.floats()
            return values.allSatisfy(\.isFinite) ? values : nil
        }
        var points: [Overlay.Point] = [], box: Overlay.Box?
        if let coords = read("point_coords"), let labels = read("point_labels"), coords.count == 2 * labels.count {
            points = labels.indices.map { Overlay.Point(x: Double(coords[2 * $0]), y: Double(coords[2 * $0 + 1]), label: Int(labels[$0])) }
            if let corners = read("box"), corners.count == 4 {
                box = Overlay.Box(x0: Double(corners[0]), y0: Double(corners[1]), x1: Double(corners[2]), y1: Double(corners[3]))
            }
            return (points, box)
        }
        if let corners = read("box"), corners.count == 4 {
            box = Overlay.Box(x0: Double(corners[0]), y0: Double(corners[1]), x1: Double(corners[2]), y1: Double(corners[3]))
            if read("point_coords") == nil { return ([], box) }
        }
        guard let coords = read("onnx_point_coords"), let labels = read("onnx_point_labels"), coords.count == 2 * labels.count else {
            return (points, box)
        }
        // ref: utils/transforms.py ResizeLongestSide.apply_coords, inverted: input frame -> original pixels.
        let sx = Double(frame.originalSize.width) / Double(frame.inputSize.width)
        let sy = Double(frame.originalSize.height) / Double(frame.inputSize.height)
        var corners: [Double] = []
        for index in labels.indices {
            let x = Double(coords[2 * index]) * sx, y = Double(coords[2 * index + 1]) * sy
            switch labels[index] {
            case 0, 1: points.append(Overlay.Point(x: x, y: y, label: Int(labels[index])))
            case 2, 3: corners += [x, y]
            default: continue
            }
        }
        if corners.count == 4 { box = Overlay.Box(x0: corners[0], y0: corners[1], x1: corners[2], y1: corners[3]) }
        return (points, box)
    }
}
