/* Case-by-case comparison of two result files (see compare.h). */
#include "check/compare.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/sha256.h"
#include "num/fp.h"
#include "base/json.h"
#include "kb/fpmode.h"

static const char *const change_names[GV_CH_COUNT] = {
    "identical",     "noise",          "improved",      "degraded",
    "newly_failing", "newly_passing",  "still_failing", "not_run",
    "missing_before", "missing_after", "inputs_differ",
};

const char *gv_change_name(enum gv_change c)
{
    return (unsigned)c < GV_CH_COUNT ? change_names[c] : "?";
}

int gv_change_flagged(enum gv_change c)
{
    return c == GV_CH_DEGRADED || c == GV_CH_NEWLY_FAILING;
}

static const struct {
    const char *name;
    const char *note;
} env_notes[] = {
    {"emulate", "gpuvet's CPU emulation (a testing aid) of a GPU stack's numerics"},
    {"NVIDIA_TF32_OVERRIDE",
     "1 lets cuBLAS/cuDNN use TF32 for fp32 work (10-bit mantissa inputs); 0 forbids it"},
    {"TORCH_ALLOW_TF32_CUBLAS_OVERRIDE", "1 forces TF32 in PyTorch fp32 matmuls"},
    {"HIPBLASLT_ALLOW_TF32", "1 lets hipBLASLt use TF32/XF32 for fp32 GEMMs (MI300)"},
    {"ROCBLAS_INTERNAL_FP16_ALT_IMPL",
     "1 makes rocBLAS fp16 GEMMs use bf16 MFMA on MI200 (3 significand bits lost)"},
    {"ROCBLAS_INTERNAL_FP16_ALT_IMPL_RNZ", "rounding of rocBLAS's fp16 alternate implementation"},
    {"MIOPEN_DEBUG_CONVOLUTION_ATTRIB_FP16_ALT_IMPL",
     "1 makes MIOpen fp16 convolutions use bf16 MFMA on MI200"},
    {"TORCH_BLAS_PREFER_HIPBLASLT", "switches PyTorch GEMMs between hipBLASLt and rocBLAS"},
    {"TORCH_BLAS_PREFER_CUBLASLT", "switches PyTorch GEMMs between cuBLASLt and cuBLAS"},
    {"CUBLAS_WORKSPACE_CONFIG", "cuBLAS workspace; affects run-to-run determinism"},
    {"CUBLAS_EMULATE_SINGLE_PRECISION", "1 lets cuBLAS emulate fp32 GEMMs with bf16x9"},
    {"CUBLAS_EMULATE_DOUBLE_PRECISION", "1 lets cuBLAS emulate fp64 GEMMs"},
    {"CUBLAS_EMULATION_STRATEGY", "when cuBLAS uses emulated fp32/fp64 GEMMs"},
    {"MIOPEN_TF32_OVERRIDE", "TF32 in MIOpen convolutions"},
    {"HSA_OVERRIDE_GFX_VERSION", "runs kernels built for another GPU architecture"},
    {"ROCBLAS_LAYER", "rocBLAS logging/tuning layer"},
    {"HIPBLASLT_TENSILE_LIBPATH", "which hipBLASLt kernel library is loaded"},
    {"ROCBLAS_TENSILE_LIBPATH", "which rocBLAS kernel library is loaded"},
    {"LD_LIBRARY_PATH", "decides which GPU library files are loaded"},
    {"LD_PRELOAD", "can replace GPU libraries"},
};

const char *gv_numerics_env_note(const char *name)
{
    for (size_t i = 0; i < sizeof env_notes / sizeof env_notes[0]; i++)
        if (!strcmp(env_notes[i].name, name))
            return env_notes[i].note;
    return NULL;
}

/* ---------- per case ---------- */

static double bits_of(const struct gv_result_case *r)
{
    /* no error at all: effective bits are capped by the format (metrics.h) */
    return isfinite(r->eff_bits) ? r->eff_bits : 64.0;
}

static int grew(double before, double after)
{
    if (isnan(after))
        return !isnan(before);
    return after > before + GV_NOISE_EOB && after > GV_NOISE_RATIO * before;
}

