/* Helpers shared by the stacks, libraries and python probes (internal to the
 * env room): dpkg file ownership, package versions, version strings in file
 * names, directory listings under the root, and the Python environments. */
#ifndef GV_ENV_STACKSCAN_H
#define GV_ENV_STACKSCAN_H

#include <jansson.h>
#include <stddef.h>

#include "env/probe.h"

/* Which package owns a file, from /var/lib/dpkg/info/NAME.list. Only GPU library
 * files (gv_libname_for_file) are kept. /lib, /bin and /sbin paths are folded
 * onto /usr (merged /usr: the same file under two names). */
struct gv_owner_map;
/* NULL when the root has no dpkg database (then nothing is "unowned"). */
struct gv_owner_map *gv_owner_map_load(const char *root);
const char *gv_owner_map_owner(const struct gv_owner_map *m, const char *path);
/* 1 when some package owns a GPU library file directly in dir. */
int gv_owner_map_manages_dir(const struct gv_owner_map *m, const char *dir);
size_t gv_owner_map_size(const struct gv_owner_map *m);
void gv_owner_map_free(struct gv_owner_map *m);

/* name -> version of installed packages: from the packages section when it was
 * collected, else read from the root's /var/lib/dpkg/status. NULL when neither
 * is available. *source says which. */
json_t *gv_pkg_versions(const json_t *packages, const char *root, const char **source);

/* The version a shared-library file name carries after ".so."
 * ("libamdhip64.so.6.0.32830" -> "6.0.32830"). Returns the number of
 * dot-separated numeric parts (0 when there is no all-numeric suffix). */
int gv_version_from_filename(const char *file, char *out, size_t outsz);

/* Sorted names in root+dir that start with prefix (NULL: all but . and ..).
 * Always returns an array (empty when dir cannot be read). */
json_t *gv_list_dir(const char *root, const char *dir, const char *prefix);

/* Python environments found without running Python: an array of objects
 * {prefix, kind, interpreter?, python_version?, site_packages}, one per
 * site-packages directory, deduplicated by resolved path. *interpreters gets
 * the python executables found on PATH (may be NULL). */
json_t *gv_python_find_envs(const struct gv_probe_ctx *ctx, json_t **interpreters);

/* The multiarch library directories looked at (NULL-terminated). */
extern const char *const gv_multiarch_dirs[];

/* Value of NAME in the recorded environment (envp), or NULL. */
const char *gv_ctx_getenv(const struct gv_probe_ctx *ctx, const char *name);

/* Parsers of dpkg and other text, exposed for the fuzz targets. They modify data. */
/* An empty map, and one /var/lib/dpkg/info/PKG.list file's lines added to it. */
struct gv_owner_map *gv_owner_map_new(void);
void gv_owner_map_add_list(struct gv_owner_map *m, const char *pkg, char *data);
/* Home directories (/home/..., /root) of /etc/passwd lines, added as keys of homes. */
void gv_parse_passwd_homes(char *data, json_t *homes);
/* A wheel's RECORD: GPU library basenames -> {version, wheel}, added to map. */
void gv_parse_record_libs(char *data, const char *version, const char *wheel, json_t *map);
/* /var/lib/dpkg/status: installed packages, name -> version. */
json_t *gv_dpkg_status_versions(char *data);
/* /var/lib/dpkg/alternatives/NAME: {mode, choices: [{path, priority}]}. */
json_t *gv_dpkg_alternatives_parse(char *data);

/* Parsers for Python package text, exposed for the fuzz target. */
/* Top-level `name = 'value'` / `name: T = "value"` / `name = None` lines of a
 * generated module such as torch/version.py: an object name -> string|null. */
json_t *gv_parse_py_assignments(const char *text, size_t len);
/* Name and Version from core metadata (METADATA / PKG-INFO headers, up to the
 * first blank line). Returns 0 when both were found. */
int gv_parse_pkg_metadata(const char *text, size_t len, char *name, size_t namesz, char *version,
                          size_t versionsz);

#endif
