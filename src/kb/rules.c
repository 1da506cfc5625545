/* The doctor rule list (the areas' tables joined), the runner, the report document, and the snapshot
 * helpers the checks share. */
#include "kb/rules.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kb/rules_impl.h"

/* The areas, in report order: within one severity, findings come in this order. */
static const struct {
    const struct gv_rule *rules;
    const size_t *n;
} areas[] = {
    {gv_rules_gpu, &gv_rules_gpu_n},
    {gv_rules_torch, &gv_rules_torch_n},
    {gv_rules_rocm, &gv_rules_rocm_n},
    {gv_rules_env, &gv_rules_env_n},
    {gv_rules_image, &gv_rules_image_n},
};

size_t gv_rule_count(void)
{
    size_t n = 0;
    for (size_t a = 0; a < sizeof areas / sizeof areas[0]; a++)
        n += *areas[a].n;
    return n;
}

const struct gv_rule *gv_rule_at(size_t i)
{
    for (size_t a = 0; a < sizeof areas / sizeof areas[0]; a++) {
        if (i < *areas[a].n)
            return &areas[a].rules[i];
        i -= *areas[a].n;
    }
    return NULL;
}

const struct gv_rule *gv_rule_find(const char *id)
{
    const struct gv_rule *r;
    for (size_t i = 0; id && (r = gv_rule_at(i)); i++)
        if (!strcmp(r->id, id))
            return r;
    return NULL;
}


const char *gv_severity_name(enum gv_severity s)
{
    return s == GV_SEV_ERROR ? "error" : s == GV_SEV_WARNING ? "warning" : "info";
}

static int severity_rank(const json_t *f)
{
    const char *s = jstr(f, "severity");
    return !s ? 0 : !strcmp(s, "error") ? 2 : !strcmp(s, "warning") ? 1 : 0;
}

/* Stable sort: checked findings by severity (most severe first), then the
 * "cannot check" notes. */
static json_t *sorted(json_t *findings)
{
    json_t *out = json_array();
    size_t i;
    json_t *f;
    for (int rank = 2; rank >= 0; rank--)
        json_array_foreach(findings, i, f)
            if (severity_rank(f) == rank && !json_is_false(json_object_get(f, "checked")))
                json_array_append(out, f);
    json_array_foreach(findings, i, f)
        if (json_is_false(json_object_get(f, "checked")))
            json_array_append(out, f);
    json_decref(findings);
    return out;
}

json_t *gv_doctor_run_rule_host(const json_t *snapshot, const json_t *host,
                                const struct gv_rule *rule)
{
    struct gv_rule_ctx c = {.snap = snapshot, .host = host, .out = json_array(), .rule = rule};
    rule->check(&c);
    return c.out;
}

json_t *gv_doctor_run_rule(const json_t *snapshot, const struct gv_rule *rule)
{
    return gv_doctor_run_rule_host(snapshot, NULL, rule);
}

json_t *gv_doctor_run(const json_t *snapshot) { return gv_doctor_run_host(snapshot, NULL); }

json_t *gv_doctor_run_host(const json_t *snapshot, const json_t *host)
{
    json_t *all = json_array();
    const struct gv_rule *r;
    for (size_t i = 0; (r = gv_rule_at(i)); i++) {
        json_t *one = gv_doctor_run_rule_host(snapshot, host, r);
        json_array_extend(all, one);
        json_decref(one);
    }
    return sorted(all);
}

json_t *gv_doctor_report(const json_t *snapshot, const char *snapshot_source)
{
    return gv_doctor_report_host(snapshot, snapshot_source, NULL, NULL);
}