static enum gv_change judge_metrics(const struct gv_result_case *a, const struct gv_result_case *b,
                                    double *dbits)
{
    *dbits = bits_of(b) - bits_of(a);
    int worse = *dbits < -GV_NOISE_BITS || grew(a->err_over_bound, b->err_over_bound) ||
                b->nan_count > a->nan_count || b->inf_count > a->inf_count;
    int better = *dbits > GV_NOISE_BITS || grew(b->err_over_bound, a->err_over_bound) ||
                 b->nan_count < a->nan_count || b->inf_count < a->inf_count;
    if (worse)
        return GV_CH_DEGRADED;
    return better ? GV_CH_IMPROVED : GV_CH_NOISE;
}

static int ran(const struct gv_result_case *r)
{
    return r->verdict == GV_PASS || r->verdict == GV_FAIL;
}

static enum gv_change judge_case(const struct gv_result_case *a, const struct gv_result_case *b,
                                 double *dbits)
{
    *dbits = 0;
    if (strcmp(a->input_digest, b->input_digest) != 0 || strcmp(a->op, b->op) != 0 ||
        strcmp(a->out_dtype, b->out_dtype) != 0)
        return GV_CH_INPUTS_DIFFER;
    if (!ran(a) && !ran(b))
        return GV_CH_NOT_RUN;
    if (ran(a) && !ran(b))
        return GV_CH_NEWLY_FAILING;
    if (!ran(a))
        return b->verdict == GV_PASS ? GV_CH_NEWLY_PASSING : GV_CH_STILL_FAILING;
    if (a->verdict == GV_PASS && b->verdict == GV_FAIL)
        return GV_CH_NEWLY_FAILING;
    if (a->verdict == GV_FAIL && b->verdict == GV_PASS)
        return GV_CH_NEWLY_PASSING;
    if (!strcmp(a->output_digest, b->output_digest))
        return a->verdict == GV_FAIL ? GV_CH_STILL_FAILING : GV_CH_IDENTICAL;
    enum gv_change m = judge_metrics(a, b, dbits);
    if (a->verdict == GV_FAIL && m != GV_CH_DEGRADED)
        return GV_CH_STILL_FAILING;
    return m;
}

/* ---------- element-wise ---------- */

static int tensor_digest_ok(const struct gv_st_tensor *t, const char *digest)
{
    char hex[65];
    gv_sha256_buf_hex(t->data, t->nbytes, hex);
    return !strcmp(hex, digest);
}

static int elementwise(const struct gv_st_file *oa, const struct gv_st_file *ob,
                       struct gv_cmp_case *c, struct gv_err *err)
{
    const struct gv_st_tensor *ta = gv_safetensors_find(oa, c->id);
    const struct gv_st_tensor *tb = gv_safetensors_find(ob, c->id);
    if (!ta || !tb || !c->a->output_digest[0] || !c->b->output_digest[0])
        return GV_OK;
    if (!tensor_digest_ok(ta, c->a->output_digest))
        return gv_err_set(err, GV_E_FORMAT, "case %s: the saved outputs of the first file do "
                          "not match its result file (digest differs)", c->id);
    if (!tensor_digest_ok(tb, c->b->output_digest))
        return gv_err_set(err, GV_E_FORMAT, "case %s: the saved outputs of the second file do "
                          "not match its result file (digest differs)", c->id);
    if (ta->dtype != tb->dtype || ta->nbytes != tb->nbytes)
        return GV_OK;
    size_t esz = gv_dtype_size(ta->dtype), n = esz ? ta->nbytes / esz : 0;
    const unsigned char *pa = ta->data, *pb = tb->data;
    c->has_elem = 1;
    c->count = n;
    for (size_t i = 0; i < n; i++) {
        if (!memcmp(pa + i * esz, pb + i * esz, esz))
            continue;
        c->ndiff++;
        uint64_t u = gv_fp_ulp_distance(gv_fp_load(pa, ta->dtype, i),
                                        gv_fp_load(pb, tb->dtype, i), ta->dtype);
        if (u > c->max_ulp)
            c->max_ulp = u;
    }
    return GV_OK;
}

/* ---------- causes ---------- */

