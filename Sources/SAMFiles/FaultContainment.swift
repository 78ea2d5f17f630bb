import CFaultContainment

/// Faults raised inside libhdf5 while it parses a user's file, turned into an error that names the
/// file (Sources/CFaultContainment). libhdf5 does not check every structure it reads: a corrupt link
/// message can make it dereference NULL. The readers open a scope around each libhdf5 call path; a
/// program decides what a fault inside one does (nothing is installed by the library itself).
/// Likewise for a mapped file truncated under a reader (`MappedFile`), and for SIGINT and SIGTERM
/// arriving while outputs are written.
public enum FaultContainment {
    /// For command-line tools: a contained fault prints `<tool>: <file>: libhdf5 crashed while reading
    /// this file ...`, a SIGBUS on a `MappedFile` whose file was truncated prints `<tool>: <file>: the
    /// file was truncated or changed while it was mapped ...`; both remove the outputs' temporaries and
    /// exit with `exitStatus`.
    public static func install(exitStatus: Int32 = 2) {
        sam_fault_containment_install(exitStatus)
    }

    /// For command-line tools: SIGINT and SIGTERM remove the outputs' temporaries (and staging folders)
    /// before they end the process, which then dies of that signal as it would have.
    public static func removeTemporariesOnInterrupt() {
        sam_interrupt_cleanup_install()
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
    package static func enterHDF5Scope(_ file: String) { sam_fault_scope_enter("libhdf5", file) }
    package static func leaveScope() { sam_fault_scope_leave() }

    /// An output temporary that a contained fault or an interrupt removes before the process ends.
    static func registerTemporary(_ path: String) { _ = sam_fault_register_temporary(path) }
    /// A staging folder: its regular files are removed, then the folder.
    static func registerTemporaryFolder(_ path: String) { _ = sam_fault_register_temporary_folder(path) }
    static func unregisterTemporary(_ path: String) { sam_fault_unregister_temporary(path) }

    /// `body` with SIGINT and SIGTERM held back: one arriving meanwhile takes effect when it returns,
    /// so what it does (creating and registering a temporary, publishing a folder) is done whole.
    static func deferringInterrupts<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        sam_interrupts_defer()
        defer { sam_interrupts_resume() }
        return try body()
    }

    /// A mapping a SIGBUS is blamed on, named as error messages name files.
    static func registerMapping(_ start: UnsafeRawPointer, count: Int, file: String) {
        _ = sam_mapping_register(start, count, TerminalText.escaped(file))
    }
    static func unregisterMapping(_ start: UnsafeRawPointer) { sam_mapping_unregister(start) }
}
