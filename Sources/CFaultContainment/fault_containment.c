// See include/fault_containment.h. Everything the handlers touch is fixed-size static or
// thread-local storage, and they call only write, open, openat, close, lseek, getdents64, fstatat,
// unlink, unlinkat, rmdir, kill, sigaction, raise, siglongjmp, pause and _exit (getdents64 is the one outside POSIX's
// async-signal-safe list: a bare system call, no lock, no allocation).
#define _GNU_SOURCE
#include "fault_containment.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <ucontext.h>
#include <unistd.h>

enum { signal_count = 4, range_limit = 16, temporary_limit = 16, mapping_limit = 256, path_limit = 4096, library_limit = 64 };

static const int contained_signals[signal_count] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL };
static struct sigaction previous_actions[signal_count];
static atomic_int installed;
static int contained_exit_status = 2;

// Executable segments of the libraries scopes have named, found when a scope first names them.
struct code_range { uintptr_t start, end; };
static struct code_range ranges[range_limit];
static atomic_int range_count;
static char ranged_libraries[4][library_limit];
static int ranged_library_count;
static atomic_flag ranges_lock = ATOMIC_FLAG_INIT;

// One recursive lock for the libraries scopes name: a libhdf5 built without thread safety must not
// be entered from two threads at once. A scope holds it, so a recovered fault can release it.
static pthread_mutex_t library_lock;
static pthread_once_t library_lock_once = PTHREAD_ONCE_INIT;

static void make_library_lock(void) {
    pthread_mutexattr_t attributes;
    pthread_mutexattr_init(&attributes);
    pthread_mutexattr_settype(&attributes, PTHREAD_MUTEX_RECURSIVE);
    pthread_mutex_init(&library_lock, &attributes);
    pthread_mutexattr_destroy(&attributes);
}

void sam_library_lock(void) {
    pthread_once(&library_lock_once, make_library_lock);
    pthread_mutex_lock(&library_lock);
}

void sam_library_unlock(void) {
    pthread_mutex_unlock(&library_lock);
}

static _Thread_local int scope_depth;
static _Thread_local char scope_file[path_limit];
static _Thread_local char scope_library[library_limit];
static _Thread_local sigjmp_buf *recovery;

enum { slot_free, slot_busy, slot_file, slot_folder };
static char temporaries[temporary_limit][path_limit];
static atomic_int temporary_state[temporary_limit];  // slot_free, slot_busy (being written), slot_file, slot_folder

struct mapping { uintptr_t start, end; char file[path_limit]; };
static struct mapping mappings[mapping_limit];
static atomic_int mapping_state[mapping_limit];  // slot_free, slot_busy, slot_file

static int signal_index(int sig) {
    for (int i = 0; i < signal_count; i++) if (contained_signals[i] == sig) return i;
    return -1;
}

static void put(const char *text) {
    size_t left = strlen(text);
    while (left > 0) {
        ssize_t n = write(STDERR_FILENO, text, left);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return;
        text += n;
        left -= (size_t)n;
    }
}

static const char *signal_name(int sig) {
    switch (sig) {
    case SIGSEGV: return "SIGSEGV";
    case SIGBUS: return "SIGBUS";
    case SIGFPE: return "SIGFPE";
    default: return "SIGILL";
    }
}

static uintptr_t faulting_instruction(void *raw_context) {
    const ucontext_t *context = raw_context;
#if defined(__x86_64__)
    return (uintptr_t)context->uc_mcontext.gregs[REG_RIP];
#elif defined(__aarch64__)
    return (uintptr_t)context->uc_mcontext.pc;
#else
    (void)context;
    return 0;
#endif
}

static int in_contained_library(uintptr_t pc) {
    int count = atomic_load(&range_count);
    for (int i = 0; i < count; i++) if (pc >= ranges[i].start && pc < ranges[i].end) return 1;
    return 0;
}