json_t *gv_doctor_report_host(const json_t *snapshot, const char *snapshot_source,
                              const json_t *host, const char *host_source)
{
    json_t *doc = json_object();
    json_object_set_new(doc, "schema", json_string(GV_DOCTOR_SCHEMA));
    json_object_set_new(doc, "schema_version", json_integer(GV_DOCTOR_SCHEMA_VERSION));
    json_object_set_new(doc, "gpuvet_version", json_string(GPUVET_VERSION));
    json_t *snap = json_object();
    json_object_set_new(snap, "source", json_string(snapshot_source ? snapshot_source : "live"));
    const char *root = jstr(snapshot, "root"), *created = jstr(snapshot, "created");
    if (root)
        json_object_set_new(snap, "root", json_string(root));
    if (created)
        json_object_set_new(snap, "created", json_string(created));
    json_object_set_new(doc, "snapshot", snap);
    if (host) {
        json_t *h = json_object();
        json_object_set_new(h, "source", json_string(host_source ? host_source : "live"));
        if (jstr(host, "created"))
            json_object_set_new(h, "created", json_string(jstr(host, "created")));
        json_object_set_new(doc, "host_snapshot", h);
    }

    json_t *findings = gv_doctor_run_host(snapshot, host);
    int counts[3] = {0, 0, 0}, unchecked = 0;
    size_t i;
    json_t *f;
    json_array_foreach(findings, i, f) {
        if (json_is_false(json_object_get(f, "checked")))
            unchecked++;
        else
            counts[severity_rank(f)]++;
    }
    json_t *sum = json_object();
    json_object_set_new(sum, "errors", json_integer(counts[2]));
    json_object_set_new(sum, "warnings", json_integer(counts[1]));
    json_object_set_new(sum, "info", json_integer(counts[0]));
    json_object_set_new(sum, "not_checked", json_integer(unchecked));
    json_object_set_new(sum, "rules", json_integer((json_int_t)gv_rule_count()));
    json_object_set_new(doc, "summary", sum);
    json_object_set_new(doc, "findings", findings);
    return doc;
}

/* ---- finding construction ---- */

