/* The fleet comparison (docs/fleet.md, "Classification"): nodes grouped by
 * the hardware that must agree, per group the majority stack, per case the
 * majority output digest among the nodes on that stack where the case was
 * run-to-run identical; every other node named with its class and evidence.
 * Hash maps throughout: linear in the nodes and cases. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/fs.h"
#include "base/json.h"
#include "fleet/fleet.h"
#include "fleet/fleet_impl.h"
#include "num/types.h"
#include "store/safetensors.h"

#define SLOW_MIN_NODES 3 /* fewer figures than this: no majority to judge by */
#define SLOW_Z 3.5       /* modified z-score (Iglewicz and Hoaglin) */
#define SLOW_FLOOR 0.10  /* and at least 10% off the median, and more than the
                          * node's own spread (its samples' max - min: a busy
                          * machine's figures vary as much as they fall) */
#define OUTPUTS_MAX ((size_t)512 << 20)

struct vote {
    int count, first; /* nodes with this digest; the first of them (node index) */
};

struct gcase {
    const char *id;
    struct gv_fmap digests; /* digest -> index into group votes */
    int voters, nondet, ran;
    int major; /* index into votes, -1: none (split or no voter) */
};

struct gbench {
    const char *id, *unit;
    double *vals;
    size_t n, cap;
    double median, mad;
};

struct group {
    char *key;
    const json_t *hw;
    size_t *members, n, cap;
    struct gv_fmap stacks; /* stack digest -> count */
    const char *stack;     /* the majority's */
    int stack_count;
    const json_t *stack_obj;
    struct gv_fmap cases; /* id -> index into cs */
    struct gcase *cs;
    size_t ncs, capcs;
    struct vote *votes;
    size_t nvotes, capvotes;
    struct gv_fmap bench; /* id -> index into bs */
    struct gbench *bs;
    size_t nbs, capbs;
};

struct fleet {
    const json_t *nodes;
    const char *dir;
    struct gv_fmap keys; /* group key -> index into g */
    struct group *g;
    size_t ng, capg;
    json_t *summary;
};

static int grow(void **p, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap)
        return 0;
    size_t nc = *cap ? *cap * 2 : 8;
    while (nc < need)
        nc *= 2;
    void *q = realloc(*p, nc * size);
    if (!q)
        return -1;
    *p = q;
    *cap = nc;
    return 0;
}

static const char *sget(const json_t *o, const char *k)
{
    return json_string_value(json_object_get(o, k));
}

static int ran(const json_t *node)
{
    const char *s = sget(node, "status");
    return s && !strcmp(s, "ran");
}

/* ---- one node's view of one case over its repeats ---- */

struct ncase {
    const char *id, *vote; /* the digest most of its repeats gave (the first on a tie) */
    int repeats, nondet, failed;
    const json_t *first; /* the case of the first repeat */
};

static const json_t *case_in_run(const json_t *run, size_t ci, const char *id)
{
    const json_t *cases = json_object_get(run, "cases");
    const json_t *c = json_array_get(cases, ci);
    if (c && !strcmp(sget(c, "id"), id))
        return c;
    size_t i;
    json_array_foreach(cases, i, c)
        if (!strcmp(sget(c, "id"), id))
            return c;
    return NULL;
}

static const char *digest_of(const json_t *c)
{
    return c ? sget(c, "output_digest") : NULL;
}

static void node_case(const json_t *node, size_t ci, struct ncase *nc)
{
    const json_t *runs = json_object_get(node, "runs");
    const json_t *c0 = json_array_get(json_object_get(json_array_get(runs, 0), "cases"), ci);
    memset(nc, 0, sizeof *nc);
    nc->id = sget(c0, "id");
    nc->first = c0;
    int best = 0;
    for (size_t r = 0; r < json_array_size(runs); r++) {
        const json_t *c = r ? case_in_run(json_array_get(runs, r), ci, nc->id) : c0;
        if (!c)
            continue;
        nc->repeats++;
        if (json_is_false(json_object_get(c, "deterministic")))
            nc->nondet = 1;
        const char *v = sget(c, "verdict");
        if (v && (!strcmp(v, "fail") || !strcmp(v, "error")))
            nc->failed = 1;
        const char *d = digest_of(c);
        if (!d)
            continue;
        int count = 0;
        for (size_t q = 0; q < json_array_size(runs); q++) {
            const char *e = digest_of(q ? case_in_run(json_array_get(runs, q), ci, nc->id) : c0);
            count += e && !strcmp(e, d);
        }
        if (count > best)
            best = count, nc->vote = d;
    }
}