// Hands the signal to the handler installed before ours, or, when there was none, to the default
// action: delivered when the running handler returns (the signal is blocked until then).
static void chain(const struct sigaction *previous, int sig, siginfo_t *info, void *raw_context) {
    if ((previous->sa_flags & SA_SIGINFO) && previous->sa_sigaction) {
        previous->sa_sigaction(sig, info, raw_context);
        return;
    }
    if (!(previous->sa_flags & SA_SIGINFO) && previous->sa_handler != SIG_DFL && previous->sa_handler != SIG_IGN) {
        previous->sa_handler(sig);
        return;
    }
    struct sigaction fallback;
    memset(&fallback, 0, sizeof fallback);
    fallback.sa_handler = SIG_DFL;
    sigaction(sig, &fallback, NULL);
    raise(sig);
}

static void forward(int sig, siginfo_t *info, void *raw_context) {
    chain(&previous_actions[signal_index(sig)], sig, info, raw_context);
}

// Removes what the open folder holds: its regular files, and
// its folders, emptied the same way `depth` levels down, then removed; links and anything else stay.
// A staging folder holds the outputs already written, which no slot names (samtrack's in folders of
// their own: masks/<frame>/). Rescanned until a pass removes nothing, as unlinking while reading a
// directory may make the reading skip entries. Small buffers: each level is a frame on the signal stack.
static void empty_folder_at(int folder, int depth) {
    char buffer[512] __attribute__((aligned(8)));
    for (int pass = 0; pass < 8; pass++) {
        int removed = 0;
        if (lseek(folder, 0, SEEK_SET) != 0) break;
        ssize_t count;
        while ((count = getdents64(folder, buffer, sizeof buffer)) > 0) {
            for (ssize_t at = 0; at < count;) {
                const struct dirent64 *entry = (const struct dirent64 *)(buffer + at);
                at += entry->d_reclen;
                const char *name = entry->d_name;
                if (name[0] == '.' && (name[1] == 0 || (name[1] == '.' && name[2] == 0))) continue;
                int type = entry->d_type;
                if (type == DT_UNKNOWN) {
                    struct stat status;
                    if (fstatat(folder, name, &status, AT_SYMLINK_NOFOLLOW) != 0) continue;
                    type = S_ISREG(status.st_mode) ? DT_REG : S_ISDIR(status.st_mode) ? DT_DIR : DT_UNKNOWN;
                }
                if (type == DT_REG) {
                    if (unlinkat(folder, name, 0) == 0) removed++;
                } else if (type == DT_DIR && depth > 0) {
                    int child = openat(folder, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                    if (child < 0) continue;
                    empty_folder_at(child, depth - 1);
                    close(child);
                    if (unlinkat(folder, name, AT_REMOVEDIR) == 0) removed++;
                }
            }
        }
        if (removed == 0) break;
    }
}

// Folders inside a staging folder, at most (samtrack's masks/<frame>/ is two).
#define STAGING_DEPTH 4

// The folder at `path` emptied as above, then removed (it stays if anything is left in it).
static void remove_folder(const char *path) {
    int folder = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (folder >= 0) {
        empty_folder_at(folder, STAGING_DEPTH);
        close(folder);
    }
    rmdir(path);
}

void sam_fault_remove_temporary(const char *path) {
    struct stat status;
    if (lstat(path, &status) != 0) return;
    if (S_ISREG(status.st_mode)) {
        unlink(path);
    } else if (S_ISDIR(status.st_mode)) {
        remove_folder(path);
    }
}

// Files first, then folders: a folder is removed once its files have gone.
static void remove_temporaries(void) {
    for (int i = 0; i < temporary_limit; i++) {
        if (atomic_load(&temporary_state[i]) == slot_file) unlink(temporaries[i]);
    }
    for (int i = 0; i < temporary_limit; i++) {
        if (atomic_load(&temporary_state[i]) != slot_folder) continue;
        remove_folder(temporaries[i]);
    }
}

static const char *mapped_file_at(uintptr_t address) {
    for (int i = 0; i < mapping_limit; i++) {
        if (atomic_load(&mapping_state[i]) != slot_file) continue;
        if (address >= mappings[i].start && address < mappings[i].end) return mappings[i].file;
    }
    return NULL;
}

// Set by the first thread that ends the process from `handle`. Threads reading one mapped file
// together fault together when it is truncated: the others wait for the exit instead of writing
// their line into the first one's.
static atomic_int ending;

static void end_here_or_wait(void) {
    if (atomic_exchange(&ending, 1)) {
        for (;;) pause();
    }
}

static void handle(int sig, siginfo_t *info, void *raw_context) {
    // A page of a mapped file that is no longer there (the file was truncated under the mapping) is
    // the file's fault, not the program's. SIGSEGV is not taken here: inside a live read-only mapping
    // it means a write, a bug.
    const char *mapped = sig == SIGBUS && info ? mapped_file_at((uintptr_t)info->si_addr) : NULL;
    if (mapped) {
        end_here_or_wait();
        put(program_invocation_short_name);
        put(": ");
        put(mapped);
        put(": the file was truncated or changed while it was mapped (replace model files by rename, never in place) [unreadable]\n");
        remove_temporaries();
        _exit(contained_exit_status);
    }
    if (scope_depth == 0 || !in_contained_library(faulting_instruction(raw_context))) {
        forward(sig, info, raw_context);
        return;
    }
    if (recovery) siglongjmp(*recovery, sig);
    end_here_or_wait();
    put(program_invocation_short_name);
    put(": ");
    put(scope_file);
    put(": ");
    put(scope_library);
    put(" crashed while reading this file (");
    put(signal_name(sig));
    put("): it is corrupt in a way the library does not check; nothing was written [corrupt]\n");
    remove_temporaries();
    _exit(contained_exit_status);
}

void sam_fault_containment_install(int exit_status) {
    int expected = 0;
    if (!atomic_compare_exchange_strong(&installed, &expected, 1)) return;
    contained_exit_status = exit_status;
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_sigaction = handle;
    action.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&action.sa_mask);
    for (int i = 0; i < signal_count; i++) sigaction(contained_signals[i], &action, &previous_actions[i]);
}