void gv_cmp_cause_add(struct gv_cmp_cause **causes, size_t *n, const char *kind, const char *name,
                      const char *before, const char *after, const char *change,
                      const char *note)
{
    struct gv_cmp_cause *m = realloc(*causes, (*n + 1) * sizeof *m);
    if (!m)
        return;
    *causes = m;
    struct gv_cmp_cause *c = &m[(*n)++];
    memset(c, 0, sizeof *c);
    snprintf(c->kind, sizeof c->kind, "%s", kind);
    snprintf(c->name, sizeof c->name, "%s", name);
    snprintf(c->before, sizeof c->before, "%s", before ? before : "");
    snprintf(c->after, sizeof c->after, "%s", after ? after : "");
    snprintf(c->change, sizeof c->change, "%s", change ? change : "");
    snprintf(c->note, sizeof c->note, "%s", note ? note : "");
}

void gv_cmp_cause_touch(struct gv_cmp_cause *k, const char *id)
{
    size_t used = strlen(k->touches);
    k->touched++;
    if (used + strlen(id) + 8 < sizeof k->touches)
        snprintf(k->touches + used, sizeof k->touches - used, "%s%s", used ? ", " : "", id);
    else if (!strstr(k->touches, "..."))
        snprintf(k->touches + used, sizeof k->touches - used, "%s", ", ...");
}

static void add_cause(struct gv_compare *o, const char *kind, const char *name,
                      const char *before, const char *after, const char *note)
{
    gv_cmp_cause_add(&o->causes, &o->ncauses, kind, name, before, after, NULL, note);
}

static void env_causes(const json_t *sa, const json_t *sb, struct gv_compare *o)
{
    const json_t *va = json_object_get(json_object_get(sa, "environment"), "variables");
    const json_t *vb = json_object_get(json_object_get(sb, "environment"), "variables");
    if (!json_is_object(va) || !json_is_object(vb))
        return; /* not collected on one side: nothing can be said */
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)va, k, v) {
        const char *x = json_string_value(v), *y = json_string_value(json_object_get(vb, k));
        if (!x)
            continue;
        if (!y || strcmp(x, y) != 0)
            add_cause(o, "environment", k, x, y, gv_numerics_env_note(k));
    }
    json_object_foreach((json_t *)vb, k, v) {
        const char *y = json_string_value(v);
        if (y && !json_object_get(va, k))
            add_cause(o, "environment", k, NULL, y, gv_numerics_env_note(k));
    }
}

/* "path version sha256:ab12cd34…; ..." of every library item with this logical name. */
static void lib_desc(const json_t *items, const char *name, char *out, size_t outsz)
{
    out[0] = '\0';
    size_t i, used = 0;
    json_t *it;
    json_array_foreach(items, i, it) {
        const char *n = json_string_value(json_object_get(it, "name"));
        if (!n || strcmp(n, name) != 0)
            continue;
        const char *ver = json_string_value(json_object_get(it, "version"));
        const char *path = json_string_value(json_object_get(it, "path"));
        const char *sha = json_string_value(json_object_get(it, "sha256"));
        int k = snprintf(out + used, outsz - used, "%s%s %s", used ? "; " : "",
                         path ? path : "?", ver ? ver : "(version unknown)");
        if (k > 0 && (size_t)k < outsz - used && sha)
            k += snprintf(out + used + k, outsz - used - (size_t)k, " sha256:%.8s\u2026", sha);
        if (k < 0 || (size_t)k >= outsz - used)
            break;
        used += (size_t)k;
    }
}

/* What kind of change a library's two descriptions are. */
static void lib_change(const json_t *ia, const json_t *ib, const char *name, char *out, size_t n)
{
    const char *va = NULL, *vb = NULL, *ha = NULL, *hb = NULL, *pa = NULL, *pb = NULL;
    size_t i;
    json_t *it;
    json_array_foreach(ia, i, it)
        if (!strcmp(json_string_value(json_object_get(it, "name")) ?: "", name)) {
            va = json_string_value(json_object_get(it, "version"));
            ha = json_string_value(json_object_get(it, "sha256"));
            pa = json_string_value(json_object_get(it, "path"));
        }
    json_array_foreach(ib, i, it)
        if (!strcmp(json_string_value(json_object_get(it, "name")) ?: "", name)) {
            vb = json_string_value(json_object_get(it, "version"));
            hb = json_string_value(json_object_get(it, "sha256"));
            pb = json_string_value(json_object_get(it, "path"));
        }
    out[0] = '\0';
    if (!pa || !pb)
        snprintf(out, n, "%s", !pa ? "added" : "removed");
    else if (va && vb && strcmp(va, vb))
        snprintf(out, n, "version changed");
    else if (ha && hb && strcmp(ha, hb))
        snprintf(out, n, "same version, different file");
    else if (strcmp(pa, pb))
        snprintf(out, n, "same version, other path");
}