/* ---- grouping and votes ---- */

static struct group *group_of(struct fleet *f, const json_t *node, struct gv_err *err)
{
    char key[1024];
    gv_fleet_group_key(node, key, sizeof key);
    int *gi = gv_fmap_get(&f->keys, key);
    if (gi)
        return &f->g[*gi];
    if (grow((void **)&f->g, &f->capg, f->ng + 1, sizeof *f->g))
        return gv_err_set(err, GV_E_NOMEM, "out of memory"), NULL;
    struct group *g = &f->g[f->ng];
    memset(g, 0, sizeof *g);
    g->key = strdup(key);
    g->hw = json_object_get(node, "hardware");
    if (!g->key || !gv_fmap_put(&f->keys, g->key, (int)f->ng))
        return gv_err_set(err, GV_E_NOMEM, "out of memory"), NULL;
    f->ng++;
    return g;
}

static int add_member(struct fleet *f, size_t i, struct gv_err *err)
{
    const json_t *node = json_array_get(f->nodes, i);
    struct group *g = group_of(f, node, err);
    if (!g || grow((void **)&g->members, &g->cap, g->n + 1, sizeof *g->members))
        return gv_err_set(err, GV_E_NOMEM, "out of memory");
    g->members[g->n++] = i;
    const char *sd = sget(node, "stack_digest");
    if (ran(node) && sd) {
        int *c = gv_fmap_put(&g->stacks, sd, 0);
        if (!c)
            return gv_err_set(err, GV_E_NOMEM, "out of memory");
        ++*c;
        if (*c > g->stack_count || (*c == g->stack_count && strcmp(sd, g->stack) < 0)) {
            g->stack_count = *c;
            g->stack = sd;
            g->stack_obj = json_object_get(node, "stack");
        }
    }
    return GV_OK;
}

static struct gcase *case_slot(struct group *g, const char *id)
{
    int *ci = gv_fmap_get(&g->cases, id);
    if (ci)
        return &g->cs[*ci];
    if (grow((void **)&g->cs, &g->capcs, g->ncs + 1, sizeof *g->cs) ||
        !gv_fmap_put(&g->cases, id, (int)g->ncs))
        return NULL;
    struct gcase *c = &g->cs[g->ncs++];
    memset(c, 0, sizeof *c);
    c->id = id;
    c->major = -1;
    return c;
}

static int vote(struct group *g, struct gcase *c, const char *digest, int node)
{
    int *vi = gv_fmap_get(&c->digests, digest);
    if (!vi) {
        if (grow((void **)&g->votes, &g->capvotes, g->nvotes + 1, sizeof *g->votes) ||
            !(vi = gv_fmap_put(&c->digests, digest, (int)g->nvotes)))
            return -1;
        g->votes[g->nvotes++] = (struct vote){0, node};
    }
    g->votes[*vi].count++;
    c->voters++;
    return 0;
}

static int on_stack(const struct group *g, const json_t *node)
{
    const char *sd = sget(node, "stack_digest");
    return ran(node) && sd && g->stack && !strcmp(sd, g->stack);
}

static int add_bench(struct group *g, const json_t *b)
{
    const char *id = sget(b, "id");
    int *bi = gv_fmap_get(&g->bench, id);
    if (!bi) {
        if (grow((void **)&g->bs, &g->capbs, g->nbs + 1, sizeof *g->bs) ||
            !(bi = gv_fmap_put(&g->bench, id, (int)g->nbs)))
            return -1;
        g->bs[g->nbs++] = (struct gbench){id, sget(b, "unit"), NULL, 0, 0, 0, 0};
    }
    struct gbench *s = &g->bs[*bi];
    if (strcmp(s->unit, sget(b, "unit")) != 0)
        return 0; /* another unit than the first node's: not comparable */
    if (grow((void **)&s->vals, &s->cap, s->n + 1, sizeof *s->vals))
        return -1;
    s->vals[s->n++] = json_number_value(json_object_get(b, "median"));
    return 0;
}

