/* The history database: schema and migrations, recording, queries and the
 * version matrix, written once over the two backends (history_db.h). */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <zstd.h>

#include "base/fs.h"
#include "base/json.h"
#include "base/sha256.h"
#include "num/fp.h"
#include "num/types.h"
#include "store/history.h"
#include "store/history_db.h"

#define DOC_MAX ((size_t)1 << 31) /* 2 GiB: larger documents are refused */
#define RETRIES 200

struct gv_history {
    const struct gv_hdb_ops *ops;
    void *conn;
    char name[1024];
    int in_bulk; /* inside gv_history_begin/commit */
    int version; /* the schema version read (older ones are read as they are) */
};

/* ---------- names and places ---------- */

static int is_pg_url(const char *url)
{
    return !strncmp(url, "postgresql://", 13) || !strncmp(url, "postgres://", 11);
}

int gv_history_locate(const char *url, char *out, size_t outsz, struct gv_err *err)
{
    if (!url || !*url)
        url = getenv("GPUVET_DB");
    if (url && *url) {
        if ((size_t)snprintf(out, outsz, "%s", url) >= outsz)
            return gv_err_set(err, GV_E_USAGE, "database name too long");
        return GV_OK;
    }
    return gv_history_default(out, outsz, err);
}

int gv_history_default(char *out, size_t outsz, struct gv_err *err)
{
    const char *xdg = getenv("XDG_DATA_HOME"), *home = getenv("HOME");
    int n;
    if (xdg && xdg[0] == '/')
        n = snprintf(out, outsz, "%s/gpuvet/history.db", xdg);
    else if (home && *home)
        n = snprintf(out, outsz, "%s/.local/share/gpuvet/history.db", home);
    else
        return gv_err_set(err, GV_E_NOTFOUND, "no history database: neither GPUVET_DB, "
                          "XDG_DATA_HOME nor HOME is set (use --db)");
    if ((size_t)n >= outsz)
        return gv_err_set(err, GV_E_USAGE, "database path too long");
    return GV_OK;
}

/* Drops "password=VALUE" (key=value strings and URL query parameters). */
static void drop_password_params(char *s)
{
    for (char *p = s; (p = strcasestr(p, "password=")) != NULL;) {
        int at_start = p == s || p[-1] == '?' || p[-1] == '&' || p[-1] == ' ';
        if (!at_start) {
            p += 9;
            continue;
        }
        char *end = p + 9;
        while (*end && *end != '&' && *end != ' ')
            end++;
        if (*end)
            end++; /* and its separator */
        else if (p > s && (p[-1] == '&' || p[-1] == ' '))
            p--; /* last parameter: drop the separator before it */
        memmove(p, end, strlen(end) + 1);
    }
    size_t n = strlen(s);
    if (n && s[n - 1] == '?')
        s[n - 1] = '\0';
}

void gv_url_redact(const char *url, char *out, size_t outsz)
{
    if (!outsz)
        return;
    snprintf(out, outsz, "%s", url ? url : "");
    char *s = strstr(out, "://");
    if (s) {
        s += 3;
        char *end = s + strcspn(s, "/?#");
        char *at = NULL;
        for (char *p = s; p < end; p++) /* the last '@' ends the user part */
            if (*p == '@')
                at = p;
        if (at) {
            char *colon = memchr(s, ':', (size_t)(at - s));
            if (colon)
                memmove(colon, at, strlen(at) + 1);
        }
    }
    drop_password_params(out);
}

const char *gv_history_name(const struct gv_history *h)
{
    return h->name;
}

const char *gv_history_backend(const struct gv_history *h)
{
    return h->ops->name;
}

void gv_history_this_machine(struct gv_history_ident *id)
{
    memset(id, 0, sizeof *id);
    if (gethostname(id->hostname, sizeof id->hostname - 1) != 0)
        id->hostname[0] = '\0';
    char mid[128] = "";
    if (gv_read_line("/etc/machine-id", mid, sizeof mid, NULL) != 0 || strlen(mid) < 16)
        return;
    /* an application-specific id (sd_id128_get_machine_app_specific's idea):
     * the same machine always gives the same value, the value does not give
     * the machine-id away */
    char buf[200], hex[65];
    int n = snprintf(buf, sizeof buf, "gpuvet-machine:%s", mid);
    gv_sha256_buf_hex(buf, (size_t)n, hex);
    snprintf(id->machine_id, sizeof id->machine_id, "%.32s", hex);
}

/* ---------- document to columns ---------- */

static void put(char *dst, size_t n, const char *s)
{
    snprintf(dst, n, "%s", s ? s : "");
}

static const char *str_at(const json_t *o, const char *path)
{
    return gv_json_path_str(o, path);
}

const json_t *gv_history_doc_snapshot(const json_t *doc)
{
    const char *schema = str_at(doc, "schema");
    if (schema && !strcmp(schema, "gpuvet.snapshot"))
        return doc;
    const char *paths[] = {"snapshot", "header.snapshot"};
    for (int i = 0; i < 2; i++) {
        const json_t *s = gv_json_path(doc, paths[i]);
        const char *sc = str_at(s, "schema");
        if (json_is_object(s) && sc && !strcmp(sc, "gpuvet.snapshot"))
            return s;
    }
    return NULL;
}

static const char *kind_of(const char *schema)
{
    static const char *const known[][2] = {
        {"gpuvet.snapshot", "snapshot"}, {"gpuvet.results", "check"},
        {"gpuvet.capture", "capture"},   {"gpuvet.probe", "probe"},
        {"gpuvet.bench", "bench"},       {"gpuvet.fleet.node", "fleet-node"},
        {"gpuvet.fleet", "fleet"},
    };
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        if (!strcmp(schema, known[i][0]))
            return known[i][1];
    return "other";
}

/* The install of kind (rocm/cuda) that is in use: the default one, else the
 * first that is not a Python wheel's. */
static const json_t *stack_install(const json_t *snap, const char *kind, const char *layout_not)
{
    const json_t *inst = gv_json_path(snap, "stacks.installs"), *e, *first = NULL;
    size_t i;
    json_array_foreach(inst, i, e) {
        const char *k = str_at(e, "kind"), *lay = str_at(e, "layout");
        if (!k || strcmp(k, kind) || (lay && layout_not && !strcmp(lay, layout_not)))
            continue;
        if (lay && !strcmp(lay, "python"))
            continue;
        if (json_is_true(json_object_get(e, "is_default")))
            return e;
        if (!first)
            first = e;
    }
    return first;
}

static void gpu_ids(const json_t *devices, char *out, size_t n)
{
    static const char *const keys[] = {"uuid", "serial", "unique_id", "pci_address"};
    out[0] = '\0';
    size_t i;
    const json_t *d;
    json_array_foreach(devices, i, d) {
        const char *v = NULL;
        for (int k = 0; k < 4 && !v; k++)
            v = str_at(d, keys[k]);
        if (!v)
            continue;
        size_t len = strlen(out);
        snprintf(out + len, n - len, "%s%s", len ? "," : "", v);
    }
}

