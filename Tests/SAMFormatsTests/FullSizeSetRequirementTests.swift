import Testing
import SAMTestSupport

/// `make check-reference-set` sets SAM_REQUIRE_REFERENCE_SET=1: there, full-size set tests must not silently disable themselves.
@Suite("Full-size set: requirement")
struct FullSizeSetRequirement {
    @Test("The full-size reference set is present when the run requires it")
    func presentWhenRequired() {
        if TestPaths.fullSizeSetIsRequired {
            #expect(TestPaths.fullSizeSetIsPresent, "SAM_REQUIRE_REFERENCE_SET=1 but no fullSet at \(TestPaths.fullSizeSet)")
        }
    }
}
