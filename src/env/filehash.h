/* Content hashes of (large) library files: SHA-256 streamed through a big
 * buffer, with the x86 SHA extensions when the CPU has them, and a parallel
 * driver that hashes a list of files in a few threads. */
#ifndef GV_ENV_FILEHASH_H
#define GV_ENV_FILEHASH_H

#include <stddef.h>

#include "base/err.h"

/* Hex SHA-256 of the file at path (a host path). Never blocks on FIFOs. */
int gv_filehash_sha256(const char *path, char out[65], struct gv_err *err);

struct gv_hash_job {
    const char *path; /* host path, owned by the caller */
    long long size;   /* for ordering, set by the caller */
    char hex[65];     /* the digest when rc == 0 */
    int rc;
    char err[256];    /* message when rc != 0 */
};

/* Hash every job, using up to nthreads threads (jobs are taken largest first
 * when the caller sorts them so). */
void gv_filehash_run(struct gv_hash_job *jobs, size_t n, int nthreads);

/* 1 when the SHA-NI code path is in use (for the benchmark report). */
int gv_filehash_accelerated(void);

#endif
