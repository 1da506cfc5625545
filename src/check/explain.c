/* Explaining a comparison (compare.h, gv_compare_results): which cause has
 * evidence, which degraded cases it touches, what each degraded case's error
 * looks like (kb/numsig.h), and, with fingerprints on both sides, which
 * property of which route changed (probe/probe.h). Prints nothing. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check/compare.h"

/* Libraries and the impl strings of the calls that go through them. */
static const struct {
    const char *name, *display;
    const char *tokens[4];
} libs[] = {
    {"cublaslt", "cuBLASLt", {"cublaslt", NULL}},
    {"cublas", "cuBLAS", {"cublass", "cublasg", "cublasd", "cublash"}},
    {"hipblaslt", "hipBLASLt", {"hipblaslt", NULL}},
    {"rocblas", "rocBLAS", {"rocblas_", "rocblas ", NULL}},
    {"cudnn", "cuDNN", {"cudnn", NULL}},
    {"miopen", "MIOpen", {"miopen", NULL}},
    {"nvrtc", "NVRTC", {"kernel", NULL}},
    {"hiprtc", "hipRTC", {"kernel", NULL}},
};
#define N_LIBS (sizeof libs / sizeof libs[0])

static void lower(const char *s, char *out, size_t n)
{
    size_t i = 0;
    for (; s && s[i] && i + 1 < n; i++)
        out[i] = (char)tolower((unsigned char)s[i]);
    out[i] = '\0';
}

static int lib_index(const char *name)
{
    char l[128];
    lower(name, l, sizeof l);
    for (size_t i = 0; i < N_LIBS; i++)
        if (!strcmp(l, libs[i].name))
            return (int)i;
    return -1;
}

const char *gv_lib_display(const char *name)
{
    int i = lib_index(name);
    return i >= 0 ? libs[i].display : name;
}

static int impl_uses(const char *impl, int lib)
{
    char l[512];
    lower(impl, l, sizeof l);
    for (int t = 0; t < 4 && libs[lib].tokens[t]; t++)
        if (strstr(l, libs[lib].tokens[t]))
            return 1;
    return 0;
}

/* The library a case ran through (after, else before), or -1. */
static int case_lib(const struct gv_cmp_case *c)
{
    const struct gv_result_case *r = c->b ? c->b : c->a;
    for (int pass = 0; pass < 2; pass++) {
        if (r)
            for (size_t i = 0; i < N_LIBS; i++)
                if (impl_uses(r->impl, (int)i))
                    return (int)i;
        r = c->a;
    }
    return -1;
}

/* Which flagged cases a variable with a known effect can touch (kb/numsig.h). */
static int env_touches(const char *name, const struct gv_cmp_case *c)
{
    const struct gv_result_case *r = c->b ? c->b : c->a;
    return r && kb_numvar_touches(name, r->op, r->in_dtype);
}

static int kind_order(const char *kind)
{
    static const char *const order[] = {"environment", "library", "route", "device", "driver"};
    for (int i = 0; i < 5; i++)
        if (!strcmp(kind, order[i]))
            return i;
    return 5;
}

static int by_rank(const void *x, const void *y)
{
    const struct gv_cmp_cause *a = x, *b = y;
    if (a->rank != b->rank)
        return a->rank - b->rank;
    if (!a->note[0] != !b->note[0]) /* a known numerics effect first */
        return !a->note[0] - !b->note[0];
    if (kind_order(a->kind) != kind_order(b->kind))
        return kind_order(a->kind) - kind_order(b->kind);
    return a->found - b->found;
}

static void signatures(struct gv_cmp_case *c)
{
    if (!gv_change_flagged(c->status) || !c->a || !c->b || !c->b->has_metrics)
        return;
    struct kb_numsig_case k = {c->id, c->b->op, c->b->in_dtype, c->b->compute_dtype,
                               c->b->out_dtype, c->a->has_metrics ? c->a->eff_bits : 64,
                               c->b->eff_bits, c->b->mean_signed, c->b->has_bias,
                               c->b->mean_toward_zero, c->b->mean_abs,
                               c->b->nan_count > c->a->nan_count || c->b->inf_count > c->a->inf_count};
    c->nsig = (int)kb_numsig_match(&k, c->sig, 3);
}