json_t *finding(struct gv_rule_ctx *c, enum gv_severity sev, const char *fmt, ...)
{
    char title[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(title, sizeof title, fmt, ap);
    va_end(ap);
    json_t *f = json_object();
    json_object_set_new(f, "rule", json_string(c->rule->id));
    json_object_set_new(f, "severity", json_string(gv_severity_name(sev)));
    json_t *t = json_string(title);
    json_object_set_new(f, "title", t ? t : json_string("(title not valid UTF-8)"));
    json_object_set_new(f, "evidence", json_array());
    json_object_set_new(f, "fix", json_array());
    json_object_set_new(f, "reference", json_string(c->rule->reference));
    json_array_append_new(c->out, f);
    return f;
}

void evidence(json_t *f, const char *path, const json_t *value)
{
    json_t *e = json_object();
    json_object_set_new(e, "path", json_string(path));
    json_object_set_new(e, "value", value ? json_deep_copy(value) : json_null());
    json_array_append_new(json_object_get(f, "evidence"), e);
}

void evidence_str(json_t *f, const char *path, const char *value)
{
    json_t *v = value ? json_string(value) : json_null();
    if (!v)
        v = json_string("(not valid UTF-8)");
    evidence(f, path, v);
    json_decref(v);
}

void evidencef(json_t *f, const char *path, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    evidence_str(f, path, buf);
}

void fix(json_t *f, const char *fmt, ...)
{
    char buf[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    json_t *s = json_string(buf);
    if (s)
        json_array_append_new(json_object_get(f, "fix"), s);
}

void reference(json_t *f, const char *ref)
{
    char buf[512];
    /* kb rows cite docs/facts/rocm-facts.md by section ("§6 ..."): say which document */
    if (ref && !strncmp(ref, "§", strlen("§"))) {
        snprintf(buf, sizeof buf, "docs/facts/rocm-facts.md %s", ref);
        ref = buf;
    }
    json_object_set_new(f, "reference", json_string(ref ? ref : ""));
}

/* ---- snapshot access ---- */

const char *jstr(const json_t *o, const char *key) { return json_string_value(json_object_get(o, key)); }
int jbool(const json_t *o, const char *key) { return json_is_true(json_object_get(o, key)); }
int jhas_false(const json_t *o, const char *key) { return json_is_false(json_object_get(o, key)); }

const json_t *jarr(const json_t *o, const char *key)
{
    json_t *a = json_object_get(o, key);
    return json_is_array(a) ? a : NULL;
}

const json_t *jobj(const json_t *o, const char *key)
{
    json_t *a = json_object_get(o, key);
    return json_is_object(a) ? a : NULL;
}

const json_t *section(const json_t *snap, const char *name)
{
    const json_t *s = jobj(snap, name);
    return s && jbool(s, "collected") ? s : NULL;
}

const json_t *need(struct gv_rule_ctx *c, const char *name)
{
    const json_t *s = section(c->snap, name);
    if (s || c->noted_missing)
        return s;
    c->noted_missing = 1;
    const json_t *raw = jobj(c->snap, name);
    const char *reason = raw ? jstr(raw, "reason") : "section absent";
    json_t *f = finding(c, GV_SEV_INFO, "cannot check: %s not collected (%s)", name,
                        reason ? reason : "no reason given");
    json_object_set_new(f, "checked", json_false());
    evidence(f, name, raw);
    return NULL;
}

int is_vendor(const json_t *dev, const char *vendor)
{
    const char *v = jstr(dev, "vendor");
    if (v)
        return !strcmp(v, vendor);
    const char *id = jstr(dev, "vendor_id");
    return id && !strcmp(id, !strcmp(vendor, "amd") ? "0x1002" : "0x10de");
}

const char *dev_gfx(const json_t *dev, char *buf, size_t size)
{
    const json_t *kfd = jobj(dev, "kfd");
    const char *g = jstr(kfd, "gfx_target");
    if (g && !strncmp(g, "gfx", 3)) {
        snprintf(buf, size, "%.*s", (int)strcspn(g, ":"), g); /* drop ":sramecc+:xnack-" */
        return buf;
    }
    json_t *v = json_object_get(kfd, "gfx_target_version");
    if (json_is_integer(v) && json_integer_value(v) > 0 && json_integer_value(v) < 640000) {
        long n = (long)json_integer_value(v);
        kb_gfx_name((unsigned)(n / 10000 % 100), (unsigned)(n / 100 % 100), (unsigned)(n % 100),
                    buf, size);
        return buf;
    }
    return NULL;
}

int count_gpus(const json_t *snap, const char *vendor)
{
    const json_t *g = section(snap, "gpus");
    if (!g)
        return -1;
    int n = 0;
    size_t i;
    json_t *d;
    json_array_foreach(jarr(g, "devices"), i, d)
        n += is_vendor(d, vendor);
    return n;
}

int uses_stack(const json_t *snap, const char *kind)
{
    size_t i;
    json_t *x;
    json_array_foreach(jarr(section(snap, "stacks"), "installs"), i, x)
        if (jstr(x, "kind") && !strcmp(jstr(x, "kind"), kind))
            return 1;
    json_array_foreach(jarr(section(snap, "python"), "environments"), i, x) {
        const json_t *t = jobj(x, "torch");
        if (jstr(t, !strcmp(kind, "rocm") ? "hip" : "cuda") ||
            (jstr(t, "build") && !strcmp(jstr(t, "build"), kind)))
            return 1;
    }
    return 0;
}

int amd_compute_gpus(const json_t *snap)
{
    int amd = count_gpus(snap, "amd");
    if (amd <= 0 || count_gpus(snap, "nvidia") == 0 || uses_stack(snap, "rocm"))
        return amd;
    int n = 0;
    size_t i;
    json_t *d;
    char gfx[32];
    json_array_foreach(jarr(section(snap, "gpus"), "devices"), i, d) {
        if (!is_vendor(d, "amd") || !dev_gfx(d, gfx, sizeof gfx))
            continue;
        const struct kb_gpu *g = kb_gpu_by_gfx(gfx);
        n += !(g && g->apu);
    }
    return n;
}

const char *env_get(const json_t *snap, const char *name, char *path, size_t size)
{
    const json_t *e = section(snap, "environment");
    const char *v = jstr(jobj(e, "variables"), name);
    if (v) {
        snprintf(path, size, "environment.variables.%s", name);
        return v;
    }
    size_t i;
    json_t *p;
    json_array_foreach(jarr(e, "profile_d"), i, p) {
        v = jstr(jobj(p, "sets"), name);
        if (v) {
            snprintf(path, size, "environment.profile_d[%zu].sets.%s (%s)", i, name,
                     jstr(p, "path") ? jstr(p, "path") : "?");
            return v;
        }
    }
    return NULL;
}

const char *profile_file(const char *path, char *buf, size_t size)
{
    const char *open = path ? strstr(path, " (") : NULL;
    if (!open || !strstr(path, "profile_d"))
        return NULL;
    snprintf(buf, size, "%.*s", (int)strcspn(open + 2, ")"), open + 2);
    return buf;
}

void env_each(const json_t *snap,
              int (*fn)(const char *name, const char *value, const char *path, void *arg),
              void *arg)
{
    const json_t *e = section(snap, "environment");
    char path[512];
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)jobj(e, "variables"), k, v) {
        if (!json_is_string(v))
            continue;
        snprintf(path, sizeof path, "environment.variables.%s", k);
        if (fn(k, json_string_value(v), path, arg))
            return;
    }
    size_t i;
    json_t *p;
    json_array_foreach(jarr(e, "profile_d"), i, p) {
        json_object_foreach((json_t *)jobj(p, "sets"), k, v) {
            if (!json_is_string(v))
                continue;
            /* the process value wins: skip names already seen there */
            if (json_object_get(jobj(e, "variables"), k))
                continue;
            snprintf(path, sizeof path, "environment.profile_d[%zu].sets.%s (%s)", i, k,
                     jstr(p, "path") ? jstr(p, "path") : "?");
            if (fn(k, json_string_value(v), path, arg))
                return;
        }
    }
}

