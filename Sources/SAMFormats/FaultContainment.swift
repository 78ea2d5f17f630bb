import CFaultContainment

/// Faults raised inside libhdf5 while it parses a user's file, turned into an error that names the
/// file (Sources/CFaultContainment). libhdf5 does not check every structure it reads: a corrupt link
/// message can make it dereference NULL. The readers open a scope around each libhdf5 call path; a
/// program decides what a fault inside one does (nothing is installed by the library itself).
public enum FaultContainment {
    /// For command-line tools: a contained fault prints `<tool>: <file>: libhdf5 crashed while reading
    /// this file ...`, removes the outputs' temporaries and exits with `exitStatus`.
    public static func install(exitStatus: Int32 = 2) {
        sam_fault_containment_install(exitStatus)
    }

    /// For single-threaded fuzzing harnesses: runs `body`; a contained fault returns here with its
    /// signal number (0 when `body` returned). The scopes it skipped are left, but the frames never
    /// finish: their memory leaks, and a thread-safe libhdf5 keeps its own API lock held by this
    /// thread, so afterwards only this thread may use libhdf5.
    public static func recovering(_ body: @escaping () -> Void) -> Int32 {
        // Escaping and boxed: a fault skips the frames that would release what the call retained.
        let box = Unmanaged.passRetained(Work(body))
        defer { box.release() }
        return sam_fault_recovering_call({ context in
            Unmanaged<Work>.fromOpaque(context!).takeUnretainedValue().body()
        }, box.toOpaque())
    }

    private final class Work {
        let body: () -> Void
        init(_ body: @escaping () -> Void) { self.body = body }
    }

    /// Until the matching `leaveScope()`, this thread holds the libhdf5 lock (`HDF5Library`) and
    /// faults inside libhdf5 on it are blamed on `file`.
    static func enterHDF5Scope(_ file: String) { sam_fault_scope_enter("libhdf5", file) }
    static func leaveScope() { sam_fault_scope_leave() }

    /// An output temporary that a contained fault removes before the process ends.
    static func registerTemporary(_ path: String) { _ = sam_fault_register_temporary(path) }
    static func unregisterTemporary(_ path: String) { sam_fault_unregister_temporary(path) }
}
