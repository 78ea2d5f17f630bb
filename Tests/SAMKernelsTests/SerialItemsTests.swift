import SAMBLAS
@testable import SAMKernels
import SAMParallel
import SAMTensor
import SAMTestSupport
import Testing

/// A batch runs each item inside `Workers.serially` (`parallelForSerialItems`), its loops inline:
/// the kernels must still cut its work as they do for the item run alone, since OpenBLAS's sgemm
/// rounds by shape (its Haswell kernels give other bits for a product cut in other row blocks).
/// Run on both kernel paths by `make test-blas-paths`.
@Suite("Serial items")
struct SerialItemsTests {
    @Test("a linear layer inside Workers.serially gives the bits it gives alone", arguments: [
        (rows: 600, features: 256),  // three tiles of 256 rows on the BLAS: tiled for one worker, one call for two
        (rows: 40, features: 96), (rows: 4096, features: 64),
    ])
    func linearAlike(rows: Int, features: Int) throws {
        var rng = SplitMix64(seed: UInt64(rows))
        let x = randomTensor([rows, features], using: &rng)
        let weight = randomTensor([features, features], using: &rng)
        let bias = randomTensor([features], using: &rng)
        var kernels: [Kernels.Float32LinearKernel] = [.blas]
        if Kernels.panelKernelAvailable { kernels.append(.panels) }
        for kernel in kernels {
            let alone = try Kernels.withFloat32LinearKernel(kernel) { Kernels.linear(x, weight: weight, bias: bias) }
            let serial = try Kernels.withFloat32LinearKernel(kernel) {
                Workers.serially { Kernels.linear(x, weight: weight, bias: bias) }
            }
            let same = serial.data == alone.data  // compared first: a failure names the case, not 150k floats
            #expect(same, "\(kernel) \(rows)x\(features), \(Kernels.workerCount) workers, \(BLAS.backendDescription)")
        }
    }

    @Test("gemm inside Workers.serially gives the bits it gives alone", arguments: [(8, 1024, 256), (600, 256, 256)])
    func gemmAlike(m: Int, n: Int, k: Int) {
        var rng = SplitMix64(seed: UInt64(m * n))
        let a = randomTensor([m, k], using: &rng), b = randomTensor([k, n], using: &rng)
        func product() -> [Float] {
            var c = [Float](repeating: 0, count: m * n)
            a.data.withUnsafeBufferPointer { a in
                b.data.withUnsafeBufferPointer { b in
                    c.withUnsafeMutableBufferPointer { c in
                        Kernels.gemm(transA: false, transB: false, m: m, n: n, k: k, alpha: 1, a: a.baseAddress!, lda: k,
                                     b: b.baseAddress!, ldb: n, beta: 0, c: c.baseAddress!, ldc: n)
                    }
                }
            }
            return c
        }
        let alone = product()
        let same = Workers.serially { product() } == alone
        #expect(same, "\(m)x\(n)x\(k), BLAS threads \(BLAS.threadCount)")
    }
}