static void from_snapshot(const json_t *snap, struct gv_run_cols *c)
{
    if (!snap)
        return;
    const char *h = str_at(snap, "host.hostname");
    if (!h)
        h = str_at(snap, "host.identity.hostname");
    if (h)
        put(c->hostname, sizeof c->hostname, h);
    const char *m = str_at(snap, "host.machine_id");
    if (!m)
        m = str_at(snap, "host.identity.machine_id");
    if (m)
        put(c->machine_id, sizeof c->machine_id, m);
    put(c->kernel, sizeof c->kernel, str_at(snap, "host.kernel.release"));
    const json_t *devs = gv_json_path(snap, "gpus.devices");
    c->gpu_count = (int)json_array_size(devs);
    gpu_ids(devs, c->gpu_ids, sizeof c->gpu_ids);
    const json_t *d0 = json_array_get(devs, 0);
    if (d0) {
        const char *model = str_at(d0, "model");
        if (model)
            put(c->gpu_model, sizeof c->gpu_model, model);
        else
            snprintf(c->gpu_model, sizeof c->gpu_model, "%s %s",
                     str_at(d0, "vendor") ? str_at(d0, "vendor") : "gpu",
                     str_at(d0, "device_id") ? str_at(d0, "device_id") : "?");
        put(c->gpu_arch, sizeof c->gpu_arch, str_at(d0, "kfd.gfx_target"));
    }
    const char *drv = str_at(snap, "drivers.modules.amdgpu.version");
    if (!drv)
        drv = str_at(snap, "drivers.modules.nvidia.version");
    if (!drv) {
        const json_t *e = stack_install(snap, "cuda", "toolkit");
        const char *lay = str_at(e, "layout");
        if (lay && !strcmp(lay, "driver"))
            drv = str_at(e, "version");
    }
    put(c->driver, sizeof c->driver, drv);
    put(c->rocm, sizeof c->rocm, str_at(stack_install(snap, "rocm", NULL), "version"));
    put(c->cuda, sizeof c->cuda, str_at(stack_install(snap, "cuda", "driver"), "version"));
    const json_t *envs = gv_json_path(snap, "python.environments"), *e;
    size_t i;
    json_array_foreach(envs, i, e) {
        const char *v = str_at(e, "torch.version");
        if (!v)
            continue;
        put(c->torch, sizeof c->torch, v);
        const char *b = str_at(e, "torch.build"), *hip = str_at(e, "torch.hip"),
                   *cu = str_at(e, "torch.cuda");
        snprintf(c->torch_build, sizeof c->torch_build, "%s%s%s", b ? b : "",
                 hip ? " hip " : cu ? " cuda " : "", hip ? hip : cu ? cu : "");
        break;
    }
}

/* The image a snapshot was made of (its "image" section, docs/image.md). */
static void from_image(const json_t *snap, struct gv_run_cols *c)
{
    const json_t *img = json_object_get(snap, "image");
    if (!json_is_object(img))
        return;
    put(c->image_manifest_digest, sizeof c->image_manifest_digest,
        str_at(img, "manifest_digest"));
    put(c->image_config_digest, sizeof c->image_config_digest, str_at(img, "config_digest"));
    put(c->image_tag, sizeof c->image_tag, str_at(img, "tag"));
    json_t *tags = json_array();
    const json_t *t;
    size_t i;
    json_array_foreach(json_object_get(img, "tags"), i, t) {
        if (!json_is_string(t))
            continue;
        json_array_append(tags, (json_t *)t);
        char *text = gv_json_dumps(tags, JSON_COMPACT);
        if (!text || strlen(text) >= sizeof c->image_tags) { /* the names that fit */
            json_array_remove(tags, json_array_size(tags) - 1);
            free(text);
            break;
        }
        put(c->image_tags, sizeof c->image_tags, text);
        free(text);
    }
    json_decref(tags);
}

/* The device that computed (results and capture documents). */
static void from_device(const json_t *desc, struct gv_run_cols *c)
{
    if (!json_is_object(desc))
        return;
    const char *name = str_at(desc, "name"), *arch = str_at(desc, "arch");
    if (name)
        put(c->gpu_model, sizeof c->gpu_model, name);
    if (arch)
        put(c->gpu_arch, sizeof c->gpu_arch, arch);
    const char *tv = str_at(desc, "torch.version");
    if (tv) {
        put(c->torch, sizeof c->torch, tv);
        const char *b = str_at(desc, "torch.build"), *hip = str_at(desc, "torch.hip"),
                   *cu = str_at(desc, "torch.cuda");
        snprintf(c->torch_build, sizeof c->torch_build, "%s%s%s", b ? b : "",
                 hip ? " hip " : cu ? " cuda " : "", hip ? hip : cu ? cu : "");
    }
    const char *uuid = str_at(desc, "uuid");
    if (uuid)
        put(c->gpu_ids, sizeof c->gpu_ids, uuid);
}

static long long int_at(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    return json_is_integer(v) ? (long long)json_integer_value(v) : 0;
}

/* Bits lost by a case: the precision it promises (the narrower of its compute
 * and output formats, from their unit roundoff: a TF32 GEMM into f32 promises
 * 11 bits, not 24) minus the effective bits measured. */
double gv_hist_bits_lost(double effective_bits, int tc, int to)
{
    if (to < 0)
        return -1;
    double p = -log2(gv_fp_unit_roundoff((enum gv_dtype)to));
    if (tc >= 0 && -log2(gv_fp_unit_roundoff((enum gv_dtype)tc)) < p)
        p = -log2(gv_fp_unit_roundoff((enum gv_dtype)tc));
    double lost = p - effective_bits;
    return isfinite(lost) ? (lost > 0 ? lost : 0) : -1;
}

static double bits_lost(const json_t *cs)
{
    const json_t *eb = gv_json_path(cs, "metrics.effective_bits");
    const char *co = str_at(cs, "compute_dtype"), *out = str_at(cs, "out_dtype");
    int tc = co ? gv_dtype_from_name(co) : -1, to = out ? gv_dtype_from_name(out) : -1;
    if (!json_is_number(eb))
        return -1;
    return gv_hist_bits_lost(json_number_value(eb), tc, to);
}

static void from_cases(const json_t *cases, struct gv_run_cols *c)
{
    size_t i;
    const json_t *cs;
    json_array_foreach(cases, i, cs) {
        double l = bits_lost(cs);
        const char *id = str_at(cs, "id");
        if (l >= 0 && id && l > c->worst_bits_lost) {
            c->worst_bits_lost = l;
            put(c->worst_case, sizeof c->worst_case, id);
        }
    }
}

static void from_summary(const json_t *doc, struct gv_run_cols *c)
{
    const json_t *s = json_object_get(doc, "summary");
    const char *v = str_at(doc, "verdict");
    if (json_is_object(s) && json_object_get(s, "cases")) {
        c->cases = int_at(s, "cases");
        c->passed = int_at(s, "pass");
        c->failed = int_at(s, "fail");
        c->errors = int_at(s, "error");
        c->skipped = int_at(s, "skipped");
        /* as check's exit status: a pass is every case passed */
        put(c->verdict, sizeof c->verdict,
            c->cases > 0 && c->passed == c->cases ? "pass" : "fail");
    }
    if (v && (!strcmp(v, "pass") || !strcmp(v, "fail")))
        put(c->verdict, sizeof c->verdict, v);
}

/* The image a run is of: its manifest digest, else (a legacy docker-archive)
 * its config digest, the image ID; "" for a host or a root. */
static const char *image_key(const struct gv_run_cols *c)
{
    return c->image_manifest_digest[0] ? c->image_manifest_digest : c->image_config_digest;
}

static void make_keys(struct gv_run_cols *c)
{
    if (c->machine_id[0])
        snprintf(c->machine_key, sizeof c->machine_key, "id:%s", c->machine_id);
    else if (c->hostname[0])
        snprintf(c->machine_key, sizeof c->machine_key, "host:%s", c->hostname);
    else
        snprintf(c->machine_key, sizeof c->machine_key, "unknown");
    snprintf(c->stack_key, sizeof c->stack_key, "%s\x1f%s\x1f%s\x1f%s\x1f%s\x1f%s\x1f%s",
             c->gpu_model, c->gpu_arch, c->kernel, c->driver, c->rocm, c->cuda, c->torch);
    /* an image is a stack of its own, and so is a fleet node's stack digest: own rows */
    const char *own = image_key(c)[0] ? image_key(c) : c->stack_digest;
    if (own[0]) {
        size_t len = strlen(c->stack_key);
        snprintf(c->stack_key + len, sizeof c->stack_key - len, "\x1f%s", own);
    }
}

