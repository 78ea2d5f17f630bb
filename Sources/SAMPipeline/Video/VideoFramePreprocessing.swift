import SAMImage
import SAMTensor

/// A video frame as SAM 2's video loader prepares it: resized to S x S with Pillow's default filter
/// (bicubic, on the 8-bit pixels, aspect ratio not kept), divided by 255 in double, then normalised
/// with ImageNet's mean and std in float32.
/// ref: sam2/utils/misc.py _load_img_as_tensor, load_video_frames_from_jpg_images
package enum VideoFramePreprocessing {
    static let mean: [Float] = [0.485, 0.456, 0.406]
    static let std: [Float] = [0.229, 0.224, 0.225]
    /// Each channel's 256 byte values, normalised: the values every pixel gets, [3 * 256].
    /// ref: img_np / 255.0 (float64), stored into a float32 tensor; (x - mean) / std
    static let normalizedBytes = (0..<3).flatMap { c in (0..<256).map { value in (Float(Double(value) / 255.0) - mean[c]) / std[c] } }

    /// [1, 3, side, side].
    package static func normalized(_ image: RGBImage, side: Int) throws(TrackingError) -> FloatTensor {
        let resized: RGBImage
        do { resized = try PILResize.resize(image, width: side, height: side, filter: .bicubic) } catch {
            throw .frames("resizing a frame: \(error)")
        }
        let plane = side * side
        let data = [Float](unsafeUninitializedCapacity: 3 * plane) { out, initialized in
            resized.pixels.withUnsafeBufferPointer { pixels in
                normalizedBytes.withUnsafeBufferPointer { table in
                    for c in 0..<3 where plane > 0 {
                        let channel = out.baseAddress! + c * plane, lookup = table.baseAddress! + c * 256
                        for i in 0..<plane { channel[i] = lookup[Int(pixels[i * 3 + c])] }
                    }
                }
            }
            initialized = 3 * plane
        }
        return FloatTensor(shape: [1, 3, side, side], data: data)
    }
}
