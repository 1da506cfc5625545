/* Package databases read without the package manager: the dpkg status file
 * parsed directly, rpm through `rpm --root` (the one external command), and
 * the table of GPU-stack package names. */
#ifndef GV_ENV_PKGDB_H
#define GV_ENV_PKGDB_H

#include <stddef.h>

#include "base/err.h"

/* Longest value kept for the fields we read; a longer one makes the stanza
 * "skipped" (counted), so a hostile file cannot make us allocate much. */
#define GV_DPKG_FIELD_MAX 1024

struct gv_pkg {
    char *name, *version, *arch, *source; /* source NULL when absent */
    char *want, *state;                   /* from Status: want flag state */
    int hold;                             /* want == "hold" */
};

struct gv_pkg_list {
    struct gv_pkg *items;
    size_t n, cap;
    size_t skipped;      /* stanzas without Package, with oversized fields, ... */
    char first_skip[256]; /* why the first skipped stanza was skipped */
};

/* Parse the text of /var/lib/dpkg/status (len bytes; need not be
 * NUL-terminated). Stanzas are separated by blank lines, continuation lines
 * start with a blank and are ignored. Packages whose state is "not-installed"
 * are left out (as dpkg-query -W does). Linear in len. */
int gv_dpkg_parse(const char *data, size_t len, struct gv_pkg_list *out, struct gv_err *err);

/* Run `rpm --root ROOT --dbpath DBPATH -qa` with a timeout (seconds) and
 * parse its output. DBPATH is inside the root ("/var/lib/rpm"); it is always
 * given because the host's rpm may default elsewhere (Debian: ~/.rpmdb). */
int gv_rpm_query(const char *root, const char *dbpath, const char *rpm_bin, int timeout_s,
                 struct gv_pkg_list *out, struct gv_err *err);
/* Parse the output of the query format used by gv_rpm_query (tab separated
 * NAME, [EPOCH:]VERSION-RELEASE, ARCH, SOURCERPM). */
int gv_rpm_parse(const char *data, size_t len, struct gv_pkg_list *out, struct gv_err *err);

void gv_pkg_list_free(struct gv_pkg_list *l);

/* Whether a package belongs to the GPU stack (ROCm, CUDA, NVIDIA driver,
 * amdgpu, Debian's ROCm library packages). */
int gv_pkg_is_gpu(const char *name);

#endif
