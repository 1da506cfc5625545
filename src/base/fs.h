/* File access used by every probe. Paths given to these helpers are host
 * paths; probes build them with gv_root_join so that --root DIR works. */
#ifndef GV_BASE_FS_H
#define GV_BASE_FS_H

#include <dirent.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
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

/* ---- Paths inside a root (issue 31): the one way to open them ----
 * A --root tree is a document: any symlink in it may point anywhere. Every
 * reader of the inspected machine (src/env) opens, stats, lists and
 * resolves through these, never through a joined host path. root NULL, ""
 * or "/" is the live machine: plain open/stat/readlink of path, as ever.
 * Otherwise path is resolved as a chroot into root would: absolute link
 * targets restart at root, ".." stops at root, at most 40 links (ELOOP),
 * procfs magic links (/proc/PID/fd/N, exe, cwd, root, ns) refused (ELOOP).
 * The kernel does it (openat2 with RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS);
 * where openat2 is missing or blocked (ENOSYS, EPERM) the same walk is done
 * by hand, one component at a time with O_PATH | O_NOFOLLOW, from the
 * directory already reached. Both give the same answers (tests/unit). */

/* An fd of path inside root opened with flags (O_CLOEXEC added), or -1 with
 * errno set (and err filled when not NULL). O_NOFOLLOW: the last component
 * is not followed (with O_PATH: an fd of the link itself). */
int gv_root_open(const char *root, const char *path, int flags, struct gv_err *err);
/* gv_read_file of path inside root, through gv_root_open. */
int gv_root_read_file(const char *root, const char *path, size_t max, char **data, size_t *len,
                      struct gv_err *err);
int gv_root_read_line(const char *root, const char *path, char *out, size_t outsz,
                      struct gv_err *err);
/* stat (nofollow: lstat) of path inside root: 0, or -1 with errno. */
int gv_root_stat(const char *root, const char *path, struct stat *st, int nofollow);
int gv_root_is_dir(const char *root, const char *path);  /* following links */
int gv_root_is_file(const char *root, const char *path); /* regular, following links */
int gv_root_exists(const char *root, const char *path);  /* lstat succeeds */
/* The target of the symlink path inside root (not resolved further). */
int gv_root_readlink(const char *root, const char *path, char *out, size_t outsz);
/* opendir / scandir(3) of a directory inside root. */
DIR *gv_root_opendir(const char *root, const char *path);
int gv_root_scandir(const char *root, const char *path, struct dirent ***names,
                    int (*filter)(const struct dirent *),
                    int (*compar)(const struct dirent **, const struct dirent **));
/* The path inside root that path resolves to, by the same walk. out is
 * root-relative (starting with '/'). Components from the first missing one
 * (or a non-directory) on are kept as written, ".." taken lexically. A loop
 * gives GV_E_FORMAT. */
int gv_root_realpath(const char *root, const char *path, char *out, size_t outsz,
                     struct gv_err *err);
/* Tests only (tests/unit/test_rootopen.c): on, gv_root_open never calls
 * openat2 and always walks by hand, so both ways can be compared. */
void gv_root_test_force_walk(int on);

/* Reads the regular file open as fd whole (see gv_read_file; name is for
 * messages). fd is not closed. */
int gv_read_fd(int fd, const char *name, size_t max, char **data, size_t *len,
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