static void lib_causes(const json_t *sa, const json_t *sb, struct gv_compare *o)
{
    const json_t *ia = json_object_get(json_object_get(sa, "libraries"), "items");
    const json_t *ib = json_object_get(json_object_get(sb, "libraries"), "items");
    if (!json_is_array(ia) || !json_is_array(ib))
        return;
    const json_t *sides[2] = {ia, ib};
    for (int s = 0; s < 2; s++) {
        size_t i;
        json_t *it;
        json_array_foreach((json_t *)sides[s], i, it) {
            const char *name = json_string_value(json_object_get(it, "name"));
            if (!name)
                continue;
            int seen = 0; /* report each name once */
            for (size_t j = 0; j < o->ncauses; j++)
                seen |= !strcmp(o->causes[j].kind, "library") && !strcmp(o->causes[j].name, name);
            if (seen)
                continue;
            char a[512], b[512];
            lib_desc(ia, name, a, sizeof a);
            lib_desc(ib, name, b, sizeof b);
            if (strcmp(a, b) != 0) {
                add_cause(o, "library", name, a[0] ? a : NULL, b[0] ? b : NULL, NULL);
                lib_change(ia, ib, name, o->causes[o->ncauses - 1].change,
                           sizeof o->causes[0].change);
            }
        }
    }
}

static int is_lib_array(const json_t *a)
{
    return json_is_array(a) && json_array_size(a) > 0 &&
           json_is_string(json_object_get(json_array_get(a, 0), "name"));
}

/* Two lists of {name, version, path} (a device's libraries): one cause per
 * name whose versions or files differ. */
static void lib_array_causes(const char *kind, const json_t *a, const json_t *b,
                             struct gv_compare *o)
{
    const json_t *sides[2] = {a, b};
    size_t first = o->ncauses;
    for (int s = 0; s < 2; s++) {
        size_t i;
        json_t *it;
        json_array_foreach((json_t *)sides[s], i, it) {
            const char *name = json_string_value(json_object_get(it, "name"));
            int seen = 0;
            for (size_t j = first; name && j < o->ncauses; j++)
                seen |= !strcmp(o->causes[j].name, name);
            if (!name || seen)
                continue;
            char x[512], y[512];
            lib_desc(a, name, x, sizeof x);
            lib_desc(b, name, y, sizeof y);
            if (strcmp(x, y) != 0) {
                add_cause(o, kind, name, x[0] ? x : NULL, y[0] ? y : NULL, NULL);
                lib_change(a, b, name, o->causes[o->ncauses - 1].change,
                           sizeof o->causes[0].change);
            }
        }
    }
}

/* A JSON value in words: strings as they are, arrays of scalars joined with
 * ", " ("(none)" when empty), other values as compact JSON. */
static char *words(const json_t *v)
{
    if (json_is_string(v))
        return strdup(json_string_value(v));
    if (json_is_array(v)) {
        size_t i, used = 0, cap = 64;
        json_t *x;
        char *out = malloc(cap);
        if (!out)
            return NULL;
        out[0] = '\0';
        if (!json_array_size(v)) {
            free(out);
            return strdup("(none)");
        }
        json_array_foreach(v, i, x) {
            char *w = json_is_string(x) ? strdup(json_string_value(x))
                                        : gv_json_dumps(x, JSON_ENCODE_ANY | JSON_COMPACT);
            if (!w)
                continue;
            size_t need = used + strlen(w) + 3;
            if (need > cap) {
                cap = need * 2;
                char *m = realloc(out, cap);
                if (!m) {
                    free(w);
                    break;
                }
                out = m;
            }
            used += (size_t)sprintf(out + used, "%s%s", i ? ", " : "", w);
            free(w);
        }
        return out;
    }
    return gv_json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
}

