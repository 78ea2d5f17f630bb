#ifndef SAM_FAULT_CONTAINMENT_H
#define SAM_FAULT_CONTAINMENT_H

// Turns a fault raised inside a foreign parser (libhdf5) while it reads a user's file into a clear
// error naming the file, instead of a crash. libhdf5 does not validate every structure of a file it
// parses (a fuzzed link message dereferences NULL inside H5G_link_to_info), and it cannot be asked to.
//
// Only a fault whose instruction lies in the named library, on a thread inside a scope opened for a
// file, is contained: any other fault reaches the handler that was installed before (ASan's, or the
// default crash), unchanged. Nothing is installed unless a program asks: the library never changes
// a process's signal handling by itself.

#ifdef __cplusplus
extern "C" {
#endif

/// Installs the SIGSEGV, SIGBUS, SIGFPE and SIGILL handlers (once; later calls do nothing). A
/// contained fault then writes "<program>: <file>: <library> crashed while reading this file ..." to
/// stderr, removes the registered temporaries and ends the process with exit status `exit_status`.
void sam_fault_containment_install(int exit_status);

/// Opens a scope on the calling thread: faults inside `library` (a fragment of its file name, such as
/// "libhdf5") are contained and blamed on `file`. Scopes nest (the most recently entered names the file).
/// A scope also holds the library lock below until it is left.
void sam_fault_scope_enter(const char *library, const char *file);
void sam_fault_scope_leave(void);

/// One recursive lock for the libraries that scopes name (a libhdf5 built without thread safety must
/// not be entered from two threads at once), for callers that use one outside a scope (a test writer).
void sam_library_lock(void);
void sam_library_unlock(void);

/// Temporaries to remove when a contained fault ends the process (an output not yet renamed into place).
/// At most 16 at once; returns 0 when registered, -1 when full or the path is too long.
int sam_fault_register_temporary(const char *path);
void sam_fault_unregister_temporary(const char *path);

/// Runs `body(context)` so that a contained fault returns here instead of ending the process: the
/// result is the signal number, or 0 when `body` returned. The scopes the fault skipped are left (their
/// locks released). For single-threaded fuzzing harnesses only: the frames the fault skips never
/// finish (their memory leaks, the library's state for that file is abandoned, and a thread-safe
/// libhdf5 keeps its own API lock held by the faulting thread).
int sam_fault_recovering_call(void (*body)(void *), void *context);

#ifdef __cplusplus
}
#endif

#endif
