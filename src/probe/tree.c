/* Accumulation order from swamping answers (FPRev, docs/facts/numerics-methods.md §3):
 * L(i, j) is the size of the smallest subtree holding leaves i and j. For a
 * set S whose pairs outside one subtree all answer `limit`, a pivot p = S[0]
 * splits S into the leaves that share a subtree with p below limit and the
 * rest; the distinct answers l1 < l2 < ... of the first group are the
 * ancestors of p, of those sizes, and the leaves answering l_k hang below
 * ancestor k as subtrees of their own (found the same way with limit l_k).
 * All pivots of one level are asked in one batch. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/sha256.h"
#include "probe/probe.h"

struct task {
    int *s;
    int ns;
    int limit;
    int target; /* node that receives the trees found */
};

struct tasks {
    struct task *t;
    int n, cap;
};

static int push_task(struct tasks *q, int *s, int ns, int limit, int target)
{
    if (q->n == q->cap) {
        int nc = q->cap ? q->cap * 2 : 16;
        struct task *x = realloc(q->t, (size_t)nc * sizeof *x);
        if (!x)
            return -1;
        q->t = x;
        q->cap = nc;
    }
    q->t[q->n++] = (struct task){s, ns, limit, target};
    return 0;
}

static int new_node(struct gv_tree *t, int leaf)
{
    if (t->nnodes == t->cap) {
        int nc = t->cap * 2 + 8;
        struct gv_tree_node *x = realloc(t->nodes, (size_t)nc * sizeof *x);
        if (!x)
            return -1;
        t->nodes = x;
        t->cap = nc;
    }
    t->nodes[t->nnodes] = (struct gv_tree_node){leaf, 0, NULL, leaf >= 0 ? 1 : 0, leaf};
    return t->nnodes++;
}

static int add_child(struct gv_tree *t, int parent, int child)
{
    struct gv_tree_node *p = &t->nodes[parent];
    int *x = realloc(p->child, (size_t)(p->nchild + 1) * sizeof *x);
    if (!x)
        return -1;
    p->child = x;
    p->child[p->nchild++] = child;
    return 0;
}

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* Sizes, smallest leaves and child order, bottom-up; -1 on a cycle or a
 * node reached twice (answers that are no tree). */
static int finish_node(struct gv_tree *t, int id, char *seen, int depth)
{
    if (depth > t->n + 2 || seen[id])
        return -1;
    seen[id] = 1;
    struct gv_tree_node *nd = &t->nodes[id];
    if (nd->leaf >= 0)
        return 0;
    nd->size = 0;
    nd->lo = INT_MAX;
    for (int i = 0; i < nd->nchild; i++) {
        if (finish_node(t, nd->child[i], seen, depth + 1))
            return -1;
        nd = &t->nodes[id];
        nd->size += t->nodes[nd->child[i]].size;
        if (t->nodes[nd->child[i]].lo < nd->lo)
            nd->lo = t->nodes[nd->child[i]].lo;
    }
    /* children by smallest leaf (insertion sort: few children) */
    for (int i = 1; i < nd->nchild; i++)
        for (int j = i; j > 0 && t->nodes[nd->child[j]].lo < t->nodes[nd->child[j - 1]].lo; j--) {
            int x = nd->child[j];
            nd->child[j] = nd->child[j - 1];
            nd->child[j - 1] = x;
        }
    return 0;
}

struct pending {
    int node;
    int want; /* the size the answers promised */
};