/* Every scalar leaf under an object, compared by its JSON text. */
static void leaf_causes(const char *kind, const char *prefix, const json_t *a, const json_t *b,
                        struct gv_compare *o, int depth)
{
    if (depth > 4)
        return;
    /* Process ids, timings and the like differ on every run: not causes. */
    const char *leaf = strrchr(prefix, '.') ? strrchr(prefix, '.') + 1 : prefix;
    size_t ll = strlen(leaf);
    if (!strcmp(leaf, "pid") || !strcmp(leaf, "seconds") || !strcmp(leaf, "created") ||
        (ll > 8 && !strcmp(leaf + ll - 8, "_seconds")) || !strcmp(prefix, "fp_mode"))
        return; /* fp_mode: one cause of its own (fp_mode_cause) */
    if ((is_lib_array(a) || is_lib_array(b)) && (!a || json_is_array(a)) &&
        (!b || json_is_array(b))) {
        json_t *empty = json_array();
        lib_array_causes("library", a ? a : empty, b ? b : empty, o);
        json_decref(empty);
        return;
    }
    if (json_is_object(a) && json_is_object(b)) {
        const char *k;
        json_t *v;
        char name[128];
        json_object_foreach((json_t *)a, k, v) {
            snprintf(name, sizeof name, "%s%s%s", prefix, prefix[0] ? "." : "", k);
            leaf_causes(kind, name, v, json_object_get(b, k), o, depth + 1);
        }
        json_object_foreach((json_t *)b, k, v) {
            if (json_object_get(a, k))
                continue;
            snprintf(name, sizeof name, "%s%s%s", prefix, prefix[0] ? "." : "", k);
            leaf_causes(kind, name, NULL, v, o, depth + 1);
        }
        return;
    }
    char *x = a ? words(a) : NULL;
    char *y = b ? words(b) : NULL;
    if ((x || y) && (!x || !y || strcmp(x, y) != 0))
        add_cause(o, kind, prefix, x, y, gv_numerics_env_note(leaf));
    free(x);
    free(y);
}

/* What computed a flagged case, when that differs (PyTorch's kernels, the
 * attention backend, cuBLAS or cuBLASLt ...). */
static void route_causes(struct gv_compare *o)
{
    for (size_t i = 0; i < o->n; i++) {
        const struct gv_cmp_case *c = &o->cases[i];
        if (!gv_change_flagged(c->status) || !c->a || !c->b || !strcmp(c->a->impl, c->b->impl))
            continue;
        add_cause(o, "route", c->id, c->a->impl[0] ? c->a->impl : NULL,
                  c->b->impl[0] ? c->b->impl : NULL, NULL);
    }
}

/* The same value, where "null" (a variable the device recorded as unset) is "". */
static int same_setting(const char *x, const char *y)
{
    x = strcmp(x, "null") ? x : "";
    y = strcmp(y, "null") ? y : "";
    return strcmp(x, y) == 0;
}

/* A device description that records an environment variable (cuda:0's
 * NVIDIA_TF32_OVERRIDE) repeats the environment's cause: the device's copy goes
 * when it says the same, so one change is listed once. */
static void drop_device_echoes(struct gv_cmp_cause *causes, size_t *n)
{
    size_t w = 0;
    for (size_t i = 0; i < *n; i++) {
        const struct gv_cmp_cause *c = &causes[i];
        int echo = 0;
        if (!strcmp(c->kind, "device")) {
            const char *leaf = strrchr(c->name, '.') ? strrchr(c->name, '.') + 1 : c->name;
            for (size_t j = 0; j < *n && !echo; j++)
                echo = !strcmp(causes[j].kind, "environment") && !strcmp(causes[j].name, leaf) &&
                       same_setting(causes[j].before, c->before) &&
                       same_setting(causes[j].after, c->after);
        }
        if (!echo)
            causes[w++] = *c;
    }
    *n = w;
}

/* A process that flushes subnormals where the other does not (kb/fpmode.h):
 * one cause, "device" "fp_mode", its sentence as the note. */
static void fp_mode_cause(const json_t *dev_a, const json_t *dev_b, struct gv_compare *o)
{
    struct kb_fp_mode ma, mb;
    char text[160], x[64], y[64];
    kb_fp_mode_read(dev_a, &ma);
    kb_fp_mode_read(dev_b, &mb);
    if (!kb_fp_mode_cause(&ma, &mb, text, sizeof text))
        return;
    snprintf(x, sizeof x, "ftz %s, daz %s", kb_flush_name(ma.ftz), kb_flush_name(ma.daz));
    snprintf(y, sizeof y, "ftz %s, daz %s", kb_flush_name(mb.ftz), kb_flush_name(mb.daz));
    add_cause(o, "device", "fp_mode", x, y, text);
}

