#ifndef SAM_FAULT_CONTAINMENT_H
#define SAM_FAULT_CONTAINMENT_H

// Turns a fault raised inside a foreign parser (libhdf5) while it reads a user's file into a clear
// error naming the file, instead of a crash. libhdf5 does not validate every structure of a file it
// parses (a fuzzed link message dereferences NULL inside H5G_link_to_info), and it cannot be asked to.
//
// Only a fault whose instruction lies in the named library, on a thread inside a scope opened for a
// file, is contained: any other fault reaches the handler that was installed before (ASan's, or the
// default crash), unchanged. A SIGBUS on a registered mapping (a file truncated under it) is also
// turned into a message naming the file. SIGINT and SIGTERM can be set to remove the registered
// temporaries before they end the process. Nothing is installed unless a program asks: the library
// never changes a process's signal handling by itself.

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Installs the SIGSEGV, SIGBUS, SIGFPE and SIGILL handlers (once; later calls do nothing). A
/// contained fault then writes "<program>: <file>: <library> crashed while reading this file ..." to
/// stderr, removes the registered temporaries and ends the process with exit status `exit_status`.
/// A SIGBUS at an address inside a registered mapping (below) writes "<program>: <file>: the file was
/// truncated or changed while it was mapped ... [unreadable]" instead, removes the temporaries and
/// ends the process likewise; this is checked before the scopes.
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

/// Temporaries to remove when a contained fault or an interrupt (below) ends the process: an output
/// not yet renamed into place, or a folder of outputs not yet published. A folder is removed after the
/// files: the regular files and folders in it are removed (folders up to 4 levels down, emptied the
/// same way), then the folder itself (rmdir; a folder still holding anything else, a link say, stays).
/// At most 16 files and folders at once; returns 0 when registered, -1 when full or the path is too
/// long (the path is then not removed).
int sam_fault_register_temporary(const char *path);
int sam_fault_register_temporary_folder(const char *path);
/// Forgets a file or folder registered under `path` (nothing when none is).
void sam_fault_unregister_temporary(const char *path);
/// Removes `path` now as the handlers remove a temporary: a regular file is unlinked, a folder emptied
/// (as above) and removed; a link or anything else is left. Never follows links.
void sam_fault_remove_temporary(const char *path);

/// The mappings a SIGBUS is blamed on: `length` bytes at `start`, mapped from `file` (the name printed,
/// escaped by the caller). At most 256 at once; returns 0 when registered, -1 when full or the name is
/// too long (a fault there then ends the process as it would have without this).
int sam_mapping_register(const void *start, size_t length, const char *file);
/// Forgets the mapping registered at `start`; call it before unmapping.
void sam_mapping_unregister(const void *start);

/// Installs SIGINT and SIGTERM handlers (once; later calls do nothing) that remove the registered
/// temporaries, then end the process by the same signal with its default action, so the parent sees
/// death by that signal (a shell shows 130 or 143). A signal ignored when this is called stays ignored;
/// a handler installed before is called after the removal instead of the default action.
void sam_interrupt_cleanup_install(void);

/// Opens and closes a section in which SIGINT and SIGTERM are held back (sections nest and may be open
/// on several threads): one arriving meanwhile takes effect when the last open section closes, so a
/// step such as putting a folder's files in place is never left half done. Without
/// `sam_interrupt_cleanup_install` they do nothing but count.
void sam_interrupts_defer(void);
void sam_interrupts_resume(void);

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
