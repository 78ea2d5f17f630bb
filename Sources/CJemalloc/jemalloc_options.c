// jemalloc's options for a program that runs one kind of unit of work many times (samtrack's
// frames). jemalloc takes them from this global when the program defines it (its manual: "the string
// pointed to by the global variable malloc_conf").
//
// - dirty_decay_ms / muzzy_decay_ms -1: freed pages stay with the process for the next frame.
//   Returning them after a few seconds, jemalloc's default, made each frame fault its temporaries in
//   again (SAM 2.1 tiny, two objects, Zen 5: ~3.3 s per frame against ~2.6 s).
// - oversize_threshold 0: requests over 8 MiB come from the same arenas and size classes as the rest
//   instead of an arena of their own. With that arena (the default) the peak kept growing, 720 to
//   776 MiB over 10 frames, where without it 664 to 686.
// With both, the resident peak stops growing after the memory bank fills: 689 MiB after 10 frames
// and 692 after 60, where glibc's heap crept from 727–768 MiB after 10 frames to 861 after 40 as it
// fragmented (two objects, the SAM 2.1 tiny video set's frames ping-ponged, Zen 5).
#if defined(__linux__)
#include "jemalloc_options.h"

const char *malloc_conf = "dirty_decay_ms:-1,muzzy_decay_ms:-1,oversize_threshold:0";
#endif
