/* Which bytes of a kept ELF file a snapshot reads (docs/image.md, "What is
 * read, and how"): all of them but the device code inside its clang offload
 * bundles, of which only each code object's first page is written (the scan
 * reads a code object's ELF header, src/env/offload.c). The rest of a code
 * object is a hole of the sparse file: ROCm's libraries are mostly such code
 * (1.9 of trixie's 2.4 GB of large libraries are .hip_fatbin).
 *
 * The file is seen once, in order, so a bundle is found by its magic as the
 * bytes pass; its entry table (right behind the magic) is collected and read
 * by env's own bundle reader before any of its code objects arrive. A stray
 * magic (the string in a loader's .rodata) has no valid table behind it and
 * changes nothing. */
#include "image/sparse.h"

#include <stdlib.h>
#include <string.h>

#include "env/offload.h"

#define MAGIC "__CLANG_OFFLOAD_BUNDLE__"
#define MAGIC_LEN 24
/* Bytes collected behind a magic for its entry table (read as soon as it is
 * whole): about a thousand entries. */
#define TABLE_MAX (64u << 10)
/* Bytes written of each code object: its ELF header and more. */
#define KEEP_CODE 4096

void gv_sparse_start(struct gv_sparse *sp, long long size)
{
    memset(sp, 0, sizeof *sp);
    sp->size = size;
    sp->bundle_at = -1;
}

void gv_sparse_end(struct gv_sparse *sp)
{
    free(sp->table);
    free(sp->skip);
    memset(sp, 0, sizeof *sp);
    sp->bundle_at = -1;
}

static int cmp_range(const void *a, const void *b)
{
    const struct gv_sparse_range *x = a, *y = b;
    return x->from < y->from ? -1 : x->from > y->from;
}

static int add_skip(struct gv_sparse *sp, long long from, long long to)
{
    if (to <= from)
        return 0;
    if (sp->nskip == sp->cap) {
        size_t cap = sp->cap ? 2 * sp->cap : 64;
        struct gv_sparse_range *r = realloc(sp->skip, cap * sizeof *r);
        if (!r)
            return -1;
        sp->skip = r;
        sp->cap = cap;
    }
    sp->skip[sp->nskip++] = (struct gv_sparse_range){from, to};
    return 0;
}

/* Ranges behind first, sorted and merged (a new bundle's are usually last). */
static void tidy(struct gv_sparse *sp)
{
    size_t n = sp->nskip - sp->first;
    if (n < 2)
        return;
    struct gv_sparse_range *r = sp->skip + sp->first;
    qsort(r, n, sizeof *r, cmp_range);
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (k && r[i].from <= r[k - 1].to) {
            if (r[i].to > r[k - 1].to)
                r[k - 1].to = r[i].to;
        } else {
            r[k++] = r[i];
        }
    }
    sp->nskip = sp->first + k;
}

/* Reads the table behind the magic at bundle_at from the bytes collected so
 * far: its code objects, past their first page, become holes (none before
 * from: those bytes are written already, or now). 1 read, 0 not (yet), -1 out
 * of memory. */
static int read_table(struct gv_sparse *sp, long long from)
{
    struct gv_offload_span *spans;
    size_t n;
    uint64_t table_len;
    struct gv_err e = {0};
    if (gv_offload_bundle_spans(sp->table, sp->have, (uint64_t)(sp->size - sp->bundle_at), &spans,
                                &n, &table_len, &e) != GV_OK)
        return 0; /* more bytes needed, or a stray magic with no table */
    for (size_t i = 0; i < n; i++) {
        if (spans[i].offset < table_len || spans[i].size <= KEEP_CODE)
            continue;
        long long a = sp->bundle_at + (long long)spans[i].offset + KEEP_CODE;
        long long b = sp->bundle_at + (long long)(spans[i].offset + spans[i].size);
        if (add_skip(sp, a > from ? a : from, b) != 0) {
            free(spans);
            return -1;
        }
    }
    free(spans);
    tidy(sp);
    sp->bundles++;
    return 1;
}

/* Where the next magic starts in p[0..n) (stream offset at), the bytes of
 * the previous piece in sp->tail included; -1 when none. */
