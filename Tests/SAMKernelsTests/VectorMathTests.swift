import Foundation
import SAMKernels
import Testing

@Suite("Vector math")
struct VectorMathTests {
    @Test("sinCos8 is within 1.2e-7 of sin and cos on |x| <= 100")
    func sinCos() {
        var worstSine = 0.0, worstCosine = 0.0, worstAt: Float = 0
        let count = 800_000
        var i = 0
        while i < count {
            var x = SIMD8<Float>(repeating: 0)
            for lane in 0..<8 { x[lane] = Float(-100 + 200 * Double(i + lane) / Double(count)) }
            let (sine, cosine) = Kernels.sinCos8(x)
            for lane in 0..<8 {
                let v = Double(x[lane])
                let sineError = abs(Double(sine[lane]) - Foundation.sin(v))
                let cosineError = abs(Double(cosine[lane]) - Foundation.cos(v))
                if max(sineError, cosineError) > max(worstSine, worstCosine) { worstAt = x[lane] }
                worstSine = max(worstSine, sineError)
                worstCosine = max(worstCosine, cosineError)
            }
            i += 8
        }
        print("sinCos8: worst sin error \(worstSine), cos error \(worstCosine) (at x = \(worstAt))")
        #expect(worstSine <= 1.2e-7 && worstCosine <= 1.2e-7)
    }
}
