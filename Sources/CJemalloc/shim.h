#ifndef PUSHLINE_CJEMALLOC_SHIM_H
#define PUSHLINE_CJEMALLOC_SHIM_H
// Linked into the pushline executable only: Debian's jemalloc exports malloc and free unprefixed,
// so linking it replaces glibc's allocator for the whole process.
#include <jemalloc/jemalloc.h>
#endif
