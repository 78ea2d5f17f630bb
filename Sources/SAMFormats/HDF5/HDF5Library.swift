import CFaultContainment
import SAMFiles

/// Every entry into libhdf5, one thread at a time. A libhdf5 built without `--enable-threadsafe` must
/// never be entered by two threads at once (two conversions in one app, parallel tests); Debian's is
/// built with it and serialises its API itself, so there the lock costs nothing more. The lock is
/// recursive, so a reader may call back into itself. It lives
/// with the fault containment (Sources/CFaultContainment): entering also opens a scope that blames a
/// fault inside libhdf5 on the file, and a recovered fault releases what its scopes held.
public enum HDF5Library {
    /// Runs `body` holding the library (for code that calls libhdf5 itself, such as test writers).
    public static func serialized<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        sam_library_lock()
        defer { sam_library_unlock() }
        return try body()
    }

    /// Holds the library until the matching `release()` on the same thread (a writer that keeps a
    /// file open across calls).
    public static func hold() { sam_library_lock() }
    public static func release() { sam_library_unlock() }

    /// Until the matching `leave()`: the library is held and its faults are blamed on `file`.
    static func enter(reading file: String) { FaultContainment.enterHDF5Scope(file) }
    static func leave() { FaultContainment.leaveScope() }
}
