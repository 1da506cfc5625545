/* File access used by every probe. Paths given to these helpers are host
 * paths; probes build them with gv_root_join so that --root DIR works. */
#ifndef GV_BASE_FS_H
#define GV_BASE_FS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/err.h"

#define GV_PATH_MAX 4096

/* out = root + "/" + path (root "" or "/" means the live system).
 * Returns 0, or GV_E_USAGE if the result would not fit. */
int gv_root_join(char *out, size_t outsz, const char *root, const char *path);

/* Reads a whole regular file, at most max bytes (more gives GV_E_FORMAT,
 * "file too large"). *data is NUL-terminated and must be freed.
 * Refuses FIFOs, devices and directories (never blocks). */
int gv_read_file(const char *path, size_t max, char **data, size_t *len, struct gv_err *err);

/* First line of a small file, trailing whitespace removed. */
int gv_read_line(const char *path, char *out, size_t outsz, struct gv_err *err);

/* Symlink target (not resolved further). */
int gv_readlink(const char *path, char *out, size_t outsz);

/* Resolve a path inside root the way the kernel would inside a chroot:
 * symlinks are followed with absolute targets taken relative to root, at
 * most 40 links (loops give GV_E_FORMAT). out is the root-relative path
 * (starting with '/'). The final component need not exist if allow_missing. */
int gv_root_realpath(const char *root, const char *path, char *out, size_t outsz,
                     struct gv_err *err);

int gv_is_dir(const char *path);
int gv_is_file(const char *path);   /* regular file, following links */
int gv_exists(const char *path);    /* lstat succeeds */

/* Write data to path atomically: temp file in the same directory, fsync,
 * rename, fsync of the directory. A crash leaves the old file or the new one,
 * never a truncated one. mode is applied to the new file. */
int gv_write_atomic(const char *path, const void *data, size_t len, mode_t mode,
                    struct gv_err *err);

/* Tests only: gv_write_atomic stops its own process (SIGSTOP) on reaching
 * stage, for files whose path contains file (NULL: any), so that a test can
 * kill -9 it at exactly that point. Stages, in order: atomic-start,
 * atomic-created (empty temp file), atomic-half (half the bytes written),
 * atomic-written, atomic-synced (fsync'ed and closed), atomic-renamed (in
 * place, directory not yet synced). NULL stage: none (the default). */
void gv_test_stop_points(const char *stage, const char *file);
/* The check behind them, for other rooms' stop points (e.g. hashcache-store,
 * before the digest cache is merged into its file). */
void gv_test_stop_point(const char *stage, const char *path);

/* "~/.cache/gpuvet" or $XDG_CACHE_HOME/gpuvet, created if needed. */
int gv_cache_dir(char *out, size_t outsz, const char *sub, struct gv_err *err);

/* mkdir -p */
int gv_mkdirs(const char *path, mode_t mode);

#endif