static void find_causes(const struct gv_results *a, const struct gv_results *b,
                        struct gv_compare *o)
{
    leaf_causes("device", "", a->device, b->device, o, 0);
    fp_mode_cause(a->device, b->device, o);
    route_causes(o);
    env_causes(a->snapshot, b->snapshot, o);
    lib_causes(a->snapshot, b->snapshot, o);
    const json_t *ma = json_object_get(json_object_get(a->snapshot, "drivers"), "modules");
    const json_t *mb = json_object_get(json_object_get(b->snapshot, "drivers"), "modules");
    if (json_is_object(ma) && json_is_object(mb))
        leaf_causes("driver", "", ma, mb, o, 0);
    drop_device_echoes(o->causes, &o->ncauses);
}

void gv_compare_stack_causes(const json_t *dev_a, const json_t *dev_b, const json_t *snap_a,
                             const json_t *snap_b, struct gv_cmp_cause **causes, size_t *n)
{
    struct gv_compare o;
    memset(&o, 0, sizeof o);
    if (dev_a || dev_b)
        leaf_causes("device", "", dev_a, dev_b, &o, 0);
    fp_mode_cause(dev_a, dev_b, &o);
    env_causes(snap_a, snap_b, &o);
    lib_causes(snap_a, snap_b, &o);
    const json_t *ma = json_object_get(json_object_get(snap_a, "drivers"), "modules");
    const json_t *mb = json_object_get(json_object_get(snap_b, "drivers"), "modules");
    if (json_is_object(ma) && json_is_object(mb))
        leaf_causes("driver", "", ma, mb, &o, 0);
    drop_device_echoes(o.causes, &o.ncauses);
    *causes = o.causes;
    *n = o.ncauses;
}

/* ---------- all ---------- */

static int push(struct gv_compare *o, size_t *cap, struct gv_cmp_case c)
{
    if (o->n == *cap) {
        size_t nc = *cap ? *cap * 2 : 64;
        struct gv_cmp_case *n = realloc(o->cases, nc * sizeof *n);
        if (!n)
            return GV_E_NOMEM;
        o->cases = n;
        *cap = nc;
    }
    o->cases[o->n++] = c;
    o->count[c.status]++;
    o->flagged |= gv_change_flagged(c.status);
    o->mismatches += c.status == GV_CH_INPUTS_DIFFER;
    return GV_OK;
}

int gv_compare_judge(const struct gv_results *a, const struct gv_results *b,
                     const struct gv_st_file *oa, const struct gv_st_file *ob,
                     struct gv_compare *o, struct gv_err *err)
{
    memset(o, 0, sizeof *o);
    size_t cap = 0;
    for (size_t i = 0; i < a->n; i++) {
        struct gv_cmp_case c = {.id = a->cases[i].id, .a = &a->cases[i]};
        c.b = gv_results_find(b, c.id);
        c.status = c.b ? judge_case(c.a, c.b, &c.dbits) : GV_CH_MISSING_AFTER;
        if (c.b && c.a->has_metrics && c.b->has_metrics && c.status != GV_CH_INPUTS_DIFFER)
            c.dbits = bits_of(c.b) - bits_of(c.a);
        if (c.b && oa && ob && c.status != GV_CH_INPUTS_DIFFER) {
            int rc = elementwise(oa, ob, &c, err);
            if (rc) {
                gv_compare_free(o);
                return rc;
            }
        }
        if (push(o, &cap, c))
            goto oom;
    }
    for (size_t i = 0; i < b->n; i++) {
        if (gv_results_find(a, b->cases[i].id))
            continue;
        struct gv_cmp_case c = {.id = b->cases[i].id, .b = &b->cases[i],
                                .status = GV_CH_MISSING_BEFORE};
        if (push(o, &cap, c))
            goto oom;
    }
    find_causes(a, b, o);
    return GV_OK;
oom:
    gv_compare_free(o);
    return gv_err_set(err, GV_E_NOMEM, "compare: out of memory");
}

void gv_compare_free(struct gv_compare *c)
{
    free(c->cases);
    free(c->causes);
    free(c->fp);
    memset(c, 0, sizeof *c);
}
