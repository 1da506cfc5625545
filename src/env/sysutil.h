/* Small helpers shared by the system probes (host, gpus, drivers, packages,
 * loader, environment, permissions, process): rooted reads, key/value files,
 * JSON strings that are always valid UTF-8. Internal to the env room. */
#ifndef GV_ENV_SYSUTIL_H
#define GV_ENV_SYSUTIL_H

#include <dirent.h>
#include <jansson.h>
#include <stddef.h>

#include "base/err.h"
#include "env/probe.h"

/* Host path of a path inside the inspected root, for messages only: never
 * open it (a link in the root would be followed on the host). 0, or
 * GV_E_USAGE if too long. Files in the root are read through the helpers
 * below, which resolve inside the root (gv_root_open, src/base/fs.h). */
int gv_sys_path(const struct gv_probe_ctx *ctx, const char *path, char *out, size_t outsz);
/* Read a file inside the root, at most max bytes (see gv_read_file). */
int gv_sys_read(const struct gv_probe_ctx *ctx, const char *path, size_t max, char **data,
                size_t *len, struct gv_err *err);
/* First line of a small file inside the root, trailing blanks removed. */
int gv_sys_line(const struct gv_probe_ctx *ctx, const char *path, char *out, size_t outsz);
/* Whether a path inside the root is a directory / exists (lstat). */
int gv_sys_is_dir(const struct gv_probe_ctx *ctx, const char *path);
int gv_sys_exists(const struct gv_probe_ctx *ctx, const char *path);
/* Symlink target of a path inside the root (not resolved further). */
int gv_sys_readlink(const struct gv_probe_ctx *ctx, const char *path, char *out, size_t outsz);
/* scandir(3) of a directory inside the root. */
int gv_sys_scandir(const struct gv_probe_ctx *ctx, const char *dir, struct dirent ***names,
                   int (*filter)(const struct dirent *),
                   int (*compar)(const struct dirent **, const struct dirent **));

/* Whether the kernel's /proc (or /sys) may be read: live, or --root DIR that
 * has DIR/proc/<probe> (resp. DIR/sys/<probe>). When not, *reason explains. */
int gv_sys_have(const struct gv_probe_ctx *ctx, const char *dir, const char **reason);

/* A JSON string from arbitrary bytes: invalid UTF-8 and control bytes other
 * than tab become '?', so a hostile file can never break the document. */
json_t *gv_json_str_bytes(const char *s, size_t n);
json_t *gv_json_str(const char *s);
/* obj[key] = gv_json_str(val); skipped when val is NULL. Keys are ours. */
void gv_json_put_str(json_t *obj, const char *key, const char *val);

/* Trim leading and trailing blanks in place; returns the start. */
char *gv_sys_trim(char *s);

/* Split data into lines in place: calls fn for each line (NUL-terminated,
 * without the newline) until fn returns non-zero. */
typedef int (*gv_line_fn)(char *line, void *arg);
void gv_sys_each_line(char *data, gv_line_fn fn, void *arg);

/* Shell-style value: strips one level of "..." or '...' quoting and
 * backslash escapes in double quotes. Writes at most outsz-1 bytes. */
void gv_sys_unquote(const char *in, char *out, size_t outsz);

/* Basename of a path (pointer into it). */
const char *gv_sys_base(const char *path);

/* Sorted-array helpers for string lists (qsort comparator). */
int gv_sys_strcmp_p(const void *a, const void *b);

#endif