/* [a-z0-9_-], 1 to 16: a kind or a side of an experiment. */
static int experiment_word(const char *s)
{
    size_t n = s ? strlen(s) : 0;
    if (n < 1 || n > 16)
        return 0;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '_' || *s == '-'))
            return 0;
    return 1;
}

/* The document's "experiment" (absent: an ordinary run) as "kind:side". */
static int from_experiment(const json_t *e, struct gv_run_cols *c, const char *what,
                           struct gv_err *err)
{
    if (!e || json_is_null(e))
        return GV_OK;
    const char *kind = json_string_value(json_object_get(e, "kind"));
    const char *side = json_string_value(json_object_get(e, "side"));
    if (!json_is_object(e) || !experiment_word(kind) || !experiment_word(side))
        return gv_err_set(err, GV_E_FORMAT, "%s: experiment must be {\"kind\", \"side\"}, "
                          "each of [a-z0-9_-], 1 to 16 characters", what);
    snprintf(c->experiment, sizeof c->experiment, "%s:%s", kind, side);
    return GV_OK;
}

int gv_history_mark_experiment(json_t *doc, const char *kind, const char *side,
                               struct gv_err *err)
{
    if (!experiment_word(kind) || !experiment_word(side))
        return gv_err_set(err, GV_E_USAGE, "experiment kind and side must be [a-z0-9_-], 1 to "
                          "16 characters");
    return json_object_set_new(doc, "experiment", json_pack("{s:s, s:s}", "kind", kind, "side",
                                                            side))
               ? gv_err_set(err, GV_E_NOMEM, "experiment: out of memory")
               : GV_OK;
}

int gv_history_extract(const json_t *doc, const struct gv_history_ident *ident,
                       struct gv_run_cols *c, const char *what, struct gv_err *err)
{
    memset(c, 0, sizeof *c);
    c->worst_bits_lost = -1;
    c->fleet_nodes = c->fleet_odd = -1;
    if (!json_is_object(doc))
        return gv_err_set(err, GV_E_FORMAT, "%s: not a JSON object", what);
    const char *schema = str_at(doc, "schema");
    const json_t *ver = json_object_get(doc, "schema_version");
    if (!schema || strncmp(schema, "gpuvet.", 7) || !json_is_integer(ver))
        return gv_err_set(err, GV_E_SCHEMA, "%s: not a gpuvet document (no \"schema\": "
                          "\"gpuvet....\" and integer \"schema_version\")", what);
    if (!strcmp(schema, GV_MATRIX_SCHEMA) || !strcmp(schema, GV_HISTORY_RUN_SCHEMA))
        return gv_err_set(err, GV_E_SCHEMA, "%s: a %s document is made from the history, not "
                          "recorded in it", what, schema);
    put(c->schema, sizeof c->schema, schema);
    c->schema_version = (int)json_integer_value(ver);
    put(c->kind, sizeof c->kind, kind_of(schema));
    const json_t *head = json_object_get(doc, "header"); /* capture index */
    const json_t *top = json_is_object(head) ? head : doc;
    put(c->gpuvet_version, sizeof c->gpuvet_version, str_at(top, "gpuvet_version"));
    put(c->created, sizeof c->created, str_at(top, "created"));
    if (!strncmp(c->kind, "fleet", 5)) { /* a node or a comparison: its own fields */
        int frc = gv_hist_fleet_cols(doc, c, what, err);
        if (frc)
            return frc;
        if (!strcmp(c->kind, "fleet") && ident) { /* the comparison: where it was made */
            put(c->hostname, sizeof c->hostname, ident->hostname);
            put(c->machine_id, sizeof c->machine_id, ident->machine_id);
        }
        make_keys(c);
        return GV_OK;
    }
    from_snapshot(gv_history_doc_snapshot(doc), c);
    from_image(gv_history_doc_snapshot(doc), c);
    const json_t *dev = json_object_get(top, "device");
    const json_t *desc = json_object_get(dev, "description");
    from_device(json_is_object(desc) ? desc : dev, c);
    const char *spec = str_at(dev, "spec");
    if (!spec)
        spec = str_at(dev, "device");
    if (!spec)
        spec = str_at(desc, "backend");
    put(c->device, sizeof c->device, spec);
    if (json_is_string(json_object_get(doc, "suite")))
        put(c->suite, sizeof c->suite, str_at(doc, "suite"));
    from_summary(doc, c);
    from_cases(json_object_get(doc, "cases"), c);
    int erc = from_experiment(json_object_get(doc, "experiment"), c, what, err);
    if (erc)
        return erc;
    if (!c->hostname[0] && ident)
        put(c->hostname, sizeof c->hostname, ident->hostname);
    if (!c->machine_id[0] && ident)
        put(c->machine_id, sizeof c->machine_id, ident->machine_id);
    make_keys(c);
    return GV_OK;
}

/* ---------- opening, schema ---------- */

