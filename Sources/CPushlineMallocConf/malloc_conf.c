#include "pushline_malloc_conf.h"

// jemalloc reads this symbol once, at its first allocation; MALLOC_CONF in the environment is
// applied after it and overrides any option it names (docs/operations.md, "Memory allocator").
//
// - narenas:2. jemalloc's default is four arenas per core, and each keeps the pages it freed
//   for a while: on the bench (2 cores, 8 arenas) peak RSS was 30-60 MB above what was
//   allocated. Two arenas behind per-thread caches cost no CPU there.
// - dirty_decay_ms:1000, muzzy_decay_ms:0: freed pages go back to the kernel after a second
//   instead of ten, and at once when they are only "muzzy" (already advised), so a burst of
//   single-token jobs does not leave its peak behind.
// - background_thread:true. jemalloc's own thread returns those pages, on the decay's schedule,
//   instead of whichever worker thread happened to free or allocate when the decay was due.
//   Measured with `scripts/sitting --together` at one token per job: about 2% less worker CPU
//   per notification (its own thread's CPU included), peak RSS unchanged.
const char *malloc_conf = "narenas:2,dirty_decay_ms:1000,muzzy_decay_ms:0,background_thread:true";

const char *pushline_malloc_conf(void) { return malloc_conf; }
