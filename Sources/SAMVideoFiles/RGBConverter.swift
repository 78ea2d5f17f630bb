import CFFmpeg
import SAMImage

/// Decoded frames to 8-bit RGB as `ffmpeg -i VIDEO -pix_fmt rgb24` converts them: the scale filter
/// the command line inserts (libswscale, bicubic flags; at an unchanged size only the colour
/// conversion runs) with the frame's own matrix (`sws_getCoefficients(colorspace)`, BT.601 when
/// unspecified) and its signalled range (limited or full; unspecified keeps libswscale's default,
/// full for the `yuvj` formats). ref: libavfilter/vf_scale.c (FFmpeg 5.1) scale_frame.
final class RGBConverter {
    private var context: OpaquePointer?
    /// Rows are converted into a padded buffer first: libswscale's SIMD paths may write whole
    /// blocks past a row's last pixel.
    private var padded: [UInt8] = []

    deinit { sws_freeContext(context) }

    /// `frame` as an RGB image; nil when libswscale cannot convert its pixel format.
    func convert(_ frame: UnsafePointer<AVFrame>) -> RGBImage? {
        let width = Int(frame.pointee.width), height = Int(frame.pointee.height)
        let source = AVPixelFormat(rawValue: frame.pointee.format)
        guard width > 0, height > 0, frame.pointee.format >= 0,
              let context = sws_getCachedContext(self.context, Int32(width), Int32(height), source, Int32(width), Int32(height),
                                                 AV_PIX_FMT_RGB24, SWS_BICUBIC, nil, nil, nil) else { return nil }
        self.context = context
        applyColorDetails(of: frame, to: context)
        let stride = (width * 3 + 63) & ~63
        let needed = stride * height + 64
        if padded.count < needed { padded = [UInt8](repeating: 0, count: needed) }
        let rows = padded.withUnsafeMutableBufferPointer { out -> Int32 in
            var planes: [UnsafeMutablePointer<UInt8>?] = [out.baseAddress, nil, nil, nil]
            var strides: [Int32] = [Int32(stride), 0, 0, 0]
            return withUnsafePointer(to: frame.pointee.data) { data in
                withUnsafePointer(to: frame.pointee.linesize) { linesize in
                    data.withMemoryRebound(to: UnsafePointer<UInt8>?.self, capacity: 8) { sources in
                        linesize.withMemoryRebound(to: Int32.self, capacity: 8) { sourceStrides in
                            sws_scale(context, sources, sourceStrides, 0, Int32(height), &planes, &strides)
                        }
                    }
                }
            }
        }
        guard rows == Int32(height) else { return nil }
        var pixels = [UInt8](repeating: 0, count: width * height * 3)
        pixels.withUnsafeMutableBufferPointer { target in
            padded.withUnsafeBufferPointer { source in
                for row in 0..<height {
                    (target.baseAddress! + row * width * 3).update(from: source.baseAddress! + row * stride, count: width * 3)
                }
            }
        }
        return try? RGBImage(width: width, height: height, pixels: pixels)
    }

    /// The scale filter's colour set-up: matrix from the frame's colorspace for both directions,
    /// input range from the frame when it signals one, the rest as libswscale has it.
    private func applyColorDetails(of frame: UnsafePointer<AVFrame>, to context: OpaquePointer) {
        var inverseTable: UnsafeMutablePointer<Int32>?, table: UnsafeMutablePointer<Int32>?
        var sourceFull: Int32 = 0, destinationFull: Int32 = 0, brightness: Int32 = 0, contrast: Int32 = 0, saturation: Int32 = 0
        guard sws_getColorspaceDetails(context, &inverseTable, &sourceFull, &table, &destinationFull,
                                       &brightness, &contrast, &saturation) >= 0 else { return }
        let coefficients = sws_getCoefficients(Int32(frame.pointee.colorspace.rawValue))
        if frame.pointee.color_range != AVCOL_RANGE_UNSPECIFIED {
            sourceFull = frame.pointee.color_range == AVCOL_RANGE_JPEG ? 1 : 0
        }
        _ = sws_setColorspaceDetails(context, coefficients, sourceFull, coefficients, destinationFull, brightness, contrast, saturation)
    }
}
