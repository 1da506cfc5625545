/* Explaining a comparison (compare.h, gv_compare_results): which cause has
 * evidence, which degraded cases it touches, what each degraded case's error
 * looks like (kb/numsig.h), and, with fingerprints on both sides, which
 * property of which route changed (probe/probe.h). Prints nothing. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check/compare.h"
#include "kb/impl_class.h"

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
    /* gpuvet's own kernels ("kernel gv_..."), not the "kernels:" PyTorch's profiler saw */
    {"nvrtc", "NVRTC", {"kernel gv_", "kernels gv_", NULL}},
    {"hiprtc", "hipRTC", {"kernel gv_", "kernels gv_", NULL}},
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

int gv_cmp_cause_touches(const struct gv_cmp_cause *k, const struct gv_cmp_case *c)
{
    if (!gv_change_flagged(c->status))
        return 0;
    if (!strcmp(k->kind, "route")) {
        if (!k->from)
            return !strcmp(k->name, c->id);
        return c->a && c->b && strcmp(c->a->impl, c->b->impl) != 0 &&
               kb_impl_class_of(c->a->impl) == k->from && kb_impl_class_of(c->b->impl) == k->to;
    }
    int lib = !strcmp(k->kind, "library") ? lib_index(k->name) : -1;
    if (lib >= 0 && case_lib(c) == lib)
        return 1;
    if (k->mechanism[0]) /* a case whose library is not known may have run through it */
        return case_lib(c) < 0 && env_touches(k->mechanism, c);
    const char *leaf = strrchr(k->name, '.') ? strrchr(k->name, '.') + 1 : k->name;
    return lib < 0 && k->note[0] && env_touches(leaf, c);
}

static void rank_causes(struct gv_compare *o, size_t nflag)
{
    for (size_t i = 0; i < o->ncauses; i++) {
        struct gv_cmp_cause *k = &o->causes[i];
        k->found = (int)i;
        int known = k->note[0] != 0 || k->mechanism[0] != 0;
        for (size_t j = 0; j < o->n; j++)
            if (gv_cmp_cause_touches(k, &o->cases[j]))
                gv_cmp_cause_touch(k, o->cases[j].id);
        k->rank = k->touched && (size_t)k->touched == nflag ? 0 : k->touched ? 1 : known ? 2 : 3;
    }
    if (o->ncauses > 1)
        qsort(o->causes, o->ncauses, sizeof *o->causes, by_rank);
}

/* ---------- routes grouped by the kind of change ---------- */

/* The case a route cause of one case names, or NULL. */
static const struct gv_cmp_case *case_named(const struct gv_compare *o, const char *id)
{
    for (size_t j = 0; j < o->n; j++)
        if (!strcmp(o->cases[j].id, id))
            return &o->cases[j];
    return NULL;
}

/* The route causes of single cases (compare.c) become one cause per
 * (class before -> class after): "SIMT fp32 kernel -> TF32 tensor-op kernel". */
static void group_routes(struct gv_compare *o)
{
    size_t w = 0, n = o->ncauses;
    const struct kb_impl_class *pairs[128][2];
    size_t npairs = 0;
    for (size_t i = 0; i < n; i++) {
        struct gv_cmp_cause *k = &o->causes[i];
        const struct gv_cmp_case *c = !strcmp(k->kind, "route") && !k->from
                                          ? case_named(o, k->name) : NULL;
        if (!c || !c->a || !c->b) {
            o->causes[w++] = *k;
            continue;
        }
        const struct kb_impl_class *f = kb_impl_class_of(c->a->impl), *t = kb_impl_class_of(c->b->impl);
        size_t p = 0;
        while (p < npairs && (pairs[p][0] != f || pairs[p][1] != t))
            p++;
        if (p == npairs && npairs < 128) {
            pairs[npairs][0] = f;
            pairs[npairs++][1] = t;
        }
    }
    o->ncauses = w;
    for (size_t p = 0; p < npairs; p++) {
        char name[128];
        if (pairs[p][0] == pairs[p][1])
            snprintf(name, sizeof name, "another %s", pairs[p][0]->name);
        else
            snprintf(name, sizeof name, "%s -> %s", pairs[p][0]->name, pairs[p][1]->name);
        size_t before = o->ncauses;
        gv_cmp_cause_add(&o->causes, &o->ncauses, "route", name, pairs[p][0]->name,
                         pairs[p][1]->name, pairs[p][0] == pairs[p][1] ? "same kind of kernel" : NULL,
                         NULL);
        if (o->ncauses > before) {
            o->causes[before].from = pairs[p][0];
            o->causes[before].to = pairs[p][1];
        }
    }
}

/* ---------- loader variables as the mechanism of a library change ---------- */

/* Whether a library description ("path version sha256:…; path ...") names a
 * file the loader variable's value explains. */
static int desc_explained(const char *var, const char *value, const char *desc)
{
    const char *s = desc;
    while (value[0] && *s) {
        size_t n = strcspn(s, " ;");
        char path[512];
        snprintf(path, sizeof path, "%.*s", (int)(n < sizeof path ? n : sizeof path - 1), s);
        if (kb_loader_explains(var, value, path))
            return 1;
        s = strstr(s, "; ");
        if (!s)
            break;
        s += 2;
    }
    return 0;
}

