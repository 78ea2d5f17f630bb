import SAMTestSupport
import SAMBLAS
import Testing

@Suite("BLAS")
struct BLASTests {
    @Test("sgemm on a hand-computed 2x3 * 3x2 product")
    func knownProduct() {
        // [1 2 3; 4 5 6] * [7 8; 9 10; 11 12] = [58 64; 139 154]
        let a: [Float] = [1, 2, 3, 4, 5, 6]
        let b: [Float] = [7, 8, 9, 10, 11, 12]
        var c = [Float](repeating: -1, count: 4)
        BLAS.sgemm(transA: false, transB: false, m: 2, n: 2, k: 3, alpha: 1, a: a, lda: 3, b: b, ldb: 2,
                   beta: 0, c: &c, ldc: 2)
        #expect(c == [58, 64, 139, 154])
    }

    @Test("sgemm matches a float64 reference for every transpose combination and padded strides",
          arguments: [(false, false), (false, true), (true, false), (true, true)])
    func randomProducts(transA: Bool, transB: Bool) {
        var rng = SplitMix64(seed: 11)
        let m = 5, n = 7, k = 9, alpha: Float = 0.75, beta: Float = -0.5
        // Leading dimensions wider than needed, to catch stride mistakes.
        let lda = (transA ? m : k) + 2, ldb = (transB ? k : n) + 3, ldc = n + 1
        let a = (0..<((transA ? k : m) * lda)).map { _ in Float.random(in: -1...1, using: &rng) }
        let b = (0..<((transB ? n : k) * ldb)).map { _ in Float.random(in: -1...1, using: &rng) }
        let c0 = (0..<(m * ldc)).map { _ in Float.random(in: -1...1, using: &rng) }
        var c = c0
        BLAS.sgemm(transA: transA, transB: transB, m: m, n: n, k: k, alpha: alpha, a: a, lda: lda,
                   b: b, ldb: ldb, beta: beta, c: &c, ldc: ldc)
        var expected: [Expected] = [], actual: [Float] = []
        for i in 0..<m {
            for j in 0..<n {
                var sum = Expected.zero
                for p in 0..<k {
                    let aValue = transA ? a[p * lda + i] : a[i * lda + p]
                    let bValue = transB ? b[j * ldb + p] : b[p * ldb + j]
                    sum += Expected(exact: aValue) * Expected(exact: bValue)
                }
                expected.append(Expected(exact: alpha) * sum + Expected(exact: beta) * Expected(exact: c0[i * ldc + j]))
                actual.append(c[i * ldc + j])
            }
            // Padding columns of C must be left alone.
            #expect(c[i * ldc + n] == c0[i * ldc + n])
        }
        let check = ToleranceCheck(actual, expected)
        print("[sgemm transA=\(transA) transB=\(transB)] \(check)")
        #expect(check.passed, "\(check)")
    }

    @Test("backend description names the library")
    func description() {
        let text = BLAS.backendDescription
        print("BLAS backend: \(text)")
        #if canImport(Accelerate)
        #expect(text == "Accelerate")
        #else
        #expect(text.contains("OpenBLAS"))
        #expect(text.contains("threads:"))
        #endif
    }
}
