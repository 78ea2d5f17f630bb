#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Every entry into libhdf5, one thread at a time. Debian's and Homebrew's libhdf5 are built without
/// `--enable-threadsafe`: two threads inside it at once (two conversions in one app, parallel tests)
/// corrupt its global state. The lock is recursive, so a reader may call back into itself.
/// Entering also opens a fault-containment scope naming the file (`FaultContainment`).
public enum HDF5Library {
    nonisolated(unsafe) private static let mutex: UnsafeMutablePointer<pthread_mutex_t> = {
        let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
        var attributes = pthread_mutexattr_t()
        pthread_mutexattr_init(&attributes)
        pthread_mutexattr_settype(&attributes, Int32(PTHREAD_MUTEX_RECURSIVE))
        pthread_mutex_init(mutex, &attributes)
        pthread_mutexattr_destroy(&attributes)
        return mutex
    }()

    /// Runs `body` holding the library (for code that calls libhdf5 itself, such as test writers).
    public static func serialized<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body()
    }

    /// Holds the library until the matching `release()` on the same thread (a writer that keeps a
    /// file open across calls).
    public static func hold() { pthread_mutex_lock(mutex) }
    public static func release() { pthread_mutex_unlock(mutex) }

    /// Until the matching `leave()`: the library is held and its faults are blamed on `file`.
    static func enter(reading file: String) {
        pthread_mutex_lock(mutex)
        FaultContainment.enterHDF5Scope(file)
    }

    static func leave() {
        FaultContainment.leaveScope()
        pthread_mutex_unlock(mutex)
    }
}