struct range_search { const char *library; };

static int add_ranges(struct dl_phdr_info *object, size_t size, void *raw_search) {
    (void)size;
    const struct range_search *search = raw_search;
    if (!object->dlpi_name || !strstr(object->dlpi_name, search->library)) return 0;
    for (int i = 0; i < object->dlpi_phnum; i++) {
        const ElfW(Phdr) *segment = &object->dlpi_phdr[i];
        if (segment->p_type != PT_LOAD || !(segment->p_flags & PF_X)) continue;
        int count = atomic_load(&range_count);
        if (count == range_limit) return 1;
        ranges[count].start = object->dlpi_addr + segment->p_vaddr;
        ranges[count].end = ranges[count].start + segment->p_memsz;
        atomic_store(&range_count, count + 1);
    }
    return 0;
}

static void find_ranges(const char *library) {
    while (atomic_flag_test_and_set(&ranges_lock)) {}
    int known = 0;
    for (int i = 0; i < ranged_library_count; i++) known |= strcmp(ranged_libraries[i], library) == 0;
    if (!known && ranged_library_count < 4 && strlen(library) < library_limit) {
        strcpy(ranged_libraries[ranged_library_count++], library);
        struct range_search search = { library };
        dl_iterate_phdr(add_ranges, &search);
    }
    atomic_flag_clear(&ranges_lock);
}

static void copy_bounded(char *destination, const char *source, size_t capacity) {
    size_t length = strnlen(source, capacity - 1);
    memcpy(destination, source, length);
    destination[length] = 0;
}

void sam_fault_scope_enter(const char *library, const char *file) {
    sam_library_lock();
    find_ranges(library);
    copy_bounded(scope_library, library, library_limit);
    copy_bounded(scope_file, file, path_limit);
    scope_depth++;
}

void sam_fault_scope_leave(void) {
    if (scope_depth == 0) return;
    scope_depth--;
    sam_library_unlock();
}

static int register_temporary(const char *path, int kind) {
    if (strlen(path) >= path_limit) return -1;
    for (int i = 0; i < temporary_limit; i++) {
        int expected = slot_free;
        if (!atomic_compare_exchange_strong(&temporary_state[i], &expected, slot_busy)) continue;
        strcpy(temporaries[i], path);
        atomic_store(&temporary_state[i], kind);
        return 0;
    }
    return -1;
}

int sam_fault_register_temporary(const char *path) { return register_temporary(path, slot_file); }
int sam_fault_register_temporary_folder(const char *path) { return register_temporary(path, slot_folder); }