int gv_hdb_wait_ms(void)
{
    const char *e = getenv("GPUVET_DB_TIMEOUT");
    char *end;
    double s = e && *e ? strtod(e, &end) : 30.0;
    if (!e || !*e || *end || !(s >= 0) || s > 86400)
        s = 30.0;
    return (int)(s * 1000);
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Transient failures are retried RETRIES times, but never past the wait the
 * user allows (GPUVET_DB_TIMEOUT): a database another process keeps locked is
 * reported as such, not waited on for hours. */
static int may_retry(int attempt, double t0)
{
    return attempt < RETRIES && now_ms() - t0 < gv_hdb_wait_ms();
}

static void backoff(int attempt)
{
    unsigned ms = 1u << (attempt < 8 ? attempt : 8); /* 1 .. 256 ms */
    ms += (unsigned)rand() % (ms + 1);
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

struct one_int {
    long long v;
    int found;
};

static int one_int_row(void *ud, int n, const struct gv_hv *v)
{
    struct one_int *o = ud;
    if (n < 1)
        return 0;
    if (v[0].type == GV_HV_INT)
        o->v = v[0].i;
    else if (v[0].type == GV_HV_TEXT)
        o->v = strtoll(v[0].s, NULL, 10);
    else if (v[0].type == GV_HV_REAL)
        o->v = (long long)v[0].d;
    else
        return 0;
    o->found = 1;
    return 0;
}

/* The schema version, 0 when the database has no table meta yet. */
static int read_version(struct gv_history *h, int *version, struct gv_err *err)
{
    struct one_int o = {0};
    struct gv_err e2 = {0};
    int rc = h->ops->query(h->conn, "SELECT value FROM meta WHERE key = 'schema_version'",
                           NULL, 0, one_int_row, &o, &e2);
    if (rc) {
        if (h->ops->retriable(h->conn)) {
            *err = e2;
            return GV_E_TIMEOUT;
        }
        /* no table meta (a new database); anything else shows again below */
        *version = 0;
        return GV_OK;
    }
    *version = o.found ? (int)o.v : 0;
    if (!o.found)
        *version = 0;
    return GV_OK;
}

static int refuse_newer(struct gv_history *h, int v, struct gv_err *err)
{
    return gv_err_set(err, GV_E_SCHEMA, "history database %s has schema version %d, newer than "
                      "this gpuvet (%s) reads (up to %d): use a newer gpuvet, or another "
                      "database (--db or GPUVET_DB)", h->name, v, GPUVET_VERSION,
                      GV_HISTORY_SCHEMA_VERSION);
}

static int migrate_once(struct gv_history *h, struct gv_err *err)
{
    int rc = h->ops->begin(h->conn, err);
    if (rc)
        return rc;
    int v = 0;
    if (!(rc = h->ops->lock_schema(h->conn, err)))
        rc = h->ops->exec(h->conn, "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, "
                                   "value TEXT NOT NULL)", err);
    if (!rc)
        rc = read_version(h, &v, err);
    if (!rc && v > GV_HISTORY_SCHEMA_VERSION)
        rc = refuse_newer(h, v, err);
    for (int step = v + 1; !rc && step <= GV_HISTORY_SCHEMA_VERSION; step++) {
        int there = step == 2   ? h->ops->has_column(h->conn, "runs", "image_manifest_digest", err)
                    : step == 3 ? h->ops->has_column(h->conn, "runs", "experiment", err)
                    : step == 4 ? h->ops->has_column(h->conn, "runs", "fleet_job", err)
                                : 0;
        if (there < 0)
            rc = there;
        else if (!there)
            rc = h->ops->exec(h->conn, h->ops->schema_step(step), err);
    }
    if (!rc && v < GV_HISTORY_SCHEMA_VERSION) {
        char ver[16];
        snprintf(ver, sizeof ver, "%d", GV_HISTORY_SCHEMA_VERSION);
        struct gv_hv p[] = {{.type = GV_HV_TEXT, .s = ver}};
        rc = h->ops->query(h->conn, v == 0
                           ? "INSERT INTO meta (key, value) VALUES ('schema_version', ?)"
                           : "UPDATE meta SET value = ? WHERE key = 'schema_version'",
                           p, 1, NULL, NULL, err);
        if (!rc && v == 0) {
            struct gv_hv q[] = {{.type = GV_HV_TEXT, .s = GPUVET_VERSION}};
            rc = h->ops->query(h->conn, "INSERT INTO meta (key, value) VALUES "
                               "('created_by', ?)", q, 1, NULL, NULL, err);
        }
    }
    if (!rc)
        rc = h->ops->commit(h->conn, err);
    if (rc)
        h->ops->rollback(h->conn);
    return rc;
}

static int prepare_schema(struct gv_history *h, int create, struct gv_err *err)
{
    double t0 = now_ms();
    for (int attempt = 0;; attempt++) {
        int v = 0;
        int rc = read_version(h, &v, err);
        if (!rc && v > GV_HISTORY_SCHEMA_VERSION)
            return refuse_newer(h, v, err);
        h->version = v;
        if (!rc && v == GV_HISTORY_SCHEMA_VERSION)
            return GV_OK;
        if (!rc && !create && v >= 1)
            return GV_OK; /* an older schema is read as it is (runs_of) */
        if (!rc && !create)
            return gv_err_set(err, GV_E_FORMAT, "history database %s: not a gpuvet history "
                              "database (no table meta with a schema version)", h->name);
        if (!rc)
            rc = migrate_once(h, err);
        if (!rc) {
            h->version = GV_HISTORY_SCHEMA_VERSION;
            return GV_OK;
        }
        if (!h->ops->retriable(h->conn) || !may_retry(attempt, t0))
            return rc;
        backoff(attempt);
    }
}

int gv_history_open(const char *url, int create, struct gv_history **out, struct gv_err *err)
{
    *out = NULL;
    char where[GV_PATH_MAX];
    int rc = gv_history_locate(url, where, sizeof where, err);
    if (rc)
        return rc;
    struct gv_history *h = calloc(1, sizeof *h);
    if (!h)
        return gv_err_set(err, GV_E_NOMEM, "out of memory");
    gv_url_redact(where, h->name, sizeof h->name);
    const char *path = where;
    if (!strncmp(path, "sqlite:", 7))
        path += 7;
    else if (!strncmp(path, "file:", 5))
        path += 5;
    double t0 = now_ms();
    for (int attempt = 0;; attempt++) {
        if (is_pg_url(where))
            rc = gv_hdb_pg_open(where, h->name, &h->ops, &h->conn, err);
        else
            rc = gv_hdb_sqlite_open(path, create, h->name, gv_hdb_wait_ms(), &h->ops,
                                    &h->conn, err);
        if (rc != GV_E_TIMEOUT || !may_retry(attempt, t0))
            break;
        backoff(attempt);
    }
    if (!rc)
        rc = prepare_schema(h, create, err);
    if (rc) {
        gv_history_close(h);
        return rc;
    }
    *out = h;
    return GV_OK;
}

void gv_history_close(struct gv_history *h)
{
    if (!h)
        return;
    if (h->ops && h->conn)
        h->ops->close(h->conn);
    free(h);
}

/* ---------- recording ---------- */

static struct gv_hv T(const char *s)
{
    struct gv_hv v = {.type = s && *s ? GV_HV_TEXT : GV_HV_NULL, .s = s};
    return v;
}

static struct gv_hv I(long long i)
{
    struct gv_hv v = {.type = GV_HV_INT, .i = i};
    return v;
}

/* A count, NULL when negative (not a run of that kind). */
static struct gv_hv N(long long i)
{
    struct gv_hv v = {.type = i >= 0 ? GV_HV_INT : GV_HV_NULL, .i = i};
    return v;
}

static struct gv_hv R(double d)
{
    struct gv_hv v = {.type = d >= 0 ? GV_HV_REAL : GV_HV_NULL, .d = d};
    return v;
}

static void utc_now(char out[32])
{
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(out, 32, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static const char insert_run[] =
    "INSERT INTO runs (run_key, kind, schema, schema_version, gpuvet_version, created,"
    " recorded, source, hostname, machine_id, machine_key, gpu_ids, gpu_model, gpu_arch,"
    " gpu_count, kernel, driver, rocm, cuda, torch, torch_build, device, suite, verdict,"
    " cases, passed, failed, errors, skipped, worst_case, worst_bits_lost, stack_key,"
    " image_manifest_digest, image_config_digest, image_tag, image_tags, experiment,"
    " fleet_job, stack_digest, fleet_nodes, fleet_odd)"
    " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,"
    "?,?,?,?)"
    " ON CONFLICT (run_key) DO NOTHING RETURNING id";

struct packed {
    char *json;
    size_t len;
    void *z;
    size_t zlen;
    char sha[65];
};

static int pack(const json_t *doc, struct packed *p, const char *name, struct gv_err *err)
{
    memset(p, 0, sizeof *p);
    p->json = gv_json_dumps(doc, JSON_COMPACT);
    if (!p->json)
        return gv_err_set(err, GV_E_NOMEM, "history database %s: cannot serialise the document",
                          name);
    p->len = strlen(p->json);
    if (p->len > DOC_MAX)
        return gv_err_set(err, GV_E_FORMAT, "history database %s: document of %zu bytes is "
                          "too large to record", name, p->len);
    gv_sha256_buf_hex(p->json, p->len, p->sha);
    size_t cap = ZSTD_compressBound(p->len);
    p->z = malloc(cap);
    if (!p->z)
        return gv_err_set(err, GV_E_NOMEM, "history database %s: out of memory", name);
    size_t z = ZSTD_compress(p->z, cap, p->json, p->len, 3);
    if (ZSTD_isError(z))
        return gv_err_set(err, GV_E_FORMAT, "history database %s: zstd: %s", name,
                          ZSTD_getErrorName(z));
    p->zlen = z;
    return GV_OK;
}

static void unpack_free(struct packed *p)
{
    free(p->json);
    free(p->z);
}

static int record_once(struct gv_history *h, const json_t *doc, const struct gv_run_cols *c,
                       const char *source, const struct packed *p, int64_t *run, int *is_new,
                       struct gv_err *err)
{
    int rc = h->in_bulk ? GV_OK : h->ops->begin(h->conn, err);
    if (rc)
        return rc;
    gv_test_stop_point("record-begin", h->name);
    char now[32];
    utc_now(now);
    const char *created = c->created[0] ? c->created : now;
    struct gv_hv v[] = {
        T(p->sha), T(c->kind), T(c->schema), I(c->schema_version), T(c->gpuvet_version),
        T(created), T(now), T(source), T(c->hostname), T(c->machine_id), T(c->machine_key),
        T(c->gpu_ids), T(c->gpu_model), T(c->gpu_arch), I(c->gpu_count), T(c->kernel),
        T(c->driver), T(c->rocm), T(c->cuda), T(c->torch), T(c->torch_build), T(c->device),
        T(c->suite), T(c->verdict), I(c->cases), I(c->passed), I(c->failed), I(c->errors),
        I(c->skipped), T(c->worst_case), R(c->worst_bits_lost), T(c->stack_key),
        T(c->image_manifest_digest), T(c->image_config_digest), T(c->image_tag),
        T(c->image_tags), T(c->experiment), T(c->fleet_job), T(c->stack_digest),
        N(c->fleet_nodes), N(c->fleet_odd)};
    struct one_int id = {0};
    struct gv_hv k[] = {T(p->sha)};
    /* recorded before? (asked first, so that PostgreSQL's sequence has no gaps) */
    rc = h->ops->query(h->conn, "SELECT id FROM runs WHERE run_key = ?", k, 1, one_int_row, &id,
                       err);
    if (!rc && id.found) {
        *is_new = 0;
    } else if (!rc && (rc = h->ops->query(h->conn, insert_run, v, (int)(sizeof v / sizeof v[0]),
                                          one_int_row, &id, err)) == GV_OK && !id.found) {
        /* recorded at the same moment by another process */
        rc = h->ops->query(h->conn, "SELECT id FROM runs WHERE run_key = ?", k, 1, one_int_row,
                           &id, err);
        if (!rc && !id.found)
            rc = gv_err_set(err, GV_E_IO, "history database %s: run neither inserted nor found",
                            h->name);
        *is_new = 0;
    } else if (!rc) {
        *is_new = 1;
        gv_test_stop_point("record-run", h->name);
        struct gv_hv d[] = {I(id.v), T("zstd+json"), I((long long)p->len), T(p->sha),
                            {.type = GV_HV_BLOB, .b = p->z, .n = p->zlen}};
        rc = h->ops->query(h->conn, "INSERT INTO documents (run_id, encoding, bytes, sha256, "
                           "data) VALUES (?,?,?,?,?)", d, 5, NULL, NULL, err);
        if (!rc && !strcmp(c->kind, "fleet") && c->fleet_job[0])
            rc = gv_hist_fleet_mark_odd(h, doc, c->fleet_job, err);
        if (!rc)
            gv_test_stop_point("record-doc", h->name);
    }
    if (!rc && !h->in_bulk)
        rc = h->ops->commit(h->conn, err);
    if (rc) {
        if (!h->in_bulk)
            h->ops->rollback(h->conn);
        return rc;
    }
    gv_test_stop_point("record-commit", h->name);
    *run = id.v;
    return GV_OK;
}

int gv_history_record(struct gv_history *h, const json_t *doc, const char *source,
                      const struct gv_history_ident *ident, int64_t *run, int *is_new,
                      struct gv_err *err)
{
    struct gv_run_cols *c = malloc(sizeof *c);
    if (!c)
        return gv_err_set(err, GV_E_NOMEM, "out of memory");
    int rc = gv_history_extract(doc, ident, c, source ? source : "document", err);
    struct packed p = {0};
    if (!rc)
        rc = pack(doc, &p, h->name, err);
    int dummy_new;
    if (!is_new)
        is_new = &dummy_new;
    double t0 = now_ms();
    int tries = 0;
    for (int attempt = 0; !rc; attempt++) {
        rc = record_once(h, doc, c, source, &p, run, is_new, err);
        tries = attempt + 1;
        if (!rc || h->in_bulk || !h->ops->retriable(h->conn) || !may_retry(attempt, t0))
            break;
        rc = GV_OK;
        gv_err_clear(err);
        backoff(attempt);
    }
    if (rc && err && h->ops->retriable(h->conn))
        gv_err_prefix(err, "gave up after %d tries", tries);
    unpack_free(&p);
    free(c);
    return rc;
}

int gv_history_begin(struct gv_history *h, struct gv_err *err)
{
    int rc = h->ops->begin(h->conn, err);
    h->in_bulk = rc == GV_OK;
    return rc;
}

int gv_history_commit(struct gv_history *h, struct gv_err *err)
{
    h->in_bulk = 0;
    int rc = h->ops->commit(h->conn, err);
    if (rc)
        h->ops->rollback(h->conn);
    return rc;
}

/* ---------- queries ---------- */

static const char *const summary_cols[] = {
    "id", "kind", "schema", "schema_version", "gpuvet_version", "created", "recorded", "source",
    "hostname", "machine_id", "gpu_ids", "gpu_model", "gpu_arch", "gpu_count", "kernel",
    "driver", "rocm", "cuda", "torch", "torch_build", "device", "suite", "verdict", "cases",
    "passed", "failed", "errors", "skipped", "worst_case", "worst_bits_lost",
    "image_manifest_digest", "image_config_digest", "image_tag", "image_tags", "experiment",
    "fleet_job", "stack_digest", "fleet_nodes", "fleet_odd", "node_class"};
#define NSUMMARY (sizeof summary_cols / sizeof summary_cols[0])
#define SUMMARY_SELECT                                                                        \
    "SELECT id, kind, schema, schema_version, gpuvet_version, created, recorded, source,"     \
    " hostname, machine_id, gpu_ids, gpu_model, gpu_arch, gpu_count, kernel, driver, rocm,"   \
    " cuda, torch, torch_build, device, suite, verdict, cases, passed, failed, errors,"       \
    " skipped, worst_case, worst_bits_lost, image_manifest_digest, image_config_digest,"     \
    " image_tag, image_tags, experiment, fleet_job, stack_digest, fleet_nodes, fleet_odd,"    \
    " node_class"                                                                             \
    " FROM "

static json_t *value_json(const struct gv_hv *v)
{
    switch (v->type) {
    case GV_HV_INT: return json_integer(v->i);
    case GV_HV_REAL: return json_real(v->d);
    case GV_HV_TEXT: return json_string(v->s);
    default: return json_null();
    }
}

/* image_tags is stored as a JSON array's text: an array again (an empty one
 * when there is no image or the text is not an array of strings). */
static json_t *tags_json(const struct gv_hv *v)
{
    json_t *a = v->type == GV_HV_TEXT ? json_loads(v->s, 0, NULL) : NULL;
    size_t i;
    json_t *t;
    json_array_foreach(a, i, t) {
        if (!json_is_string(t)) {
            json_decref(a);
            a = NULL;
            break;
        }
    }
    if (!json_is_array(a)) {
        json_decref(a);
        a = json_array();
    }
    return a;
}

static json_t *summary_of(int n, const struct gv_hv *v)
{
    json_t *o = json_object();
    for (int i = 0; i < n && i < (int)NSUMMARY; i++)
        json_object_set_new(o, summary_cols[i], !strcmp(summary_cols[i], "image_tags")
                                                    ? tags_json(&v[i]) : value_json(&v[i]));
    return o;
}

/* The table runs as this schema version holds it: a database of version 1
 * (before the image columns) is read as it is, its image columns NULL; it is
 * migrated in place when a run is recorded into it. */
static const char *runs_of(const struct gv_history *h)
{
#define RUNS_V1_COLS                                                                          \
    "id, run_key, kind, schema, schema_version, gpuvet_version, created, recorded, source,"  \
    " hostname, machine_id, machine_key, gpu_ids, gpu_model, gpu_arch, gpu_count, kernel,"   \
    " driver, rocm, cuda, torch, torch_build, device, suite, verdict, cases, passed, failed," \
    " errors, skipped, worst_case, worst_bits_lost, stack_key"
#define NO_FLEET_COLS                                                                         \
    ", NULL AS fleet_job, NULL AS stack_digest, NULL AS fleet_nodes, NULL AS fleet_odd,"      \
    " NULL AS node_class"
    /* versions 1 and 2 had no experiments: every run of theirs is an ordinary one;
     * before version 4 no run was of the fleet */
    return h->version >= 4 ? "runs"
         : h->version == 3
             ? "(SELECT " RUNS_V1_COLS ", image_manifest_digest, image_config_digest, image_tag,"
               " image_tags, experiment" NO_FLEET_COLS " FROM runs) runs"
         : h->version == 2
             ? "(SELECT " RUNS_V1_COLS ", image_manifest_digest, image_config_digest, image_tag,"
               " image_tags, NULL AS experiment" NO_FLEET_COLS " FROM runs) runs"
             : "(SELECT " RUNS_V1_COLS ", NULL AS image_manifest_digest, NULL AS "
               "image_config_digest, NULL AS image_tag, NULL AS image_tags, NULL AS experiment"
               NO_FLEET_COLS " FROM runs) runs";
#undef NO_FLEET_COLS
#undef RUNS_V1_COLS
}

static int append_summary(void *ud, int n, const struct gv_hv *v)
{
    json_array_append_new((json_t *)ud, summary_of(n, v));
    return 0;
}

/* SQL conditions and their parameters for a filter. */
struct where {
    char sql[4096];
    struct gv_hv p[16];
    int np;
    char buf[6][300];
};

static void like_escape(const char *in, char *out, size_t n, int lower)
{
    size_t o = 0;
    for (; *in && o + 3 < n; in++) {
        if (*in == '%' || *in == '_' || *in == '\\')
            out[o++] = '\\';
        out[o++] = lower ? (char)tolower((unsigned char)*in) : *in;
    }
    out[o] = '\0';
}

static void where_add(struct where *w, const char *cond)
{
    size_t len = strlen(w->sql);
    snprintf(w->sql + len, sizeof w->sql - len, " AND %s", cond);
}

/* An image by its manifest or config digest ("sha256:HEX", or a prefix of at
 * least 12 of HEX's digits, with or without "sha256:"), or the tag asked for. */
static void where_image(struct where *w, const char *image)
{
    const char *hex = !strncmp(image, "sha256:", 7) ? image + 7 : image;
    size_t n = strspn(hex, "0123456789abcdef");
    if (n >= 12 && !hex[n] && n <= 64) {
        snprintf(w->buf[4], sizeof w->buf[4], "sha256:%s%%", hex);
        where_add(w, "(image_manifest_digest LIKE ? OR image_config_digest LIKE ? OR "
                  "image_tag = ?)");
        w->p[w->np++] = T(w->buf[4]);
        w->p[w->np++] = T(w->buf[4]);
    } else {
        where_add(w, "(image_manifest_digest = ? OR image_config_digest = ? OR image_tag = ?)");
        w->p[w->np++] = T(image);
        w->p[w->np++] = T(image);
    }
    w->p[w->np++] = T(image);
}

static void where_of(const struct gv_history_filter *f, struct where *w)
{
    memset(w, 0, sizeof *w);
    if (!f)
        return;
    if (f->machine && *f->machine) {
        where_add(w, "(hostname = ? OR machine_id = ? OR machine_key = ?)");
        for (int i = 0; i < 3; i++)
            w->p[w->np++] = T(f->machine);
    }
    if (f->image && *f->image)
        where_image(w, f->image);
    if (f->kind && *f->kind) {
        where_add(w, "kind = ?");
        w->p[w->np++] = T(f->kind);
    }
    if (f->since && *f->since) {
        where_add(w, "created >= ?");
        w->p[w->np++] = T(f->since);
    }
    if (f->gpu && *f->gpu) {
        char esc[200];
        like_escape(f->gpu, esc, sizeof esc, 1);
        snprintf(w->buf[0], sizeof w->buf[0], "%%%s%%", esc);
        snprintf(w->buf[1], sizeof w->buf[1], "%s", esc);
        where_add(w, "(LOWER(gpu_model) LIKE ? ESCAPE '\\' OR LOWER(gpu_arch) LIKE ? ESCAPE '\\')");
        w->p[w->np++] = T(w->buf[0]);
        w->p[w->np++] = T(w->buf[1]);
    }
    if (f->torch && *f->torch) {
        char esc[200];
        like_escape(f->torch, esc, sizeof esc, 0);
        snprintf(w->buf[2], sizeof w->buf[2], "%s.%%", esc);
        snprintf(w->buf[3], sizeof w->buf[3], "%s+%%", esc);
        where_add(w, "(torch = ? OR torch LIKE ? ESCAPE '\\' OR torch LIKE ? ESCAPE '\\')");
        w->p[w->np++] = T(f->torch);
        w->p[w->np++] = T(w->buf[2]);
        w->p[w->np++] = T(w->buf[3]);
    }
}

int gv_history_list(struct gv_history *h, const struct gv_history_filter *f, json_t **runs,
                    struct gv_err *err)
{
    struct where w;
    where_of(f, &w);
    char sql[4096];
    snprintf(sql, sizeof sql, SUMMARY_SELECT "%s WHERE 1 = 1%s ORDER BY created DESC, id DESC "
             "LIMIT %d", runs_of(h), w.sql, f && f->limit > 0 ? f->limit : 50);
    json_t *a = json_array();
    int rc = h->ops->query(h->conn, sql, w.p, w.np, append_summary, a, err);
    if (rc) {
        json_decref(a);
        return rc;
    }
    *runs = a;
    return GV_OK;
}

struct docrow {
    struct gv_history *h;
    long long run;
    json_t *doc;
    int found;
    int rc;
    struct gv_err *err;
};

static int doc_row(void *ud, int n, const struct gv_hv *v)
{
    struct docrow *d = ud;
    d->found = 1;
    if (n < 3 || v[0].type != GV_HV_BLOB || v[1].type != GV_HV_TEXT) {
        d->rc = gv_err_set(d->err, GV_E_FORMAT, "history database %s: run %lld: its document "
                           "is missing or not a zstd blob", d->h->name, d->run);
        return 1;
    }
    unsigned long long size = ZSTD_getFrameContentSize(v[0].b, v[0].n);
    if (size == ZSTD_CONTENTSIZE_ERROR || size == ZSTD_CONTENTSIZE_UNKNOWN || size > DOC_MAX) {
        d->rc = gv_err_set(d->err, GV_E_FORMAT, "history database %s: run %lld: its document "
                           "is not a complete zstd frame", d->h->name, d->run);
        return 1;
    }
    char what[1100];
    snprintf(what, sizeof what, "history database %s: run %lld", d->h->name, d->run);
    if (size + gv_json_held() > gv_json_budget()) { /* its text alone does not fit */
        d->rc = gv_err_set(d->err, GV_E_NOMEM, "%s: the document needs more than %llu MB of "
                           "memory to load (limit %zu MB)", what, size >> 20,
                           gv_json_budget() >> 20);
        return 1;
    }
    char *buf = malloc(size + 1);
    if (!buf) {
        d->rc = gv_err_set(d->err, GV_E_NOMEM, "out of memory");
        return 1;
    }
    size_t got = ZSTD_decompress(buf, size, v[0].b, v[0].n);
    char sha[65];
    if (ZSTD_isError(got) || got != size) {
        d->rc = gv_err_set(d->err, GV_E_FORMAT, "history database %s: run %lld: its document "
                           "does not decompress: %s", d->h->name, d->run,
                           ZSTD_isError(got) ? ZSTD_getErrorName(got) : "short");
    } else if (gv_sha256_buf_hex(buf, got, sha), strcmp(sha, v[1].s)) {
        d->rc = gv_err_set(d->err, GV_E_FORMAT, "history database %s: run %lld: its document "
                           "does not match its sha256", d->h->name, d->run);
    } else {
        json_error_t je;
        gv_json_load_begin(got); /* within the memory budget for documents */
        d->doc = json_loadb(buf, got, 0, &je);
        if (gv_json_load_end(what, GV_OK, d->err) == GV_E_NOMEM) {
            json_decref(d->doc);
            d->doc = NULL;
            d->rc = GV_E_NOMEM;
        } else if (!d->doc) {
            d->rc = gv_err_set(d->err, GV_E_FORMAT, "history database %s: run %lld: its "
                               "document is not JSON: %s", d->h->name, d->run, je.text);
        }
    }
    free(buf);
    return d->rc ? 1 : 0;
}

static int load_doc(struct gv_history *h, long long run, json_t **doc, struct gv_err *err)
{
    struct docrow d = {h, run, NULL, 0, 0, err};
    struct gv_hv p[] = {I(run)};
    int rc = h->ops->query(h->conn, "SELECT data, sha256, encoding FROM documents WHERE "
                           "run_id = ?", p, 1, doc_row, &d, err);
    if (d.rc)
        return d.rc;
    if (rc)
        return rc;
    if (!d.found)
        return gv_err_set(err, GV_E_FORMAT, "history database %s: run %lld has no document",
                          h->name, run);
    *doc = d.doc;
    return GV_OK;
}

static int one_summary(struct gv_history *h, const char *sql, const struct gv_hv *p, int np,
                       json_t **summary, struct gv_err *err)
{
    json_t *a = json_array();
    int rc = h->ops->query(h->conn, sql, p, np, append_summary, a, err);
    if (!rc && json_array_size(a) == 0)
        rc = GV_E_NOTFOUND;
    if (!rc)
        *summary = json_incref(json_array_get(a, 0));
    json_decref(a);
    return rc;
}

int gv_history_show(struct gv_history *h, int64_t run, json_t **summary, json_t **doc,
                    struct gv_err *err)
{
    struct gv_hv p[] = {I(run)};
    json_t *s = NULL;
    char sql[4096];
    snprintf(sql, sizeof sql, SUMMARY_SELECT "%s WHERE id = ?", runs_of(h));
    int rc = one_summary(h, sql, p, 1, &s, err);
    if (rc == GV_E_NOTFOUND)
        return gv_err_set(err, GV_E_NOTFOUND, "history database %s has no run %lld", h->name,
                          (long long)run);
    if (rc)
        return rc;
    if (doc && (rc = load_doc(h, run, doc, err))) {
        json_decref(s);
        return rc;
    }
    *summary = s;
    return GV_OK;
}

/* The run sql selects (the newest that passed), its summary and, when doc is
 * not NULL, its document; what/name say whose run it is in the message. */
static int newest_pass(struct gv_history *h, const char *sql, const struct gv_hv *p, int np,
                       const char *what, const char *name, json_t **summary, json_t **doc,
                       struct gv_err *err)
{
    json_t *s = NULL;
    int rc = one_summary(h, sql, p, np, &s, err);
    if (rc == GV_E_NOTFOUND)
        return gv_err_set(err, GV_E_NOTFOUND, "history database %s: %s %s has no run that "
                          "passed", h->name, what, name);
    if (rc)
        return rc;
    long long id = json_integer_value(json_object_get(s, "id"));
    if (doc && (rc = load_doc(h, id, doc, err))) {
        json_decref(s);
        return rc;
    }
    *summary = s;
    return GV_OK;
}

int gv_history_good(struct gv_history *h, const char *machine,
                    const struct gv_history_ident *ident, json_t **summary, json_t **doc,
                    struct gv_err *err)
{
    char key[300];
    struct gv_hv p[3];
    const char *cond;
    if (machine && *machine) {
        cond = "(hostname = ? OR machine_id = ? OR machine_key = ?)";
        p[0] = p[1] = p[2] = T(machine);
    } else {
        /* this machine: by its machine id where it has one, else its hostname */
        if (ident->machine_id[0])
            snprintf(key, sizeof key, "id:%s", ident->machine_id);
        else
            snprintf(key, sizeof key, "host:%s", ident->hostname);
        cond = "(machine_key = ? OR (machine_id IS NULL AND hostname = ?) OR machine_key = ?)";
        p[0] = T(key);
        p[1] = T(ident->hostname);
        p[2] = T(key);
        machine = ident->hostname;
    }
    char sql[4096];
    /* a fleet comparison is of many machines, an odd node's run no state to go back
     * to: neither is a machine's last good run */
    snprintf(sql, sizeof sql, SUMMARY_SELECT "%s WHERE %s AND verdict = 'pass' AND experiment IS "
             "NULL AND kind <> 'fleet' AND node_class IS NULL ORDER BY created DESC, id DESC "
             "LIMIT 1", runs_of(h), cond);
    return newest_pass(h, sql, p, 3, "machine", machine, summary, doc, err);
}

int gv_history_good_image(struct gv_history *h, const char *image, json_t **summary,
                          json_t **doc, struct gv_err *err)
{
    struct where w;
    memset(&w, 0, sizeof w);
    where_image(&w, image);
    char sql[4096];
    snprintf(sql, sizeof sql, SUMMARY_SELECT "%s WHERE verdict = 'pass' AND experiment IS NULL "
             "AND kind <> 'fleet'%s ORDER BY created DESC, id DESC LIMIT 1", runs_of(h), w.sql);
    return newest_pass(h, sql, w.p, w.np, "image", image, summary, doc, err);
}

/* ---------- the matrix ---------- */

struct mrow {
    char stack[900];
    long long runs, machines, passes, failures;
    char first[32], last[32];
};

struct mrows {
    struct mrow *r;
    size_t n, cap;
};

static const char *text_of(const struct gv_hv *v)
{
    return v->type == GV_HV_TEXT ? v->s : "";
}

static long long int_of(const struct gv_hv *v)
{
    return v->type == GV_HV_INT ? v->i : v->type == GV_HV_REAL ? (long long)v->d
         : v->type == GV_HV_TEXT ? strtoll(v->s, NULL, 10) : 0;
}

static int mrow_add(void *ud, int n, const struct gv_hv *v)
{
    struct mrows *m = ud;
    if (n < 7)
        return 0;
    if (m->n == m->cap) {
        size_t cap = m->cap ? m->cap * 2 : 64;
        struct mrow *r = realloc(m->r, cap * sizeof *r);
        if (!r)
            return GV_E_NOMEM;
        m->r = r;
        m->cap = cap;
    }
    struct mrow *r = &m->r[m->n++];
    put(r->stack, sizeof r->stack, text_of(&v[0]));
    r->runs = int_of(&v[1]);
    r->machines = int_of(&v[2]);
    r->passes = int_of(&v[3]);
    r->failures = int_of(&v[4]);
    put(r->first, sizeof r->first, text_of(&v[5]));
    put(r->last, sizeof r->last, text_of(&v[6]));
    return 0;
}

static json_t *text_or_null(const struct gv_hv *v)
{
    return v->type == GV_HV_TEXT && v->s[0] ? json_string(v->s) : json_null();
}

static int stack_cols(void *ud, int n, const struct gv_hv *v)
{
    json_t *row = ud;
    static const char *const names[] = {"gpu_model", "gpu_arch", "kernel", "driver", "rocm",
                                        "cuda", "torch"};
    for (int i = 0; i < 7 && i < n; i++)
        json_object_set_new(row, names[i], i == 0 ? json_string(text_of(&v[0]))
                                                  : text_or_null(&v[i]));
    if (n >= 10 && (text_of(&v[7])[0] || text_of(&v[8])[0])) { /* none: a host's or a root's */
        json_t *image = json_object();
        json_object_set_new(image, "manifest_digest", text_or_null(&v[7]));
        json_object_set_new(image, "config_digest", text_or_null(&v[8]));
        json_object_set_new(image, "tag", text_or_null(&v[9]));
        json_object_set_new(row, "image", image);
    }
    return 1; /* one row is enough */
}

static int worst_row(void *ud, int n, const struct gv_hv *v)
{
    json_t *w = ud;
    if (n < 3)
        return 1;
    json_object_set_new(w, "case", text_or_null(&v[0]));
    json_object_set_new(w, "bits_lost", v[1].type == GV_HV_REAL ? json_real(v[1].d)
                                        : v[1].type == GV_HV_INT ? json_real((double)v[1].i)
                                                                 : json_null());
    json_object_set_new(w, "run", json_integer(int_of(&v[2])));
    return 1;
}

static int timeline_row(void *ud, int n, const struct gv_hv *v)
{
    json_t *a = ud;
    if (n < 4)
        return 0;
    json_t *e = json_object();
    json_object_set_new(e, "time", json_string(text_of(&v[0])));
    json_object_set_new(e, "machine", json_string(text_of(&v[1])));
    json_object_set_new(e, "run", json_integer(int_of(&v[2])));
    json_object_set_new(e, "verdict", json_string(text_of(&v[3])));
    json_array_insert_new(a, 0, e); /* newest first from the query: oldest first here */
    return 0;
}

static int matrix_row(struct gv_history *h, const struct mrow *m, const struct where *w,
                      json_t *row, struct gv_err *err)
{
    struct gv_hv p[20];
    p[0] = T(m->stack);
    for (int i = 0; i < w->np; i++)
        p[1 + i] = w->p[i];
    char sql[4096];
    /* the image's tag: the newest run's */
    snprintf(sql, sizeof sql, "SELECT gpu_model, gpu_arch, kernel, driver, rocm, cuda, torch, "
             "image_manifest_digest, image_config_digest, image_tag FROM %s WHERE stack_key = ? "
             "AND verdict IS NOT NULL%s ORDER BY created DESC, id DESC LIMIT 1", runs_of(h),
             w->sql);
    int rc = h->ops->query(h->conn, sql, p, 1 + w->np, stack_cols, row, err);
    if (rc < 0)
        return rc;
    json_object_set_new(row, "runs", json_integer(m->runs));
    json_object_set_new(row, "machines", json_integer(m->machines));
    json_object_set_new(row, "passes", json_integer(m->passes));
    json_object_set_new(row, "failures", json_integer(m->failures));
    json_object_set_new(row, "first_seen", json_string(m->first));
    json_object_set_new(row, "last_seen", json_string(m->last));
    json_t *worst = json_object();
    json_object_set_new(worst, "case", json_null());
    json_object_set_new(worst, "bits_lost", json_null());
    json_object_set_new(worst, "run", json_null());
    json_object_set_new(row, "worst", worst);
    snprintf(sql, sizeof sql, "SELECT worst_case, worst_bits_lost, id FROM %s WHERE "
             "stack_key = ? AND verdict IS NOT NULL AND worst_bits_lost IS NOT NULL%s "
             "ORDER BY worst_bits_lost DESC, id DESC LIMIT 1", runs_of(h), w->sql);
    rc = h->ops->query(h->conn, sql, p, 1 + w->np, worst_row, worst, err);
    if (rc < 0)
        return rc;
    json_t *tl = json_array();
    json_object_set_new(row, "timeline", tl);
    snprintf(sql, sizeof sql, "SELECT created, hostname, id, verdict FROM %s WHERE "
             "stack_key = ? AND verdict IS NOT NULL%s ORDER BY created DESC, id DESC LIMIT 100",
             runs_of(h), w->sql);
    rc = h->ops->query(h->conn, sql, p, 1 + w->np, timeline_row, tl, err);
    return rc < 0 ? rc : GV_OK;
}

int gv_history_matrix(struct gv_history *h, const struct gv_history_filter *f, json_t **out,
                      struct gv_err *err)
{
    struct where w;
    where_of(f, &w);
    where_add(&w, "kind <> 'fleet'"); /* a comparison of many nodes is no stack's run */
    char sql[4096];
    snprintf(sql, sizeof sql,
             "SELECT stack_key, COUNT(*), COUNT(DISTINCT machine_key),"
             " SUM(CASE WHEN verdict = 'pass' THEN 1 ELSE 0 END),"
             " SUM(CASE WHEN verdict = 'fail' THEN 1 ELSE 0 END), MIN(created), MAX(created)"
             " FROM %s WHERE verdict IS NOT NULL%s GROUP BY stack_key"
             " ORDER BY MAX(created) DESC, stack_key", runs_of(h), w.sql);
    struct mrows m = {0};
    int rc = h->ops->query(h->conn, sql, w.p, w.np, mrow_add, &m, err);
    if (rc == GV_E_NOMEM)
        gv_err_set(err, GV_E_NOMEM, "out of memory");
    json_t *doc = json_object(), *rows = json_array();
    json_object_set_new(doc, "schema", json_string(GV_MATRIX_SCHEMA));
    json_object_set_new(doc, "schema_version", json_integer(GV_MATRIX_SCHEMA_VERSION));
    json_object_set_new(doc, "db", json_string(h->name));
    gv_json_set_utc_now(doc, "generated");
    json_t *fl = json_object();
    json_object_set_new(fl, "gpu", f && f->gpu ? json_string(f->gpu) : json_null());
    json_object_set_new(fl, "since", f && f->since ? json_string(f->since) : json_null());
    json_object_set_new(fl, "torch", f && f->torch ? json_string(f->torch) : json_null());
    if (f && f->image) /* only when asked: the filters of a document without it stay as they were */
        json_object_set_new(fl, "image", json_string(f->image));
    json_object_set_new(doc, "filters", fl);
    json_object_set_new(doc, "rows", rows);
    for (size_t i = 0; !rc && i < m.n; i++) {
        json_t *row = json_object();
        json_array_append_new(rows, row);
        rc = matrix_row(h, &m.r[i], &w, row, err);
    }
    free(m.r);
    if (rc) {
        json_decref(doc);
        return rc;
    }
    *out = doc;
    return GV_OK;
}

/* ---------- for history_fleet.c ---------- */

int gv_hist_query(struct gv_history *h, const char *sql, const struct gv_hv *p, int np,
                  gv_hrow_fn fn, void *ud, struct gv_err *err)
{
    return h->ops->query(h->conn, sql, p, np, fn, ud, err);
}

const char *gv_hist_runs(const struct gv_history *h)
{
    return runs_of(h);
}

int gv_hist_load_doc(struct gv_history *h, long long run, json_t **doc, struct gv_err *err)
{
    return load_doc(h, run, doc, err);
}

/* ---------- integrity ---------- */

int gv_history_integrity(struct gv_history *h, struct gv_err *err)
{
    int rc = h->ops->integrity(h->conn, err);
    if (rc)
        return rc;
    struct one_int o = {0};
    rc = h->ops->query(h->conn, "SELECT COUNT(*) FROM runs r LEFT JOIN documents d ON "
                       "d.run_id = r.id WHERE d.run_id IS NULL", NULL, 0, one_int_row, &o, err);
    if (rc)
        return rc;
    if (o.v)
        return gv_err_set(err, GV_E_FORMAT, "history database %s: %lld run(s) without their "
                          "document", h->name, o.v);
    o.found = 0;
    o.v = 0;
    rc = h->ops->query(h->conn, "SELECT COUNT(*) FROM documents d LEFT JOIN runs r ON "
                       "d.run_id = r.id WHERE r.id IS NULL", NULL, 0, one_int_row, &o, err);
    if (!rc && o.v)
        return gv_err_set(err, GV_E_FORMAT, "history database %s: %lld document(s) without "
                          "their run", h->name, o.v);
    return rc;
}