/* The bench figure of a node: its first run's. */
static const json_t *node_bench(const json_t *node)
{
    return json_object_get(json_array_get(json_object_get(node, "runs"), 0), "bench");
}

static int tally(struct fleet *f, struct group *g, struct gv_err *err)
{
    for (size_t m = 0; m < g->n; m++) {
        const json_t *node = json_array_get(f->nodes, g->members[m]);
        if (!ran(node))
            continue;
        size_t bi;
        const json_t *b;
        json_array_foreach(node_bench(node), bi, b) {
            if (add_bench(g, b))
                return gv_err_set(err, GV_E_NOMEM, "out of memory");
        }
        if (!on_stack(g, node))
            continue;
        const json_t *runs = json_object_get(node, "runs");
        const json_t *cases = json_object_get(json_array_get(runs, 0), "cases");
        for (size_t ci = 0; ci < json_array_size(cases); ci++) {
            struct ncase nc;
            node_case(node, ci, &nc);
            struct gcase *c = case_slot(g, nc.id);
            if (!c)
                return gv_err_set(err, GV_E_NOMEM, "out of memory");
            c->ran++;
            c->nondet += nc.nondet;
            if (!nc.nondet && nc.vote && vote(g, c, nc.vote, (int)g->members[m]))
                return gv_err_set(err, GV_E_NOMEM, "out of memory");
        }
    }
    return GV_OK;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median_of(double *v, size_t n)
{
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void majorities(struct group *g)
{
    for (size_t i = 0; i < g->ncs; i++) {
        struct gcase *c = &g->cs[i];
        for (size_t k = 0; k < c->digests.cap; k++)
            if (c->digests.keys[k] && 2 * g->votes[c->digests.vals[k]].count > c->voters)
                c->major = c->digests.vals[k];
    }
    for (size_t i = 0; i < g->nbs; i++) {
        struct gbench *s = &g->bs[i];
        if (s->n < SLOW_MIN_NODES)
            continue;
        double *v = malloc(s->n * sizeof *v);
        if (!v)
            continue;
        memcpy(v, s->vals, s->n * sizeof *v);
        s->median = median_of(v, s->n);
        for (size_t k = 0; k < s->n; k++)
            v[k] = fabs(v[k] - s->median);
        s->mad = median_of(v, s->n);
        free(v);
    }
}

static const char *major_digest(const struct gcase *c)
{
    for (size_t k = 0; k < c->digests.cap; k++)
        if (c->digests.keys[k] && c->digests.vals[k] == c->major)
            return c->digests.keys[k];
    return NULL;
}

/* ---- outputs: how many elements and bits differ ---- */

static int open_outputs(const char *dir, const json_t *node, struct gv_st_file *st,
                        struct gv_err *err)
{
    char name[GV_FLEET_NODE_NAME_MAX + 48], what[GV_PATH_MAX];
    snprintf(name, sizeof name, "%s.r%lld.safetensors", sget(node, "node"),
             (long long)json_integer_value(json_object_get(node, "rank")));
    snprintf(what, sizeof what, "%s/outputs/%s", dir, name);
    int top = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    int od = top < 0 ? -1 : openat(top, "outputs", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (top >= 0)
        close(top);
    if (od < 0)
        return gv_err_set(err, GV_E_IO, "%s/outputs: %s", dir, strerror(errno));
    char *data;
    size_t len;
    int rc = gv_fleet_read_at(od, name, 1, what, OUTPUTS_MAX, &data, &len, err);
    close(od);
    if (rc)
        return rc;
    return gv_safetensors_parse((uint8_t *)data, len, what, st, err);
}

static void count_bits(const struct gv_st_tensor *a, const struct gv_st_tensor *b, json_t *ev)
{
    size_t es = gv_dtype_size(a->dtype);
    if (a->dtype != b->dtype || a->nbytes != b->nbytes || es == 0) {
        json_object_set_new(ev, "outputs_note",
                            json_string("the saved tensors differ in type or shape"));
        return;
    }
    const unsigned char *x = a->data, *y = b->data;
    long long differing = 0;
    int max_bits = 0;
    for (size_t i = 0; i < a->nbytes; i += es) {
        int bits = 0;
        for (size_t k = 0; k < es; k++)
            bits += __builtin_popcount((unsigned)(x[i + k] ^ y[i + k]));
        differing += bits > 0;
        if (bits > max_bits)
            max_bits = bits;
    }
    json_object_set_new(ev, "elements_differing", json_integer(differing));
    json_object_set_new(ev, "max_bits", json_integer(max_bits));
}

struct outs {
    int node, ref; /* which files are open (-1: none) */
    struct gv_st_file a, b;
    int a_ok, b_ok;
    char why[256]; /* why a file could not be read */
};

static void outputs_evidence(struct fleet *f, struct outs *o, int node, int ref, const char *id,
                             json_t *ev)
{
    const json_t *n = json_array_get(f->nodes, node), *r = json_array_get(f->nodes, ref);
    const char *pn = sget(n, "outputs"), *pr = sget(r, "outputs");
    if (!f->dir[0] || !pn || !pr || strcmp(pn, "present") || strcmp(pr, "present"))
        return;
    struct gv_err err = {0};
    if (o->node != node) {
        if (o->a_ok)
            gv_safetensors_free(&o->a);
        o->node = node;
        o->a_ok = open_outputs(f->dir, n, &o->a, &err) == GV_OK;
        snprintf(o->why, sizeof o->why, "%s", err.msg);
    }
    if (o->a_ok && o->ref != ref) {
        if (o->b_ok)
            gv_safetensors_free(&o->b);
        o->ref = ref;
        o->b_ok = open_outputs(f->dir, r, &o->b, &err) == GV_OK;
        if (!o->b_ok)
            snprintf(o->why, sizeof o->why, "%s", err.msg);
    }
    const struct gv_st_tensor *ta = o->a_ok ? gv_safetensors_find(&o->a, id) : NULL;
    const struct gv_st_tensor *tb = o->b_ok ? gv_safetensors_find(&o->b, id) : NULL;
    if (ta && tb)
        count_bits(ta, tb, ev);
    else
        json_object_set_new(
            ev, "outputs_note",
            json_string(o->a_ok && o->b_ok ? "the case's output was not saved" : o->why));
}

static void outs_free(struct outs *o)
{
    if (o->a_ok)
        gv_safetensors_free(&o->a);
    if (o->b_ok)
        gv_safetensors_free(&o->b);
}

/* ---- classification of one node ---- */

static void set_num(json_t *o, const char *k, const json_t *v)
{
    if (json_is_number(v))
        json_object_set_new(o, k, json_real(json_number_value(v)));
}

static json_t *case_evidence(struct fleet *f, struct group *g, struct gcase *gc,
                             const struct ncase *nc, size_t ci, const json_t *node, int idx,
                             struct outs *o)
{
    const char *major = major_digest(gc);
    const json_t *runs = json_object_get(node, "runs");
    int differ = 0;
    const char *seen = NULL;
    for (size_t r = 0; !nc->nondet && r < json_array_size(runs); r++) {
        const json_t *c = case_in_run(json_array_get(runs, r), ci, nc->id);
        const char *d = digest_of(c);
        if (d && major && strcmp(d, major) != 0)
            differ++, seen = seen ? seen : d;
    }
    int outlier_here = nc->nondet && 2 * gc->nondet < gc->ran;
    if (!differ && !nc->failed && !outlier_here)
        return NULL;
    json_t *ev = json_object();
    json_object_set_new(ev, "id", json_string(nc->id));
    if (differ) {
        const struct vote *v = &g->votes[gc->major];
        char rep[64];
        snprintf(rep, sizeof rep, "%d of %d", differ, nc->repeats);
        json_object_set_new(ev, "majority_digest", json_string(major));
        json_object_set_new(ev, "digest", json_string(seen));
        json_object_set_new(ev, "nodes_agreeing", json_integer(v->count));
        json_object_set_new(ev, "repeats_differing", json_string(rep));
        set_num(ev, "effective_bits", json_object_get(nc->first, "effective_bits"));
        const json_t *ref = json_array_get(f->nodes, (size_t)v->first);
        const json_t *rc = case_in_run(json_array_get(json_object_get(ref, "runs"), 0), 0, nc->id);
        set_num(ev, "majority_effective_bits", json_object_get(rc, "effective_bits"));
        outputs_evidence(f, o, idx, v->first, nc->id, ev);
    }
    if (nc->failed)
        json_object_set_new(ev, "fails_against_fp64", json_true());
    if (outlier_here) {
        json_object_set_new(ev, "not_run_to_run_identical", json_true());
        json_object_set_new(ev, "identical_on_nodes", json_integer(gc->ran - gc->nondet));
    }
    return ev;
}

static json_t *numerics(struct fleet *f, struct group *g, const json_t *node, int idx,
                        struct outs *o)
{
    json_t *cases = json_array();
    const json_t *c0 = json_object_get(json_array_get(json_object_get(node, "runs"), 0), "cases");
    for (size_t ci = 0; ci < json_array_size(c0); ci++) {
        struct ncase nc;
        node_case(node, ci, &nc);
        int *gi = gv_fmap_get(&g->cases, nc.id);
        json_t *ev = gi ? case_evidence(f, g, &g->cs[*gi], &nc, ci, node, idx, o) : NULL;
        if (ev)
            json_array_append_new(cases, ev);
    }
    if (!json_array_size(cases)) {
        json_decref(cases);
        return NULL;
    }
    return cases;
}

static json_t *slow(struct group *g, const json_t *node)
{
    json_t *out = json_array();
    size_t i;
    const json_t *b;
    json_array_foreach(node_bench(node), i, b) {
        int *bi = gv_fmap_get(&g->bench, sget(b, "id"));
        struct gbench *s = bi ? &g->bs[*bi] : NULL;
        if (!s || s->n < SLOW_MIN_NODES || strcmp(s->unit, sget(b, "unit")))
            continue;
        size_t ul = strlen(s->unit);
        int higher_better = ul >= 2 && !strcmp(s->unit + ul - 2, "/s");
        double x = json_number_value(json_object_get(b, "median"));
        double sp = json_number_value(json_object_get(b, "spread")); /* null, absent: 0 */
        double off = higher_better ? s->median - x : x - s->median;
        double limit = fmax(SLOW_Z * 1.4826 * s->mad, SLOW_FLOOR * fabs(s->median));
        if (!(off > limit) || !(off > sp * fabs(x)))
            continue;
        json_t *e = json_object();
        json_object_set_new(e, "id", json_string(s->id));
        json_object_set_new(e, "unit", json_string(s->unit));
        json_object_set_new(e, "value", json_real(x));
        json_object_set_new(e, "spread", json_real(sp));
        json_object_set_new(e, "group_median", json_real(s->median));
        json_object_set_new(e, "group_mad", json_real(s->mad));
        json_object_set_new(e, "limit",
                            json_real(higher_better ? s->median - limit : s->median + limit));
        json_object_set_new(e, "nodes", json_integer((json_int_t)s->n));
        json_array_append_new(out, e);
    }
    if (!json_array_size(out)) {
        json_decref(out);
        return NULL;
    }
    return out;
}

static void count(struct fleet *f, const char *cls)
{
    json_t *v = json_object_get(f->summary, cls);
    json_object_set_new(f->summary, cls, json_integer(json_integer_value(v) + 1));
}

static json_t *classify(struct fleet *f, struct group *g, size_t idx, struct outs *o)
{
    const json_t *node = json_array_get(f->nodes, idx);
    json_t *classes = json_array(), *ev = json_object();
    if (!ran(node)) {
        json_array_append_new(classes, json_string("could_not_run"));
        const char *why = sget(node, "reason");
        json_object_set_new(ev, "reason", json_string(why ? why : "no reason given"));
    } else {
        if (!on_stack(g, node)) {
            json_t *diff = json_array();
            gv_fleet_stack_diff(g->stack_obj, json_object_get(node, "stack"), diff,
                                GV_FLEET_DIFF_MAX);
            json_array_append_new(classes, json_string("stack_drift"));
            json_object_set_new(ev, "stack_digest", json_string(sget(node, "stack_digest")));
            json_object_set_new(ev, "diff", diff);
        } else {
            json_t *cases = numerics(f, g, node, (int)idx, o);
            if (cases) {
                json_array_append_new(classes, json_string("numerics_outlier"));
                json_object_set_new(ev, "cases", cases);
            }
        }
        json_t *b = slow(g, node);
        if (b) {
            json_array_append_new(classes, json_string("slow"));
            json_object_set_new(ev, "bench", b);
        }
    }
    if (!json_array_size(classes)) {
        json_decref(classes);
        json_decref(ev);
        return NULL;
    }
    json_t *odd = json_object();
    json_object_set_new(odd, "node", json_string(sget(node, "node")));
    json_object_set_new(odd, "rank",
                        json_integer(json_integer_value(json_object_get(node, "rank"))));
    json_object_set(odd, "class", json_array_get(classes, 0));
    json_object_set_new(odd, "classes", classes);
    json_object_set_new(odd, "evidence", ev);
    size_t i;
    json_t *c;
    json_array_foreach(classes, i, c)
        count(f, json_string_value(c));
    count(f, "odd");
    return odd;
}

/* ---- the fleet document ---- */

static json_t *key_json(const struct group *g)
{
    json_t *k = json_object();
    if (!g->key[0]) {
        json_object_set_new(k, "model", json_null());
        return k;
    }
    json_object_set(k, "model", json_object_get(g->hw, "model"));
    json_object_set(k, "compute_units", json_object_get(g->hw, "compute_units"));
    json_object_set(k, "driver", json_object_get(g->hw, "driver"));
    return k;
}

static void cases_json(struct group *g, json_t *gj)
{
    json_t *cases = json_array(), *split = json_array();
    for (size_t i = 0; i < g->ncs; i++) {
        struct gcase *c = &g->cs[i];
        json_t *e = json_object();
        json_object_set_new(e, "id", json_string(c->id));
        json_object_set_new(e, "voters", json_integer(c->voters));
        if (c->nondet)
            json_object_set_new(e, "not_run_to_run_identical_on", json_integer(c->nondet));
        if (c->major >= 0) {
            json_object_set_new(e, "majority_digest", json_string(major_digest(c)));
            json_object_set_new(e, "nodes_agreeing", json_integer(g->votes[c->major].count));
        } else if (c->voters > 0) {
            int largest = 0;
            for (size_t k = 0; k < c->digests.cap; k++)
                if (c->digests.keys[k] && g->votes[c->digests.vals[k]].count > largest)
                    largest = g->votes[c->digests.vals[k]].count;
            json_t *s = json_object();
            json_object_set_new(s, "id", json_string(c->id));
            json_object_set_new(s, "voters", json_integer(c->voters));
            json_object_set_new(s, "digests", json_integer((json_int_t)c->digests.n));
            json_object_set_new(s, "largest", json_integer(largest));
            json_array_append_new(split, s);
        }
        json_array_append_new(cases, e);
    }
    json_object_set_new(gj, "cases", cases);
    json_object_set_new(gj, "split", split);
}

static int group_json(struct fleet *f, struct group *g, json_t *groups, struct gv_err *err)
{
    if (tally(f, g, err))
        return err->code;
    majorities(g);
    json_t *gj = json_object(), *odd = json_array();
    json_object_set_new(gj, "key", key_json(g));
    json_object_set_new(gj, "nodes", json_integer((json_int_t)g->n));
    json_object_set_new(gj, "stack_digest", g->stack ? json_string(g->stack) : json_null());
    json_object_set_new(gj, "stack_nodes", json_integer(g->stack_count));
    json_object_set_new(gj, "stack_distinct", json_integer((json_int_t)g->stacks.n));
    struct outs o = {-1, -1, {0}, {0}, 0, 0, ""};
    for (size_t m = 0; m < g->n; m++) {
        json_t *e = classify(f, g, g->members[m], &o);
        if (e)
            json_array_append_new(odd, e);
    }
    outs_free(&o);
    json_object_set_new(gj, "odd", odd);
    cases_json(g, gj);
    json_t *split = json_object_get(gj, "split");
    json_object_set_new(
        f->summary, "split_cases",
        json_integer(json_integer_value(json_object_get(f->summary, "split_cases")) +
                     (json_int_t)json_array_size(split)));
    json_array_append_new(groups, gj);
    return GV_OK;
}

static void group_free(struct group *g)
{
    for (size_t i = 0; i < g->ncs; i++)
        gv_fmap_free(&g->cs[i].digests);
    for (size_t i = 0; i < g->nbs; i++)
        free(g->bs[i].vals);
    gv_fmap_free(&g->stacks);
    gv_fmap_free(&g->cases);
    gv_fmap_free(&g->bench);
    free(g->cs);
    free(g->bs);
    free(g->votes);
    free(g->members);
    free(g->key);
}

#define MISSING_LISTED 1000

/* Ranks below size without a document, whatever the order of nodes. */
static int missing(struct fleet *f, json_t *doc, struct gv_err *err)
{
    json_int_t size = json_integer_value(json_object_get(json_array_get(f->nodes, 0), "size"));
    if (gv_fleet_by_hand(f->nodes))
        size = 0; /* every node its own run of one: none is expected that is not here */
    unsigned char *seen = calloc((size_t)size / 8 + 1, 1);
    if (!seen)
        return gv_err_set(err, GV_E_NOMEM, "out of memory");
    size_t i;
    const json_t *n;
    json_array_foreach(f->nodes, i, n) {
        json_int_t r = json_integer_value(json_object_get(n, "rank"));
        if (r >= 0 && r < size)
            seen[r / 8] |= (unsigned char)(1u << (r % 8));
    }
    json_t *list = json_array();
    long long count = 0;
    for (json_int_t r = 0; r < size; r++)
        if (!(seen[r / 8] & (1u << (r % 8))) && count++ < MISSING_LISTED)
            json_array_append_new(list, json_integer(r));
    free(seen);
    json_object_set_new(doc, "ranks_expected",
                        json_integer(size ? size : (json_int_t)json_array_size(f->nodes)));
    json_object_set_new(doc, "missing", list);
    json_object_set_new(f->summary, "missing", json_integer(count));
    return GV_OK;
}

static json_t *summary_new(void)
{
    json_t *s = json_object();
    static const char *const keys[] = {"odd",  "could_not_run", "stack_drift", "numerics_outlier",
                                       "slow", "missing",       "split_cases"};
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++)
        json_object_set_new(s, keys[i], json_integer(0));
    return s;
}

int gv_fleet_compare(const json_t *nodes, const char *dir, json_t **fleet, struct gv_err *err)
{
    *fleet = NULL;
    if (!json_array_size(nodes))
        return gv_err_set(err, GV_E_FORMAT, "no node documents to compare");
    struct fleet f = {nodes, dir ? dir : "", {0}, NULL, 0, 0, summary_new()};
    json_t *doc = json_object(), *groups = json_array();
    json_object_set_new(doc, "schema", json_string(GV_FLEET_SCHEMA));
    json_object_set_new(doc, "schema_version", json_integer(GV_FLEET_SCHEMA_VERSION));
    json_object_set_new(doc, "gpuvet_version", json_string(GPUVET_VERSION));
    gv_json_set_utc_now(doc, "created");
    json_object_set_new(doc, "nodes", json_integer((json_int_t)json_array_size(nodes)));
    int rc = GV_OK;
    for (size_t i = 0; i < json_array_size(nodes) && !rc; i++)
        rc = add_member(&f, i, err);
    for (size_t gi = 0; gi < f.ng && !rc; gi++)
        rc = group_json(&f, &f.g[gi], groups, err);
    if (!rc)
        rc = missing(&f, doc, err);
    json_object_set_new(doc, "groups", groups);
    json_object_set_new(doc, "summary", f.summary);
    for (size_t gi = 0; gi < f.ng; gi++)
        group_free(&f.g[gi]);
    free(f.g);
    gv_fmap_free(&f.keys);
    if (rc) {
        json_decref(doc);
        return rc;
    }
    *fleet = doc;
    return GV_OK;
}