void sam_fault_unregister_temporary(const char *path) {
    for (int i = 0; i < temporary_limit; i++) {
        int state = atomic_load(&temporary_state[i]);
        if (state != slot_file && state != slot_folder) continue;
        if (strcmp(temporaries[i], path) != 0) continue;
        if (atomic_compare_exchange_strong(&temporary_state[i], &state, slot_busy)) {
            temporaries[i][0] = 0;
            atomic_store(&temporary_state[i], slot_free);
            return;
        }
    }
}

int sam_mapping_register(const void *start, size_t length, const char *file) {
    if (strlen(file) >= path_limit) return -1;
    for (int i = 0; i < mapping_limit; i++) {
        int expected = slot_free;
        if (!atomic_compare_exchange_strong(&mapping_state[i], &expected, slot_busy)) continue;
        mappings[i].start = (uintptr_t)start;
        mappings[i].end = (uintptr_t)start + length;
        strcpy(mappings[i].file, file);
        atomic_store(&mapping_state[i], slot_file);
        return 0;
    }
    return -1;
}

void sam_mapping_unregister(const void *start) {
    for (int i = 0; i < mapping_limit; i++) {
        int expected = slot_file;
        if (mappings[i].start != (uintptr_t)start) continue;
        if (atomic_compare_exchange_strong(&mapping_state[i], &expected, slot_busy)) {
            mappings[i].start = mappings[i].end = 0;
            atomic_store(&mapping_state[i], slot_free);
            return;
        }
    }
}

// SIGINT and SIGTERM. A signal arriving inside a deferring section (any thread) is recorded and sent
// again when the last section closes; both sides take it with an exchange, so exactly one acts on it.
static const int interrupt_signals[2] = { SIGINT, SIGTERM };
static struct sigaction previous_interrupt_actions[2];
static atomic_int interrupts_installed;
static atomic_int deferring_sections;
static atomic_int deferred_interrupt;

static void end_by_interrupt(int sig, siginfo_t *info, void *raw_context) {
    remove_temporaries();
    // Without an earlier handler, the default action: the parent sees death by this signal (a shell shows 130 or 143).
    chain(&previous_interrupt_actions[sig == SIGINT ? 0 : 1], sig, info, raw_context);
}

static void interrupt(int sig, siginfo_t *info, void *raw_context) {
    int saved_errno = errno;
    atomic_store(&deferred_interrupt, sig);
    // Inside a section, its end sends the signal again; if a section's end took it meanwhile, likewise.
    if (atomic_load(&deferring_sections) == 0 && atomic_exchange(&deferred_interrupt, 0) != 0) {
        end_by_interrupt(sig, info, raw_context);
    }
    errno = saved_errno;
}

void sam_interrupt_cleanup_install(void) {
    int expected = 0;
    if (!atomic_compare_exchange_strong(&interrupts_installed, &expected, 1)) return;
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_sigaction = interrupt;
    action.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&action.sa_mask);
    for (int i = 0; i < 2; i++) sigaddset(&action.sa_mask, interrupt_signals[i]);
    for (int i = 0; i < 2; i++) {
        struct sigaction current;
        if (sigaction(interrupt_signals[i], NULL, &current) != 0) continue;
        // An ignored signal stays ignored (nohup, a background job of a non-interactive shell).
        if (!(current.sa_flags & SA_SIGINFO) && current.sa_handler == SIG_IGN) continue;
        previous_interrupt_actions[i] = current;
        sigaction(interrupt_signals[i], &action, NULL);
    }
}

void sam_interrupts_defer(void) {
    atomic_fetch_add(&deferring_sections, 1);
}

void sam_interrupts_resume(void) {
    if (atomic_fetch_sub(&deferring_sections, 1) != 1) return;
    int sig = atomic_exchange(&deferred_interrupt, 0);
    if (sig != 0) kill(getpid(), sig);
}

int sam_fault_recovering_call(void (*body)(void *), void *context) {
    sam_fault_containment_install(2);
    sigjmp_buf buffer;
    sigjmp_buf *outer = recovery;
    int depth = scope_depth;
    int sig = sigsetjmp(buffer, 1);
    if (sig == 0) {
        recovery = &buffer;
        body(context);
        recovery = outer;
        return 0;
    }
    recovery = outer;
    // The scopes the fault skipped never left: release the lock once for each.
    while (scope_depth > depth) sam_fault_scope_leave();
    return sig;
}
