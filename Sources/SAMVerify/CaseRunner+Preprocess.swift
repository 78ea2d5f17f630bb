import SAMFormats
import SAMImage
import SAMImageFiles
import SAMTensor

/// The `preprocess` case: what `SamPredictor.set_image` does before the encoder, one stage at a time,
/// each from the set's own reference of the stage before it, so a decoder or resize difference is
/// reported as such and never blamed on the encoder:
///
/// - `decoded_image`: the photo (`image.png`) decoded here against `references/decoded_image.npy`;
/// - `resized_image`: `ResizeLongestSide` of the decoded photo (the reference decode when the set has
///   it, else the photo decoded here) against `references/resized_image.npy`;
/// - `input_image`: the reference resized image normalised and padded against `references/input_image.npy`.
///
/// Images compare as uint8 (any difference of one level fails the default tolerance), the input as float32.
extension CaseRunner {
    static let preprocessOutputs = [("decoded_image", "decoded_image"), ("resized_image", "resized_image"),
                                    ("input_image", "input_image")]

    func runPreprocess(_ referenceCase: ReferenceCase, into result: inout CaseResult) {
        var outputs: [OutputCheck] = []
        var inputs: [String] = []
        let photo = references.photo
        if let photo, referenceCase.has("decoded_image") {
            inputs.append(photo)
            outputs.append(timed(Self.preprocessOutputs[0], referenceCase, dtype: .uint8) { () throws(InputProblem) in
                image(try decodePhoto(photo))
            })
        }
        if let photo, referenceCase.has("resized_image") {
            let decodedReference = referenceCase.has("decoded_image")
            inputs.append(decodedReference ? referenceCase.file("decoded_image") : photo)
            outputs.append(timed(Self.preprocessOutputs[1], referenceCase, dtype: .uint8) { () throws(InputProblem) in
                let source = decodedReference ? try referenceImage(referenceCase.file("decoded_image")) : try decodePhoto(photo)
                do { return image(try ResizeLongestSide(targetLength: sam.config.imageEncoder.imageSize).apply(source)) } catch {
                    throw InputProblem(message: "ResizeLongestSide: \(error)")
                }
            })
        }
        if referenceCase.has("resized_image"), referenceCase.has("input_image") {
            inputs.append(referenceCase.file("resized_image"))
            outputs.append(timed(Self.preprocessOutputs[2], referenceCase, dtype: .float32) { () throws(InputProblem) in
                try normalised(referenceImage(referenceCase.file("resized_image")), referenceCase)
            })
        }
        if photo != nil, !referenceCase.has("resized_image"), !referenceCase.has("decoded_image") {
            result.note = "the set has its photo but no decoded or resized reference to check it against"
        }
        result.note = result.note ?? (photo == nil ? "the set has no photo (image.png): decoding and resizing are not checked" : nil)
        result.inputs = inputs
        result.outputs = outputs
    }

    /// One stage run and compared; a stage whose input is unusable is bad input.
    func timed(_ output: (String, String), _ referenceCase: ReferenceCase, dtype: DType,
               _ body: () throws(InputProblem) -> FloatTensor) -> OutputCheck {
        let started = ContinuousClock.now
        let run: Result<FloatTensor, InputProblem>
        do { run = .success(try body()) } catch { run = .failure(error) }
        if case .failure(let problem) = run {
            return check(referenceCase, output, "preprocess", status: .badInput, problem: problem.message)
        }
        return compare(run, referenceCase, output, path: "preprocess", seconds: seconds(since: started), dtype: dtype)
    }

    func decodePhoto(_ photo: String) throws(InputProblem) -> RGBImage {
        let path: String
        switch references.resolve(photo) {
        case .failure(let outside): throw InputProblem(message: "photo \(outside)")
        case .success(let value): path = value
        }
        do { return try ImageIO.read(path) } catch { throw InputProblem(message: "photo \(photo): \(error)") }
    }

    /// A uint8 [H, W, 3] reference image of the set.
    func referenceImage(_ relative: String) throws(InputProblem) -> RGBImage {
        let tensor: Tensor
        do { tensor = try NPY.read(try references.resolve(relative).get()) } catch {
            throw InputProblem(message: "input \(relative) unreadable: \(error)")
        }
        guard tensor.dtype == .uint8, tensor.shape.count == 3, tensor.shape[2] == 3,
              tensor.shape[0] <= ImageIO.maxDimension, tensor.shape[1] <= ImageIO.maxDimension else {
            throw InputProblem(message: "input \(relative) is \(tensor.dtype.rawValue) \(Shape.text(tensor.shape)), expected uint8 [H,W,3]")
        }
        let pixels = tensor.floats().map { UInt8($0) }
        do { return try RGBImage(width: tensor.shape[1], height: tensor.shape[0], pixels: pixels) } catch {
            throw InputProblem(message: "input \(relative): \(error)")
        }
    }

    /// The model's input: `resized` normalised with the set's pixel mean and std (its manifest's
    /// `config`, else SAM's) and padded to the encoder's square. The reference input must be that square.
    func normalised(_ resized: RGBImage, _ referenceCase: ReferenceCase) throws(InputProblem) -> FloatTensor {
        let side = sam.config.imageEncoder.imageSize
        let file = referenceCase.file("input_image")
        guard let reference = try? NPY.read(try references.resolve(file).get()) else {
            throw InputProblem(message: "reference \(file) unreadable")
        }
        // Checked before normalising: the square is allocated at the model's size.
        guard reference.shape == [1, 3, side, side] else {
            throw InputProblem(message: "reference \(file) has shape \(Shape.text(reference.shape)), expected [1,3,\(side),\(side)] "
                               + "(the model's input square)")
        }
        let config = references.manifest?["config"]
        let mean = config?["pixelMean"]?.arrayValue?.compactMap(\.numberValue).map(Float.init) ?? []
        let std = config?["pixelStd"]?.arrayValue?.compactMap(\.numberValue).map(Float.init) ?? []
        let preprocessor = mean.count == 3 && std.count == 3 && std.allSatisfy({ $0 > 0 })
            ? SamPreprocessor(pixelMean: mean, pixelStd: std, imageSize: side) : SamPreprocessor(imageSize: side)
        do { return try preprocessor(resized) } catch {
            throw InputProblem(message: "normalising \(referenceCase.file("resized_image")): \(error)")
        }
    }

    /// An image as a float tensor [H, W, 3] of its uint8 levels, the layout of the reference `.npy` files.
    func image(_ image: RGBImage) -> FloatTensor {
        FloatTensor(shape: [image.height, image.width, 3], data: image.pixels.map(Float.init))
    }
}