/* A variable whose only effect is which library file loads (kb/impl_class.h)
 * and that explains a library change is that change's mechanism, not a cause
 * of its own: it leaves the list and the library names it. */
static void fold_loaders(struct gv_compare *o)
{
    size_t w = 0;
    for (size_t i = 0; i < o->ncauses; i++) {
        struct gv_cmp_cause v = o->causes[i];
        int folded = 0;
        if (!strcmp(v.kind, "environment") && kb_loader_var(v.name))
            for (size_t j = 0; j < o->ncauses; j++) {
                struct gv_cmp_cause *l = &o->causes[j];
                if (strcmp(l->kind, "library") != 0 || l->mechanism[0] ||
                    !(desc_explained(v.name, v.after, l->after) ||
                      desc_explained(v.name, v.before, l->before)))
                    continue;
                snprintf(l->mechanism, sizeof l->mechanism, "%s", v.name);
                snprintf(l->mech_before, sizeof l->mech_before, "%s", v.before);
                snprintf(l->mech_after, sizeof l->mech_after, "%s", v.after);
                folded = 1;
            }
        if (!folded)
            o->causes[w++] = v;
    }
    o->ncauses = w;
}

/* ---------- flagged cases grouped by signatures and causes ---------- */

static int same_group(const struct gv_compare *o, const struct gv_cmp_case *x,
                      const struct gv_cmp_case *y)
{
    if (x->nsig != y->nsig)
        return 0;
    for (int k = 0; k < x->nsig; k++)
        if (x->sig[k] != y->sig[k])
            return 0;
    for (size_t i = 0; i < o->ncauses; i++)
        if (gv_cmp_cause_touches(&o->causes[i], x) != gv_cmp_cause_touches(&o->causes[i], y))
            return 0;
    return 1;
}

/* Each flagged case joins the first group whose first case it matches. */
static void group_cases(struct gv_compare *o)
{
    size_t *first = o->n ? malloc(o->n * sizeof *first) : NULL; /* each group's first case */
    for (size_t j = 0; j < o->n; j++) {
        struct gv_cmp_case *x = &o->cases[j];
        x->group = 0;
        if (!gv_change_flagged(x->status))
            continue;
        for (int g = 0; first && g < o->ngroups && !x->group; g++)
            if (same_group(o, &o->cases[first[g]], x))
                x->group = g + 1;
        if (!x->group) {
            x->group = ++o->ngroups;
            if (first)
                first[o->ngroups - 1] = j;
        }
    }
    free(first);
}

const char **gv_cmp_ids(const struct gv_compare *c, const struct gv_cmp_cause *k, int g,
                        size_t *n)
{
    *n = 0;
    const char **ids = c->n ? malloc(c->n * sizeof *ids) : NULL;
    if (!ids)
        return NULL;
    for (size_t j = 0; j < c->n; j++)
        if (k ? gv_cmp_cause_touches(k, &c->cases[j]) : g && c->cases[j].group == g)
            ids[(*n)++] = c->cases[j].id;
    if (!*n) {
        free(ids);
        return NULL;
    }
    return ids;
}

/* The common prefix of the ids, up to and with its last '.'; its length. */
static size_t dotted_prefix(const char *const *ids, size_t n)
{
    size_t len = strlen(ids[0]);
    for (size_t i = 1; i < n; i++) {
        size_t m = 0;
        while (m < len && ids[i][m] == ids[0][m])
            m++;
        len = m;
    }
    while (len && ids[0][len - 1] != '.')
        len--;
    return len;
}

static int append(char **s, size_t *used, size_t *cap, const char *text)
{
    size_t need = *used + strlen(text) + 1;
    if (need > *cap) {
        size_t nc = need * 2;
        char *m = realloc(*s, nc);
        if (!m)
            return -1;
        *s = m;
        *cap = nc;
    }
    memcpy(*s + *used, text, strlen(text) + 1);
    *used += strlen(text);
    return 0;
}

char *gv_cmp_ids_text(const struct gv_compare *c, const char *const *ids, size_t n, int all)
{
    char *s = NULL;
    size_t used = 0, cap = 0;
    if (append(&s, &used, &cap, ""))
        return NULL;
    size_t p = n > 1 ? dotted_prefix(ids, n) : 0, with = 0;
    for (size_t j = 0; p && j < c->n; j++)
        with += !strncmp(c->cases[j].id, ids[0], p);
    if (p && with == n && !all) {
        char pre[512];
        snprintf(pre, sizeof pre, "%.*s*", (int)(p < sizeof pre - 2 ? p : sizeof pre - 2), ids[0]);
        if (append(&s, &used, &cap, pre)) {
            free(s);
            return NULL;
        }
        return s;
    }
    size_t shown = all || n <= 4 ? n : 3;
    for (size_t i = 0; i < shown; i++)
        if ((i && append(&s, &used, &cap, ", ")) || append(&s, &used, &cap, ids[i])) {
            free(s);
            return NULL;
        }
    if (shown < n) {
        char more[48];
        snprintf(more, sizeof more, " and %zu more", n - shown);
        if (append(&s, &used, &cap, more)) {
            free(s);
            return NULL;
        }
    }
    return s;
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
    group_routes(o);
    fold_loaders(o);
    rank_causes(o, nflag);
    group_cases(o);
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
