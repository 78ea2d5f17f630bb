#ifndef SAM_JEMALLOC_OPTIONS_H
#define SAM_JEMALLOC_OPTIONS_H

/// The options jemalloc reads at start-up in a program that links this target (on Linux): see
/// jemalloc_options.c. MALLOC_CONF in the environment overrides them one by one.
extern const char *malloc_conf;

#endif