static int is_rocm_install(const json_t *in)
{
    const char *k = jstr(in, "kind");
    return k && !strcmp(k, "rocm");
}

const json_t *default_rocm(const json_t *snap, int *idx)
{
    const json_t *st = section(snap, "stacks");
    const json_t *only = NULL;
    int count = 0, only_idx = -1;
    size_t i;
    json_t *in;
    json_array_foreach(jarr(st, "installs"), i, in) {
        if (!is_rocm_install(in))
            continue;
        if (jbool(in, "is_default")) {
            if (idx)
                *idx = (int)i;
            return in;
        }
        count++;
        only = in;
        only_idx = (int)i;
    }
    if (count == 1) {
        if (idx)
            *idx = only_idx;
        return only;
    }
    return NULL;
}

static int path_under(const char *path, const char *prefix)
{
    size_t n = prefix ? strlen(prefix) : 0;
    while (n > 1 && prefix[n - 1] == '/')
        n--;
    return n > 1 && path && !strncmp(path, prefix, n) && (path[n] == '/' || path[n] == '\0');
}

const json_t *install_of_path(const json_t *snap, const char *path)
{
    const json_t *st = section(snap, "stacks");
    const json_t *best = NULL;
    size_t best_len = 0, i;
    json_t *in;
    json_array_foreach(jarr(st, "installs"), i, in) {
        if (!is_rocm_install(in))
            continue;
        const char *dirs[2] = {jstr(in, "prefix"), jstr(in, "libdir")};
        for (int k = 0; k < 2; k++)
            if (dirs[k] && strcmp(dirs[k], "/usr") != 0 && path_under(path, dirs[k]) &&
                strlen(dirs[k]) > best_len) {
                best = in;
                best_len = strlen(dirs[k]);
            }
    }
    /* /opt/rocm/... belongs to the install the link resolves to */
    if (!best && path_under(path, "/opt/rocm"))
        best = default_rocm(snap, NULL);
    return best;
}

const char *release_of_path(const json_t *snap, const char *path)
{
    const json_t *libs = section(snap, "libraries");
    size_t i;
    json_t *it;
    json_array_foreach(jarr(libs, "items"), i, it) {
        const char *p = jstr(it, "path");
        int hit = p && path && !strcmp(p, path);
        size_t j;
        json_t *l;
        json_array_foreach(jarr(it, "links"), j, l)
            hit |= json_is_string(l) && path && !strcmp(json_string_value(l), path);
        if (hit && jstr(it, "rocm_release"))
            return jstr(it, "rocm_release");
    }
    const json_t *in = install_of_path(snap, path);
    return in ? jstr(in, "version") : NULL;
}

const char *torch_rocm(const json_t *torch, char *buf, size_t size)
{
    const char *label = kb_local_label(jstr(torch, "version"));
    if (label && !strncmp(label, "rocm", 4) && kb_major(label + 4) >= 0) {
        snprintf(buf, size, "%s", label + 4);
        return buf;
    }
    return kb_rocm_from_hip(jstr(torch, "hip"), buf, size);
}

const char *pip_cmd(const json_t *env, char *buf, size_t size)
{
    const char *py = jstr(env, "interpreter");
    if (py && !strpbrk(py, " \t'\"$`\\;&|<>()"))
        snprintf(buf, size, "%s -m pip", py);
    else
        snprintf(buf, size, "python3 -m pip");
    return buf;
}

const char *torch_targets(const json_t *torch, char *buf, size_t size, int *from_kb)
{
    const json_t *gt = jobj(torch, "gpu_targets");
    if (gt && jbool(gt, "collected") && jarr(gt, "targets")) {
        buf[0] = '\0';
        size_t i, used = 0;
        json_t *t;
        json_array_foreach(jarr(gt, "targets"), i, t) {
            if (!json_is_string(t))
                continue;
            int n = snprintf(buf + used, size - used, "%s%.*s", used ? ";" : "",
                             (int)strcspn(json_string_value(t), ":"), json_string_value(t));
            if (n < 0 || (size_t)n >= size - used)
                break;
            used += (size_t)n;
        }
        *from_kb = 0;
        return buf;
    }
    char rocm[32], pub[64];
    const struct kb_wheel_arch *w =
        kb_wheel_arch(kb_public_version(jstr(torch, "version"), pub, sizeof pub),
                      torch_rocm(torch, rocm, sizeof rocm));
    if (!w)
        return NULL;
    *from_kb = 1;
    snprintf(buf, size, "%s", w->archs);
    return buf;
}
