/* Content hashes of (large) library files: a parallel driver that hashes a
 * list of files in a few threads (gv_sha256_file_hex, src/base/sha256.h), and
 * a persistent digest cache. */
#ifndef GV_ENV_FILEHASH_H
#define GV_ENV_FILEHASH_H

#include <stddef.h>

#include "base/err.h"

struct gv_hash_job {
    const char *root; /* the inspected root (NULL: path is a host path) */
    const char *path; /* path inside root (gv_root_open), owned by the caller */
    long long size;   /* for ordering, set by the caller */
    char hex[65];     /* the digest when rc == 0 */
    int rc;
    char err[256];    /* message when rc != 0 */
};

/* Hash every job, using up to nthreads threads (jobs are taken largest first
 * when the caller sorts them so). Each thread holds one 1 MiB read buffer. */
void gv_filehash_run(struct gv_hash_job *jobs, size_t n, int nthreads);
/* Threads for gv_filehash_run: one per physical core (hyperthreads share the
 * SHA unit), else the online CPUs; at most GV_FILEHASH_MAX_THREADS
 * ($GPUVET_HASH_THREADS overrides, for measurements). */
#define GV_FILEHASH_MAX_THREADS 32
int gv_filehash_threads(void);

/* A persistent cache of digests of big files, so that the next snapshot of
 * an unchanged stack does not read gigabytes again. Concurrent gpuvet
 * processes merge their entries into it under a lock (see store()). An entry is used only
 * when device, inode, size, mtime and ctime (which no user tool can set back)
 * all match. Stored in the user's cache directory (gpuvet/sha256-cache.json,
 * mode 0600); GPUVET_HASH_CACHE=0 turns it off. Failures to read or write it
 * are silent: it only ever saves time. */
struct gv_hash_cache;
struct gv_hash_cache *gv_hash_cache_open(void);
/* 1 and out filled on a hit. path is inside root (NULL: a host path); the
 * entry is keyed by the host path it resolves to inside root. */
int gv_hash_cache_get(struct gv_hash_cache *c, const char *root, const char *path, char out[65]);
void gv_hash_cache_put(struct gv_hash_cache *c, const char *root, const char *path,
                       const char hex[65]);
/* Writes the cache back when it changed, and frees it. */
void gv_hash_cache_close(struct gv_hash_cache *c);
#define GV_HASH_CACHE_MIN_SIZE (1 << 20)

#endif