/* Processes one task given L of its pivot against s[1..]. */
static int split(struct gv_tree *t, struct tasks *next, const struct task *k, const int *L,
                 struct pending **pend, int *npend, int *pcap)
{
    int p = k->s[0], ns = k->ns;
    int *mine = malloc((size_t)ns * sizeof *mine), *rest = malloc((size_t)ns * sizeof *rest);
    int *vals = malloc((size_t)ns * sizeof *vals);
    int nm = 0, nr = 0, nv = 0, rc = -1;
    if (!mine || !rest || !vals)
        goto out;
    for (int q = 1; q < ns; q++) {
        if (L[q - 1] < 2 || L[q - 1] > t->n || L[q - 1] > k->limit) {
            snprintf(t->bad, sizeof t->bad, "L(%d,%d) = %d is no subtree size (limit %d)", p,
                     k->s[q], L[q - 1], k->limit);
            rc = 1;
            goto out;
        }
        if (L[q - 1] < k->limit) {
            mine[nm++] = q;
            vals[nv++] = L[q - 1];
        } else {
            rest[nr++] = k->s[q];
        }
    }
    qsort(vals, (size_t)nv, sizeof *vals, cmp_int);
    int cur = p; /* the subtree of p built so far */
    for (int v = 0; v < nv; v++) {
        if (v && vals[v] == vals[v - 1])
            continue;
        int anc = new_node(t, -1);
        if (anc < 0 || add_child(t, anc, cur))
            goto out;
        int *g = malloc((size_t)nm * sizeof *g), ng = 0;
        if (!g)
            goto out;
        for (int i = 0; i < nm; i++)
            if (L[mine[i] - 1] == vals[v])
                g[ng++] = k->s[mine[i]];
        if (push_task(next, g, ng, vals[v], anc)) {
            free(g);
            goto out;
        }
        if (*npend == *pcap) {
            int nc = *pcap * 2 + 16;
            struct pending *x = realloc(*pend, (size_t)nc * sizeof *x);
            if (!x)
                goto out;
            *pend = x;
            *pcap = nc;
        }
        (*pend)[(*npend)++] = (struct pending){anc, vals[v]};
        cur = anc;
    }
    if (add_child(t, k->target, cur))
        goto out;
    if (nr) {
        int *r2 = malloc((size_t)nr * sizeof *r2);
        if (!r2)
            goto out;
        memcpy(r2, rest, (size_t)nr * sizeof *r2);
        if (push_task(next, r2, nr, k->limit, k->target)) {
            free(r2);
            goto out;
        }
    }
    rc = 0;
out:
    free(mine);
    free(rest);
    free(vals);
    return rc;
}

int gv_tree_recover(int n, gv_swamp_fn fn, void *ctx, struct gv_tree *t, struct gv_err *err)
{
    memset(t, 0, sizeof *t);
    t->n = n;
    t->root = -1;
    struct tasks cur = {0}, next = {0};
    struct pending *pend = NULL;
    int npend = 0, pcap = 0, rc = GV_OK;
    int *qi = NULL, *qj = NULL, *L = NULL;
    for (int i = 0; i < n; i++)
        if (new_node(t, i) < 0)
            goto oom;
    int holder = new_node(t, -1);
    int *all = malloc((size_t)(n > 0 ? n : 1) * sizeof *all);
    if (holder < 0 || !all)
        goto oom;
    for (int i = 0; i < n; i++)
        all[i] = i;
    if (push_task(&cur, all, n, INT_MAX, holder)) {
        free(all);
        goto oom;
    }
    while (cur.n && !t->bad[0]) {
        int total = 0;
        for (int i = 0; i < cur.n; i++)
            total += cur.t[i].ns - 1;
        free(qi);
        free(qj);
        free(L);
        qi = malloc((size_t)(total + 1) * sizeof *qi);
        qj = malloc((size_t)(total + 1) * sizeof *qj);
        L = malloc((size_t)(total + 1) * sizeof *L);
        if (!qi || !qj || !L)
            goto oom;
        int q = 0;
        for (int i = 0; i < cur.n; i++)
            for (int j = 1; j < cur.t[i].ns; j++, q++)
                qi[q] = cur.t[i].s[0], qj[q] = cur.t[i].s[j];
        if (total) {
            if ((rc = fn(ctx, n, total, qi, qj, L, err)))
                goto done;
            t->queries += total;
            t->rounds++;
        }
        q = 0;
        for (int i = 0; i < cur.n && !t->bad[0]; i++) {
            int r = split(t, &next, &cur.t[i], L + q, &pend, &npend, &pcap);
            if (r < 0)
                goto oom;
            q += cur.t[i].ns - 1;
        }
        for (int i = 0; i < cur.n; i++)
            free(cur.t[i].s);
        cur.n = 0;
        struct tasks x = cur;
        cur = next;
        next = x;
    }
    if (!t->bad[0]) {
        struct gv_tree_node *h = &t->nodes[holder];
        if (h->nchild != 1) {
            snprintf(t->bad, sizeof t->bad, "the answers give %d separate trees", h->nchild);
        } else {
            t->root = h->child[0];
            char *seen = calloc((size_t)t->nnodes, 1);
            if (!seen)
                goto oom;
            if (finish_node(t, t->root, seen, 0))
                snprintf(t->bad, sizeof t->bad, "the answers do not form a tree");
            free(seen);
            for (int i = 0; i < npend && !t->bad[0]; i++)
                if (t->nodes[pend[i].node].size != pend[i].want)
                    snprintf(t->bad, sizeof t->bad,
                             "a subtree the answers say has %d leaves has %d", pend[i].want,
                             t->nodes[pend[i].node].size);
        }
    }
    goto done;
oom:
    rc = gv_err_set(err, GV_E_NOMEM, "accumulation order: out of memory");
done:
    for (int i = 0; i < cur.n; i++)
        free(cur.t[i].s);
    for (int i = 0; i < next.n; i++)
        free(next.t[i].s);
    free(cur.t);
    free(next.t);
    free(pend);
    free(qi);
    free(qj);
    free(L);
    return rc;
}

