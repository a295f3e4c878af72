#ifndef PUSHLINE_MALLOC_CONF_H
#define PUSHLINE_MALLOC_CONF_H

/// The jemalloc options compiled into the `pushline` executable (see malloc_conf.c).
const char *pushline_malloc_conf(void);

#endif
