import Testing
import SAMTestSupport

/// `make check-drops` sets SAM_REQUIRE_DROP=1: there, drop tests must not silently disable themselves.
@Suite("Drop requirement")
struct DropRequirement {
    @Test("The full-size reference set is present when the run requires it")
    func presentWhenRequired() {
        if TestPaths.dropIsRequired {
            #expect(TestPaths.dropIsPresent, "SAM_REQUIRE_DROP=1 but no drop at \(TestPaths.drop)")
        }
    }
}