static void rank_causes(struct gv_compare *o, size_t nflag)
{
    for (size_t i = 0; i < o->ncauses; i++) {
        struct gv_cmp_cause *k = &o->causes[i];
        k->found = (int)i;
        const char *leaf = strrchr(k->name, '.') ? strrchr(k->name, '.') + 1 : k->name;
        int lib = !strcmp(k->kind, "library") ? lib_index(k->name) : -1;
        int known = k->note[0] != 0;
        for (size_t j = 0; j < o->n; j++) {
            const struct gv_cmp_case *c = &o->cases[j];
            if (!gv_change_flagged(c->status))
                continue;
            if (!strcmp(k->kind, "route") ? !strcmp(k->name, c->id)
                : lib >= 0                 ? case_lib(c) == lib
                : known                    ? env_touches(leaf, c)
                                           : 0)
                gv_cmp_cause_touch(k, c->id);
        }
        k->rank = k->touched && (size_t)k->touched == nflag ? 0 : k->touched ? 1 : known ? 2 : 3;
    }
    if (o->ncauses > 1)
        qsort(o->causes, o->ncauses, sizeof *o->causes, by_rank);
}

static void routes_note(struct gv_compare *o, size_t nflag)
{
    int count[N_LIBS] = {0}, none = 0;
    for (size_t j = 0; j < o->n; j++)
        if (gv_change_flagged(o->cases[j].status)) {
            int l = case_lib(&o->cases[j]);
            if (l >= 0)
                count[l]++;
            else
                none++;
        }
    size_t used = 0;
    for (size_t i = 0; i < N_LIBS; i++) {
        if (!count[i])
            continue;
        if ((size_t)count[i] == nflag) {
            snprintf(o->routes_note, sizeof o->routes_note,
                     "every degraded case (%zu) ran through %s", nflag, libs[i].display);
            return;
        }
        used += (size_t)snprintf(o->routes_note + used, sizeof o->routes_note - used,
                                 "%s%s: %d", used ? ", " : "degraded cases ran through ",
                                 libs[i].display, count[i]);
        if (used >= sizeof o->routes_note)
            return;
    }
    if (used && none)
        snprintf(o->routes_note + used, sizeof o->routes_note - used, ", other: %d", none);
}

static void fingerprints(const struct gv_results *a, const struct gv_results *b,
                         struct gv_compare *o)
{
    const json_t *pa = json_object_get(a->doc, "probe"), *pb = json_object_get(b->doc, "probe");
    if (!pa || !pb) {
        if (pa || pb)
            snprintf(o->fp_note, sizeof o->fp_note,
                     "only the %s result file has a fingerprint (check --probe)",
                     pa ? "first" : "second");
        return;
    }
    struct gv_fingerprint fa, fb;
    struct gv_err e = {0};
    if (gv_fp_from_json(pa, "the first file's fingerprint", &fa, &e)) {
        snprintf(o->fp_note, sizeof o->fp_note, "%s", e.msg);
        return;
    }
    if (gv_fp_from_json(pb, "the second file's fingerprint", &fb, &e)) {
        snprintf(o->fp_note, sizeof o->fp_note, "%s", e.msg);
        gv_fp_free(&fa);
        return;
    }
    o->nfp = gv_fp_diff(&fa, &fb, &o->fp);
    gv_fp_free(&fa);
    gv_fp_free(&fb);
}

static void explain(const struct gv_results *a, const struct gv_results *b,
                    struct gv_compare *o)
{
    size_t nflag = 0;
    for (size_t j = 0; j < o->n; j++) {
        signatures(&o->cases[j]);
        nflag += gv_change_flagged(o->cases[j].status) != 0;
    }
    rank_causes(o, nflag);
    if (nflag)
        routes_note(o, nflag);
    fingerprints(a, b, o);
}

int gv_compare_results(const struct gv_results *a, const struct gv_results *b,
                       const struct gv_st_file *oa, const struct gv_st_file *ob,
                       struct gv_compare *out, struct gv_err *err)
{
    int rc = gv_compare_judge(a, b, oa, ob, out, err);
    if (rc == GV_OK)
        explain(a, b, out);
    return rc;
}
