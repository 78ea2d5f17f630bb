// See include/fault_containment.h. Everything the handler touches is fixed-size static or
// thread-local storage, and it calls only write, unlink, sigaction, raise, siglongjmp and _exit.
#define _GNU_SOURCE
#include "fault_containment.h"

#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <ucontext.h>
#include <unistd.h>

enum { signal_count = 4, range_limit = 16, temporary_limit = 16, path_limit = 4096, library_limit = 64 };

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

static char temporaries[temporary_limit][path_limit];
static atomic_int temporary_state[temporary_limit];  // 0 free, 1 being written, 2 registered

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

static void forward(int sig, siginfo_t *info, void *raw_context) {
    int index = signal_index(sig);
    struct sigaction *previous = &previous_actions[index];
    if ((previous->sa_flags & SA_SIGINFO) && previous->sa_sigaction) {
        previous->sa_sigaction(sig, info, raw_context);
        return;
    }
    if (!(previous->sa_flags & SA_SIGINFO) && previous->sa_handler != SIG_DFL && previous->sa_handler != SIG_IGN) {
        previous->sa_handler(sig);
        return;
    }
    // The default action: delivered when the handler returns (the signal is blocked until then).
    struct sigaction fallback;
    memset(&fallback, 0, sizeof fallback);
    fallback.sa_handler = SIG_DFL;
    sigaction(sig, &fallback, NULL);
    raise(sig);
}

static void handle(int sig, siginfo_t *info, void *raw_context) {
    if (scope_depth == 0 || !in_contained_library(faulting_instruction(raw_context))) {
        forward(sig, info, raw_context);
        return;
    }
    if (recovery) siglongjmp(*recovery, sig);
    put(program_invocation_short_name);
    put(": ");
    put(scope_file);
    put(": ");
    put(scope_library);
    put(" crashed while reading this file (");
    put(signal_name(sig));
    put("): it is corrupt in a way the library does not check; nothing was written [corrupt]\n");
    for (int i = 0; i < temporary_limit; i++) {
        if (atomic_load(&temporary_state[i]) == 2) unlink(temporaries[i]);
    }
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

int sam_fault_register_temporary(const char *path) {
    if (strlen(path) >= path_limit) return -1;
    for (int i = 0; i < temporary_limit; i++) {
        int expected = 0;
        if (!atomic_compare_exchange_strong(&temporary_state[i], &expected, 1)) continue;
        strcpy(temporaries[i], path);
        atomic_store(&temporary_state[i], 2);
        return 0;
    }
    return -1;
}

void sam_fault_unregister_temporary(const char *path) {
    for (int i = 0; i < temporary_limit; i++) {
        int expected = 2;
        if (strcmp(temporaries[i], path) != 0) continue;
        if (atomic_compare_exchange_strong(&temporary_state[i], &expected, 1)) {
            temporaries[i][0] = 0;
            atomic_store(&temporary_state[i], 0);
            return;
        }
    }
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