void gv_tree_free(struct gv_tree *t)
{
    for (int i = 0; i < t->nnodes; i++)
        free(t->nodes[i].child);
    free(t->nodes);
    memset(t, 0, sizeof *t);
}

/* ---------- canonical form ---------- */

struct sbuf {
    char *p;
    size_t len, cap;
    int fail;
};

static void sput(struct sbuf *b, const char *s)
{
    size_t n = strlen(s);
    if (b->fail)
        return;
    if (b->len + n + 1 > b->cap) {
        size_t nc = (b->len + n + 1) * 2;
        char *x = realloc(b->p, nc);
        if (!x) {
            b->fail = 1;
            return;
        }
        b->p = x;
        b->cap = nc;
    }
    memcpy(b->p + b->len, s, n + 1);
    b->len += n;
}

static void canon(const struct gv_tree *t, int id, struct sbuf *b, int depth)
{
    const struct gv_tree_node *nd = &t->nodes[id];
    char num[16];
    if (nd->leaf >= 0) {
        snprintf(num, sizeof num, "%d", nd->leaf);
        sput(b, num);
        return;
    }
    if (depth > t->n + 1)
        return;
    sput(b, "(");
    for (int i = 0; i < nd->nchild; i++) {
        if (i)
            sput(b, " ");
        canon(t, nd->child[i], b, depth + 1);
    }
    sput(b, ")");
}

static char *canon_full(const struct gv_tree *t)
{
    struct sbuf b = {0};
    if (t->root >= 0 && !t->bad[0])
        canon(t, t->root, &b, 0);
    else
        sput(&b, "undetermined");
    if (b.fail) {
        free(b.p);
        return NULL;
    }
    return b.p;
}

void gv_tree_canon(const struct gv_tree *t, char *out, size_t n)
{
    char *s = canon_full(t);
    if (!s) {
        snprintf(out, n, "?");
        return;
    }
    if (strlen(s) < n)
        snprintf(out, n, "%s", s);
    else if (n > 4)
        snprintf(out, n, "%.*s...", (int)(n - 4), s);
    free(s);
}

void gv_tree_hash(const struct gv_tree *t, char hex[65])
{
    char *s = canon_full(t);
    gv_sha256_buf_hex(s ? s : "", s ? strlen(s) : 0, hex);
    free(s);
}

int gv_tree_max_fused(const struct gv_tree *t)
{
    int joined = 0, bottom = 0; /* leaves joining a partial sum; leaves of a first node */
    for (int i = t->n; i < t->nnodes; i++) {
        const struct gv_tree_node *nd = &t->nodes[i];
        int leaves = 0;
        for (int c = 0; c < nd->nchild; c++)
            leaves += t->nodes[nd->child[c]].leaf >= 0;
        if (leaves < nd->nchild && leaves > joined)
            joined = leaves;
        else if (leaves == nd->nchild && leaves > bottom)
            bottom = leaves;
    }
    /* a first node of two leaves is one addition (0 + p0 was exact); of b > 2
     * leaves, a block of b products that started from zero */
    int first = bottom > 2 ? bottom : bottom > 0 ? 1 : 0;
    return joined > first ? joined : first;
}

/* ---------- summary ---------- */

/* A chain of leaves: at most one inner child, itself a chain holding the
 * smallest leaves; the other children are leaves above it. *step: leaves
 * added by each node above the bottom one (0 when they differ). */
static int leaf_chain(const struct gv_tree *t, int id, int *step, int depth)
{
    const struct gv_tree_node *nd = &t->nodes[id];
    if (nd->leaf >= 0 || depth > t->n)
        return 0;
    int inner = -1, leaves = 0;
    for (int i = 0; i < nd->nchild; i++) {
        const struct gv_tree_node *c = &t->nodes[nd->child[i]];
        if (c->leaf >= 0) {
            leaves++;
            continue;
        }
        if (inner >= 0 || i != 0)
            return 0; /* two inner children, or the inner one not first */
        inner = nd->child[i];
    }
    if (inner < 0) { /* the bottom node */
        if (*step < 0)
            *step = leaves; /* a chain of one node */
        return 1;
    }
    /* the leaves must follow the inner chain's range */
    for (int i = 1; i < nd->nchild; i++)
        if (t->nodes[nd->child[i]].lo != t->nodes[inner].lo + t->nodes[inner].size + i - 1)
            return 0;
    if (*step < 0)
        *step = leaves;
    else if (*step != leaves)
        *step = 0;
    return leaf_chain(t, inner, step, depth + 1);
}

