/* CPU backend extras beyond dev/backend.h: the list of emulated behaviours
 * (a TESTING AID, see cpu.c) for --help and documentation. */
#ifndef GV_DEV_CPU_H
#define GV_DEV_CPU_H

#include <stddef.h>

/* Fills names[i] ("tf32", ...) and whats[i] (one line each); returns the count. */
size_t gv_cpu_emulations(const char **names, const char **whats, size_t max);

/* The pass of the suite this process is in (1, 2, ...; default 1): with
 * GPUVET_TEST_FLIP=CASE_GLOB (a TESTING AID, see cpu.c) the matching cases'
 * outputs get one bit flipped on even passes. fleet run sets it per repeat. */
void gv_cpu_test_pass(int pass);

#endif
