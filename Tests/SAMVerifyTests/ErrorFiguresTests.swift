import Testing
@testable import SAMVerify

@Suite("Verify: element rule and figures")
struct ErrorFiguresTests {
    @Test("an element fails only where it exceeds both atol and rtol * |ref|")
    func elementRule() {
        let tolerance = Tolerance(atol: 1e-3, rtol: 1e-2)
        // errors: 5e-4 (within atol), 5e-2 on ref 10 (within rtol: 0.1), 5e-2 on ref 1 (fails both)
        let figures = ErrorFigures(output: [1.0005, 10.05, 1.05], reference: [1, 10, 1], shape: [1, 3], tolerance: tolerance)
        #expect(figures.failing == 1)
        #expect(figures.firstFailingIndex == [0, 2])
        #expect(!figures.passes)
    }
}

@Suite("Verify: error figures")
struct ErrorFigureDetailTests {
    @Test("max, mean and median absolute and relative error; worst element as a multi-index")
    func statistics() {
        let reference: [Float] = [1, 2, 4, 8, -1, 0.5]
        let output: [Float] = [1, 2.5, 4, 7, -1.25, 0.5]
        let figures = ErrorFigures(output: output, reference: reference, shape: [1, 2, 3], tolerance: .defaults)
        #expect(figures.count == 6 && figures.failing == 3 && figures.nonFinite == 0)
        #expect(figures.maxAbs == 1)
        #expect(figures.worstIndex == [0, 1, 0])  // element 3: 7 vs 8
        #expect(figures.worstOutput == 7 && figures.worstReference == 8)
        #expect(abs(figures.meanAbs - 1.75 / 6) < 1e-12)
        #expect(figures.medianAbs == 0.125)  // sorted: 0 0 0 0.25 0.5 1
        #expect(figures.maxRel == 0.25)      // 0.5/2 and 0.25/1
        #expect(figures.medianRel == 0.0625) // sorted: 0 0 0 0.125 0.25 0.25
        #expect(figures.firstFailingIndex == [0, 0, 1])
    }

    @Test("the smallest passing atol and rtol are exact thresholds, each with the other at its setting")
    func minimumPassingTolerances() {
        let reference: [Float] = [10, 1, 100]
        let output: [Float] = [10.5, 1.01, 100]
        let tolerance = Tolerance(atol: 0.02, rtol: 0.001)
        let figures = ErrorFigures(output: output, reference: reference, shape: [3], tolerance: tolerance)
        // atol: element 0 (0.5 > 0.001 * 10) needs 0.5; element 1 (0.01 > 0.001) needs 0.01 -> 0.5.
        #expect(abs(figures.minPassingAtol - 0.5) < 1e-6)
        // rtol: only element 0 exceeds atol 0.02 -> 0.5 / 10.
        #expect(abs(figures.minPassingRtol - 0.05) < 1e-6)
        for (atol, rtol, passes) in [(figures.minPassingAtol, 0.001, true), (figures.minPassingAtol * 0.99, 0.001, false),
                                     (0.02, figures.minPassingRtol * 1.0001, true), (0.02, figures.minPassingRtol * 0.99, false)] {
            let again = ErrorFigures(output: output, reference: reference, shape: [3], tolerance: Tolerance(atol: atol, rtol: rtol))
            #expect(again.passes == passes, "atol \(atol) rtol \(rtol)")
        }
    }

    @Test("a zero reference leaves rtol no way to pass an error above atol")
    func zeroReference() {
        let figures = ErrorFigures(output: [0.5, 0], reference: [0, 0], shape: [2], tolerance: Tolerance(atol: 0.1, rtol: 10))
        #expect(figures.minPassingRtol == .infinity && figures.maxRel == .infinity)
        #expect(figures.minPassingAtol == 0.5)
        #expect(!figures.passes)
    }

    @Test("NaN or infinity on either side never passes, whatever the tolerance")
    func nonFiniteNeverPasses() {
        let huge = Tolerance(atol: 1e30, rtol: 1e30)
        let pairs: [([Float], [Float])] = [([.nan, 1], [0, 1]), ([0, 1], [.infinity, 1]), ([-.infinity, 1], [-.infinity, 1])]
        for (output, reference) in pairs {
            let figures = ErrorFigures(output: output, reference: reference, shape: [2], tolerance: huge)
            #expect(!figures.passes && figures.nonFinite == 1 && figures.firstNonFiniteIndex == [0])
            #expect(figures.maxAbs == 0 && figures.count == 2)  // statistics over the finite elements only
        }
        #expect(NonFiniteSummary([1, .nan, .infinity, .nan], shape: [2, 2])?.description
                == "2 NaN and 1 infinite values, the first at [0,1]")
        #expect(NonFiniteSummary([1, 2], shape: [2]) == nil)
    }

    @Test("multi-indices are C order")
    func multiIndex() {
        #expect(ErrorFigures.multiIndex(0, shape: [1, 4, 32, 32]) == [0, 0, 0, 0])
        #expect(ErrorFigures.multiIndex(2 * 1024 + 17 * 32 + 5, shape: [1, 4, 32, 32]) == [0, 2, 17, 5])
        #expect(ErrorFigures.multiIndex(3, shape: [1, 4]) == [0, 3])
    }
}