static long long find_magic(struct gv_sparse *sp, const unsigned char *p, size_t n, long long at)
{
    if (sp->ntail) {
        unsigned char joint[2 * MAGIC_LEN];
        size_t k = n < MAGIC_LEN - 1 ? n : MAGIC_LEN - 1;
        memcpy(joint, sp->tail, sp->ntail);
        memcpy(joint + sp->ntail, p, k);
        const unsigned char *m = memmem(joint, sp->ntail + k, MAGIC, MAGIC_LEN);
        if (m)
            return at - (long long)sp->ntail + (m - joint);
    }
    const unsigned char *m = memmem(p, n, MAGIC, MAGIC_LEN);
    return m ? at + (m - p) : -1;
}

static void keep_tail(struct gv_sparse *sp, const unsigned char *p, size_t n)
{
    if (n >= MAGIC_LEN - 1) {
        memcpy(sp->tail, p + n - (MAGIC_LEN - 1), MAGIC_LEN - 1);
        sp->ntail = MAGIC_LEN - 1;
    } else {
        size_t drop = sp->ntail + n > MAGIC_LEN - 1 ? sp->ntail + n - (MAGIC_LEN - 1) : 0;
        memmove(sp->tail, sp->tail + drop, sp->ntail - drop);
        memcpy(sp->tail + sp->ntail - drop, p, n);
        sp->ntail = sp->ntail - drop + n;
    }
}

/* The end of the skip range holding off, or off; *next: where the next begins
 * (-1: none). Looks from *from on and moves it past the ranges behind off. */
static long long skip_at(const struct gv_sparse *sp, size_t *from, long long off, long long *next)
{
    while (*from < sp->nskip && sp->skip[*from].to <= off)
        (*from)++;
    if (*from == sp->nskip) {
        *next = -1;
        return off;
    }
    const struct gv_sparse_range *r = &sp->skip[*from];
    *next = r->from;
    return r->from <= off ? r->to : off;
}

/* Starts collecting the table of the magic at q (some of its bytes may be in
 * the tail of the previous piece). */
static int start_table(struct gv_sparse *sp, long long q, long long at)
{
    long long room = sp->size - q;
    sp->want = room < (long long)TABLE_MAX ? (size_t)room : TABLE_MAX;
    if (!sp->table && !(sp->table = malloc(TABLE_MAX)))
        return -1;
    sp->bundle_at = q;
    sp->have = 0;
    if (q < at) { /* the magic began in the previous piece */
        size_t k = (size_t)(at - q);
        memcpy(sp->table, sp->tail + sp->ntail - k, k);
        sp->have = k;
    }
    sp->ntail = 0;
    return 0;
}

int gv_sparse_feed(struct gv_sparse *sp, const unsigned char *p, size_t n)
{
    long long base = sp->pos, end = base + (long long)n, c = base;
    while (c < end) {
        if (sp->bundle_at >= 0) {
            size_t k = sp->want - sp->have;
            if ((long long)k > end - c)
                k = (size_t)(end - c);
            memcpy(sp->table + sp->have, p + (c - base), k);
            sp->have += k;
            c += (long long)k;
            int got = sp->have >= MAGIC_LEN + 8 ? read_table(sp, base) : 0;
            if (got < 0)
                return -1;
            if (got || sp->have == sp->want)
                sp->bundle_at = -1; /* read, or no table within TABLE_MAX */
            continue;
        }
        size_t at = sp->first; /* the piece is written after: first stays */
        long long next, s = skip_at(sp, &at, c, &next);
        if (s > c) { /* inside a code object: nothing to look for */
            sp->ntail = 0;
            c = s;
            continue;
        }
        long long stop = next >= 0 && next < end ? next : end;
        long long q = find_magic(sp, p + (c - base), (size_t)(stop - c), c);
        if (q >= 0) {
            if (start_table(sp, q, c) != 0)
                return -1;
            c = q > c ? q : c;
            continue;
        }
        keep_tail(sp, p + (c - base), (size_t)(stop - c));
        c = stop;
    }
    sp->pos = end;
    return 0;
}

size_t gv_sparse_run(struct gv_sparse *sp, long long off, size_t n, int *write)
{
    long long next, s = skip_at(sp, &sp->first, off, &next);
    if (s > off) {
        *write = 0;
        return s - off < (long long)n ? (size_t)(s - off) : n;
    }
    *write = 1;
    return next >= 0 && next - off < (long long)n ? (size_t)(next - off) : n;
}
