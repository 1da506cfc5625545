/* packages: the installed package list (dpkg status parsed directly, or rpm),
 * with hold flags, GPU-stack marks, and digests of the whole and GPU lists. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/fs.h"
#include "base/json.h"
#include "base/sha256.h"
#include "env/pkgdb.h"
#include "env/probe.h"
#include "env/sysutil.h"

#define DPKG_STATUS "/var/lib/dpkg/status"
#define DPKG_STATUS_MAX ((size_t)256 << 20)
#define RPM_TIMEOUT_S 60

static int pkg_cmp(const void *a, const void *b)
{
    const struct gv_pkg *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    if (c)
        return c;
    return strcmp(x->arch ? x->arch : "", y->arch ? y->arch : "");
}

/* sha256 over the byte-sorted "name=version:arch\n" lines of the installed
 * packages, all of them or only the GPU ones (`LC_ALL=C sort | sha256sum`). */
static void digest(const struct gv_pkg_list *l, int gpu_only, char hex[65], size_t *count)
{
    char **lines = calloc(l->n ? l->n : 1, sizeof *lines);
    size_t nl = 0;
    *count = 0;
    for (size_t i = 0; lines && i < l->n; i++) {
        const struct gv_pkg *p = &l->items[i];
        if (gpu_only && !gv_pkg_is_gpu(p->name))
            continue;
        (*count)++;
        if (strcmp(p->state, "installed") != 0)
            continue;
        if (asprintf(&lines[nl], "%s=%s:%s\n", p->name, p->version ? p->version : "",
                     p->arch ? p->arch : "") >= 0)
            nl++;
    }
    qsort(lines, nl, sizeof *lines, gv_sys_strcmp_p);
    struct gv_sha256 s;
    uint8_t d[32];
    gv_sha256_init(&s);
    for (size_t i = 0; i < nl; i++) {
        gv_sha256_update(&s, lines[i], strlen(lines[i]));
        free(lines[i]);
    }
    free(lines);
    gv_sha256_final(&s, d);
    gv_sha256_hex(d, hex);
}

static json_t *item_json(const struct gv_pkg *p)
{
    json_t *o = json_object();
    gv_json_put_str(o, "name", p->name);
    gv_json_put_str(o, "version", p->version);
    gv_json_put_str(o, "arch", p->arch);
    gv_json_put_str(o, "state", p->state);
    json_object_set_new(o, "hold", json_boolean(p->hold));
    json_object_set_new(o, "gpu", json_boolean(gv_pkg_is_gpu(p->name)));
    gv_json_put_str(o, "source_package", p->source);
    return o;
}

static json_t *list_json(struct gv_pkg_list *l, const char *source, const char *manager)
{
    if (l->n)
        qsort(l->items, l->n, sizeof *l->items, pkg_cmp);
    json_t *s = gv_section_new(source), *items = json_array();
    json_object_set_new(s, "manager", json_string(manager));
    char hex[65];
    size_t count, gpu_count;
    digest(l, 0, hex, &count);
    json_object_set_new(s, "count", json_integer((json_int_t)count));
    json_object_set_new(s, "digest", json_string(hex));
    digest(l, 1, hex, &gpu_count);
    json_object_set_new(s, "gpu_count", json_integer((json_int_t)gpu_count));
    json_object_set_new(s, "gpu_digest", json_string(hex));
    if (l->skipped) {
        json_object_set_new(s, "skipped", json_integer((json_int_t)l->skipped));
        json_object_set_new(s, "skipped_reason", json_string(l->first_skip));
    }
    for (size_t i = 0; i < l->n; i++)
        json_array_append_new(items, item_json(&l->items[i]));
    json_object_set_new(s, "items", items);
    return s;
}

static json_t *probe_dpkg(const struct gv_probe_ctx *ctx)
{
    char *data;
    size_t len;
    struct gv_err err = {0};
    if (gv_sys_read(ctx, DPKG_STATUS, DPKG_STATUS_MAX, &data, &len, &err))
        return gv_section_missing(DPKG_STATUS, err.msg);
    struct gv_pkg_list l;
    int rc = gv_dpkg_parse(data, len, &l, &err);
    free(data);
    if (rc)
        return gv_section_missing(DPKG_STATUS, err.msg);
    json_t *s = list_json(&l, DPKG_STATUS, "dpkg");
    gv_pkg_list_free(&l);
    return s;
}

static const char *find_rpm(void)
{
    static const char *const cands[] = {"/usr/bin/rpm", "/bin/rpm", "/usr/local/bin/rpm"};
    for (size_t i = 0; i < sizeof cands / sizeof cands[0]; i++)
        if (access(cands[i], X_OK) == 0)
            return cands[i];
    return NULL;
}

static json_t *probe_rpm(const struct gv_probe_ctx *ctx, const char *rpm, const char *dbpath)
{
    char source[GV_PATH_MAX + 128];
    snprintf(source, sizeof source, "%s --root %s --dbpath %s -qa", rpm, ctx->root, dbpath);
    /* rpm opens ROOT + dbpath as a host path: hand it the database
     * directory resolved inside the root, so that a link in the image (say
     * /var/lib/rpm -> /var/lib/rpm-host) cannot lead rpm to a host
     * directory. The files in that directory are rpm's to open. */
    char real[GV_PATH_MAX];
    struct gv_pkg_list l;
    struct gv_err err = {0};
    if (gv_root_realpath(ctx->root, dbpath, real, sizeof real, &err))
        return gv_section_missing(source, err.msg);
    if (gv_rpm_query(ctx->root, real, rpm, RPM_TIMEOUT_S, &l, &err))
        return gv_section_missing(source, err.msg);
    json_t *s = list_json(&l, source, "rpm");
    gv_pkg_list_free(&l);
    return s;
}

json_t *gv_probe_packages(const struct gv_probe_ctx *ctx)
{
    if (gv_sys_exists(ctx, DPKG_STATUS))
        return probe_dpkg(ctx);
    /* newer Fedora/openSUSE keep the database in /usr/lib/sysimage/rpm */
    static const char *const dbpaths[] = {"/usr/lib/sysimage/rpm", "/var/lib/rpm"};
    for (size_t i = 0; i < 2; i++) {
        if (!gv_sys_is_dir(ctx, dbpaths[i]))
            continue;
        const char *rpm = find_rpm();
        if (!rpm)
            return gv_section_missing(dbpaths[i],
                                      "an rpm database exists but no rpm binary to read it");
        return probe_rpm(ctx, rpm, dbpaths[i]);
    }
    return gv_section_missing(DPKG_STATUS ", /var/lib/rpm, /usr/lib/sysimage/rpm",
                              "no dpkg status file and no rpm database");
}