/* A chain whatever the order of its leaves: each node has at most one inner
 * child; *step as in leaf_chain. */
static int any_chain(const struct gv_tree *t, int id, int *step, int depth)
{
    const struct gv_tree_node *nd = &t->nodes[id];
    if (nd->leaf >= 0 || depth > t->n)
        return 0;
    int inner = -1, leaves = 0;
    for (int i = 0; i < nd->nchild; i++) {
        if (t->nodes[nd->child[i]].leaf >= 0)
            leaves++;
        else if (inner >= 0)
            return 0;
        else
            inner = nd->child[i];
    }
    if (inner < 0 || *step < 0)
        *step = *step < 0 ? leaves : *step;
    else if (*step != leaves)
        *step = 0;
    return inner < 0 ? 1 : any_chain(t, inner, step, depth + 1);
}

static int balanced(const struct gv_tree *t, int id, int depth)
{
    const struct gv_tree_node *nd = &t->nodes[id];
    if (nd->leaf >= 0)
        return 1;
    if (nd->nchild != 2 || depth > 64)
        return 0;
    const struct gv_tree_node *a = &t->nodes[nd->child[0]], *b = &t->nodes[nd->child[1]];
    return a->size == b->size && balanced(t, nd->child[0], depth + 1) &&
           balanced(t, nd->child[1], depth + 1);
}

static void chain_words(int step, char *out, size_t n)
{
    if (step == 1)
        snprintf(out, n, "sequential");
    else if (step > 1)
        snprintf(out, n, "sequential, %d terms per rounding", step);
    else
        snprintf(out, n, "sequential, uneven steps");
}

/* Describes node id: a chain, pairwise, or chunks (maximal chains of
 * leaves) combined by a pattern described in the same words. */
static void describe(const struct gv_tree *t, int id, char *out, size_t n, int depth)
{
    int step = -1;
    if (t->nodes[id].leaf >= 0) {
        snprintf(out, n, "single term");
        return;
    }
    if (leaf_chain(t, id, &step, 0)) {
        chain_words(step, out, n);
        return;
    }
    if (balanced(t, id, 0)) {
        snprintf(out, n, "pairwise");
        return;
    }
    step = -1;
    if (any_chain(t, id, &step, 0)) {
        chain_words(step, out, n);
        snprintf(out + strlen(out), n - strlen(out), ", terms in a permuted order");
        return;
    }
    if (depth > 3) {
        snprintf(out, n, "irregular");
        return;
    }
    /* the chunks: children of the root's left spine that are chains */
    const struct gv_tree_node *nd = &t->nodes[id];
    int size = -1, same = 1, cstep = -1, nchunks = 0, outer_step = -1, outer_chain = 1;
    int cur = id;
    while (cur >= 0 && t->nodes[cur].leaf < 0) {
        const struct gv_tree_node *c = &t->nodes[cur];
        int next = -1;
        int s0 = -1;
        if (c->nchild && leaf_chain(t, c->child[0], &s0, 0))
            next = -1; /* the first child is itself a chunk: the spine ends here */
        else if (c->nchild)
            next = c->child[0];
        for (int i = next >= 0 ? 1 : 0; i < c->nchild; i++) {
            int s = -1;
            const struct gv_tree_node *k = &t->nodes[c->child[i]];
            if (!leaf_chain(t, c->child[i], &s, 0)) {
                same = 0;
                continue;
            }
            nchunks++;
            if (size < 0)
                size = k->size;
            else if (size != k->size)
                same = 0;
            if (cstep < 0)
                cstep = s;
            else if (cstep != s)
                same = 0;
        }
        int added = c->nchild - (next >= 0 ? 1 : 0);
        if (outer_step < 0)
            outer_step = added;
        else if (outer_step != added && next >= 0)
            outer_chain = 0;
        cur = next;
    }
    (void)nd;
    if (same && nchunks > 1 && size > 0) {
        char inner[64];
        chain_words(cstep, inner, sizeof inner);
        snprintf(out, n, "chunks of %d (%s), combined %s", size, inner,
                 outer_chain ? (outer_step == 1 || nchunks == 2 ? "sequentially"
                                                                : "sequentially, several per rounding")
                             : "irregularly");
        return;
    }
    snprintf(out, n, "irregular");
}

void gv_tree_summary(const struct gv_tree *t, char *out, size_t n)
{
    if (t->bad[0] || t->root < 0) {
        snprintf(out, n, "undetermined");
        return;
    }
    describe(t, t->root, out, n, 0);
}
