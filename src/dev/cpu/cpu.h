/* CPU backend extras beyond dev/backend.h: the list of emulated behaviours
 * (a TESTING AID, see cpu.c) for --help and documentation. */
#ifndef GV_DEV_CPU_H
#define GV_DEV_CPU_H

#include <stddef.h>

/* Fills names[i] ("tf32", ...) and whats[i] (one line each); returns the count. */
size_t gv_cpu_emulations(const char **names, const char **whats, size_t max);

#endif
