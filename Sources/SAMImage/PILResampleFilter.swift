extension PILResize {
    /// Pillow's resampling filters that the toolkit ports: the kernel each output pixel's taps are
    /// weighted by, and how far it reaches (in input pixels when enlarging; widened by the scale
    /// factor when shrinking, which is Pillow's antialiasing).
    package enum Filter: Sendable, CaseIterable {
        /// `Image.BILINEAR`: what torchvision's resize (and so `ResizeLongestSide`) asks for.
        case bilinear
        /// `Image.BICUBIC`, Pillow's default for `Image.resize`: what SAM 2's video loader gets
        /// from `img.resize((S, S))`.
        case bicubic

        /// ref: Resample.c `static struct filter BILINEAR = {bilinear_filter, 1.0}`, `BICUBIC = {bicubic_filter, 2.0}`
        var support: Double {
            switch self {
            case .bilinear: 1.0
            case .bicubic: 2.0
            }
        }

        @inline(__always)
        func weight(_ x: Double) -> Double {
            switch self {
            case .bilinear: PILResize.triangle(x)
            case .bicubic: PILResize.cubic(x)
            }
        }
    }

    /// Keys' cubic convolution with a = -0.5, in the same operation order as Pillow, so the
    /// doubles (and the 22-bit coefficients rounded from them) are the same.
    /// ref: Resample.c bicubic_filter
    @inline(__always)
    static func cubic(_ x: Double) -> Double {
        let a = -0.5
        let magnitude = x < 0 ? -x : x
        if magnitude < 1 { return ((a + 2.0) * magnitude - (a + 3.0)) * magnitude * magnitude + 1 }
        if magnitude < 2 { return (((magnitude - 5) * magnitude + 8) * magnitude - 4) * a }
        return 0
    }
}
