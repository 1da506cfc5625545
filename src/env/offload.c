/* GPU targets compiled into a host ELF, read from the device-code sections
 * without executing anything (docs/facts/rocm-facts.md §7b, §7c):
 *   .hip_fatbin  clang offload bundles, plain ("__CLANG_OFFLOAD_BUNDLE__") or
 *                compressed ("CCOB" v1/v2/v3, zlib or zstd);
 *   .nv_fatbin   NVIDIA fatbin containers (magic 0xBA55ED50).
 * Each bundle/container is found by its magic at an 8-byte aligned offset and
 * then skipped as a whole, so a section is scanned in linear time. Compressed
 * bundles are decompressed as a stream into a small buffer: memory stays
 * bounded whatever the bundle size. */
#include "env/offload.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include "env/elf.h"

#define BUNDLE_MAGIC "__CLANG_OFFLOAD_BUNDLE__"
#define BUNDLE_MAGIC_LEN 24
#define CCOB_MAGIC "CCOB"
#define NV_FATBIN_MAGIC 0xBA55ED50u
#define EM_AMDGPU 224
#define EF_AMDGPU_MACH 0xffu

/* ---- little-endian readers (the formats are little-endian) ---- */

static uint16_t le16(const uint8_t *p)
{
    return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t le64(const uint8_t *p)
{
    return (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32;
}

static int fits(uint64_t off, uint64_t len, uint64_t total)
{
    return off <= total && len <= total - off;
}

static uint64_t align8(uint64_t v)
{
    return v > UINT64_MAX - 7 ? UINT64_MAX : (v + 7) & ~(uint64_t)7;
}

static int fmt_err(struct gv_err *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fmt_err(struct gv_err *err, const char *fmt, ...)
{
    char msg[900];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return gv_err_set(err, GV_E_FORMAT, "%s", msg);
}

/* ---- string sets ---- */

/* Names in insertion order plus an open-addressing index, so that adding is
 * O(1) however many entries a hostile section has. */
struct strset {
    char **v;
    size_t n, cap;
    size_t *slot; /* index + 1 into v; 0 = empty */
    size_t nslot; /* a power of two, 0 before the first add */
};

static uint64_t hash_str(const char *str)
{
    uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a */
    for (; *str; str++)
        h = (h ^ (uint8_t)*str) * 0x100000001b3ull;
    return h;
}

static size_t *set_find(const struct strset *s, const char *str)
{
    size_t mask = s->nslot - 1, i = (size_t)hash_str(str) & mask;
    while (s->slot[i] && strcmp(s->v[s->slot[i] - 1], str) != 0)
        i = (i + 1) & mask;
    return &s->slot[i];
}

static int set_grow(struct strset *s, struct gv_err *err)
{
    size_t nn = s->nslot ? s->nslot * 2 : 16;
    size_t *ns = calloc(nn, sizeof *ns);
    char **nv = realloc(s->v, nn / 2 * sizeof *nv);
    if (!ns || !nv) {
        free(ns);
        if (nv)
            s->v = nv;
        return gv_err_set(err, GV_E_NOMEM, "out of memory for target names");
    }
    free(s->slot);
    s->slot = ns;
    s->nslot = nn;
    s->v = nv;
    s->cap = nn / 2;
    for (size_t i = 0; i < s->n; i++)
        *set_find(s, s->v[i]) = i + 1;
    return GV_OK;
}

static int set_add(struct strset *s, const char *str, struct gv_err *err)
{
    if (s->nslot && *set_find(s, str))
        return GV_OK;
    if (s->n == GV_OFFLOAD_MAX_TARGETS)
        return fmt_err(err, "more than %d distinct targets", GV_OFFLOAD_MAX_TARGETS);
    if (s->n == s->cap) {
        int rc = set_grow(s, err);
        if (rc)
            return rc;
    }
    char *copy = strdup(str);
    if (!copy)
        return gv_err_set(err, GV_E_NOMEM, "out of memory for target names");
    s->v[s->n++] = copy;
    *set_find(s, copy) = s->n;
    return GV_OK;
}

static void set_free(struct strset *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->v[i]);
    free(s->v);
    free(s->slot);
    memset(s, 0, sizeof *s);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* What a scan collects before it is handed out as gv_offload_targets. */
struct scan {
    struct strset targets, ids;
    size_t n_entries, n_skipped, n_bundles, n_compressed, n_mismatch;
    unsigned flags;
    struct gv_err *err;
    ZSTD_DStream *zs; /* reused by every zstd bundle of a scan */
};

static void scan_to_out(struct scan *sc, struct gv_offload_targets *out)
{
    if (sc->targets.n)
        qsort(sc->targets.v, sc->targets.n, sizeof(char *), cmp_str);
    if (sc->ids.n)
        qsort(sc->ids.v, sc->ids.n, sizeof(char *), cmp_str);
    free(sc->targets.slot);
    free(sc->ids.slot);
    out->targets = sc->targets.v;
    out->n_targets = sc->targets.n;
    out->target_ids = sc->ids.v;
    out->n_target_ids = sc->ids.n;
    out->n_entries = sc->n_entries;
    out->n_skipped = sc->n_skipped;
    out->n_bundles = sc->n_bundles;
    out->n_compressed = sc->n_compressed;
    out->n_mismatch = sc->n_mismatch;
}

static void scan_free(struct scan *sc)
{
    set_free(&sc->targets);
    set_free(&sc->ids);
}

/* ---- AMDGPU names ---- */

struct mach {
    unsigned value;
    const char *name;
};

/* EF_AMDGPU_MACH values: docs/facts/rocm-facts.md §7b (LLVM ELF.h / AMDGPUUsage), plus the
 * GFX6-GFX8 values of the same LLVM table. gfx12-generic (0x059) is checked
 * by tests/unit/test_offload_names.c. */
static const struct mach mach_table[] = {
    {0x020, "gfx600"},  {0x021, "gfx601"},  {0x022, "gfx700"},  {0x023, "gfx701"},
    {0x024, "gfx702"},  {0x025, "gfx703"},  {0x026, "gfx704"},  {0x028, "gfx801"},
    {0x029, "gfx802"},  {0x02a, "gfx803"},  {0x02b, "gfx810"},  {0x02c, "gfx900"},
    {0x02d, "gfx902"},  {0x02e, "gfx904"},  {0x02f, "gfx906"},  {0x030, "gfx908"},
    {0x031, "gfx909"},  {0x032, "gfx90c"},  {0x033, "gfx1010"}, {0x034, "gfx1011"},
    {0x035, "gfx1012"}, {0x036, "gfx1030"}, {0x037, "gfx1031"}, {0x038, "gfx1032"},
    {0x039, "gfx1033"}, {0x03a, "gfx602"},  {0x03b, "gfx705"},  {0x03c, "gfx805"},
    {0x03d, "gfx1035"}, {0x03e, "gfx1034"}, {0x03f, "gfx90a"},  {0x040, "gfx940"},
    {0x041, "gfx1100"}, {0x042, "gfx1013"}, {0x043, "gfx1150"}, {0x044, "gfx1103"},
    {0x045, "gfx1036"}, {0x046, "gfx1101"}, {0x047, "gfx1102"}, {0x048, "gfx1200"},
    {0x049, "gfx1250"}, {0x04a, "gfx1151"}, {0x04b, "gfx941"},  {0x04c, "gfx942"},
    {0x04e, "gfx1201"}, {0x04f, "gfx950"},  {0x051, "gfx9-generic"},
    {0x052, "gfx10-1-generic"}, {0x053, "gfx10-3-generic"}, {0x054, "gfx11-generic"},
    {0x055, "gfx1152"}, {0x058, "gfx1153"}, {0x059, "gfx12-generic"},
};

const char *gv_amdgpu_mach_name(unsigned mach)
{
    for (size_t i = 0; i < sizeof mach_table / sizeof mach_table[0]; i++)
        if (mach_table[i].value == mach)
            return mach_table[i].name;
    return NULL;
}

void gv_gfx_name_from_target_version(unsigned v, char *out, size_t outsz)
{
    if (!out || outsz == 0)
        return;
    snprintf(out, outsz, "gfx%u%x%x", v / 10000, (v / 100) % 100, v % 100);
}

/* ---- entry IDs ---- */

static int id_char_ok(char c, int in_features)
{
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
        c == '-' || c == '.')
        return 1;
    return in_features && (c == ':' || c == '+');
}

/* Splits "<kind>-<triple>-<target-id>" into the kind and the target ID
 * ("gfx90a:xnack-"); *proc_len is the length of the processor part.
 * Returns 0 for an ID without a usable target ID. */
static int parse_id(const char *id, size_t len, char *kind, size_t kindsz, char *tid, size_t tidsz,
                    size_t *proc_len)
{
    const char *dash = memchr(id, '-', len);
    if (!dash || (size_t)(dash - id) >= kindsz)
        return 0;
    memcpy(kind, id, (size_t)(dash - id));
    kind[dash - id] = '\0';
    const char *colon = memchr(id, ':', len);
    size_t head = colon ? (size_t)(colon - id) : len;
    /* The processor starts at the last "-gfx" before the features; other
     * triples (nvptx64...) fall back to the last '-'-separated piece. */
    size_t start = 0;
    for (size_t i = 0; i + 4 <= head; i++)
        if (memcmp(id + i, "-gfx", 4) == 0)
            start = i + 1;
    if (start == 0)
        for (size_t i = head; i > 0; i--)
            if (id[i - 1] == '-') {
                start = i;
                break;
            }
    if (start == 0 || start >= head || len - start >= tidsz)
        return 0;
    for (size_t i = start; i < len; i++)
        if (!id_char_ok(id[i], i >= head))
            return 0;
    memcpy(tid, id + start, len - start);
    tid[len - start] = '\0';
    *proc_len = head - start;
    return 1;
}

/* ---- byte sources: memory, or a decompressing stream ---- */

struct dec {
    int method; /* 0 zlib, 1 zstd */
    z_stream z;
    int z_live;
    ZSTD_DStream *zs;
    const uint8_t *in;
    size_t in_len, in_pos;
    uint64_t limit; /* the header's uncompressed size */
    uint64_t produced;
    int ended;
};

struct src {
    const uint8_t *mem; /* memory source when non-NULL */
    uint64_t len;       /* bytes the bundle has */
    uint64_t pos;
    struct dec *dec;
};

/* *zs is created on first use and kept for the next bundle (its buffers are
 * worth reusing: a section can hold thousands of bundles). */
static int dec_init(struct dec *d, int method, const uint8_t *in, size_t in_len, uint64_t limit,
                    ZSTD_DStream **zs, struct gv_err *err)
{
    memset(d, 0, sizeof *d);
    d->method = method;
    d->in = in;
    d->in_len = in_len;
    d->limit = limit;
    if (method == 0) {
        if (inflateInit(&d->z) != Z_OK)
            return gv_err_set(err, GV_E_NOMEM, "zlib inflateInit failed");
        d->z_live = 1;
        return GV_OK;
    }
    if (!*zs && !(*zs = ZSTD_createDStream()))
        return gv_err_set(err, GV_E_NOMEM, "ZSTD_createDStream failed");
    if (ZSTD_isError(ZSTD_DCtx_reset(*zs, ZSTD_reset_session_only)))
        return gv_err_set(err, GV_E_NOMEM, "ZSTD_DCtx_reset failed");
    d->zs = *zs;
    return GV_OK;
}

static void dec_end(struct dec *d)
{
    if (d->z_live)
        inflateEnd(&d->z);
    d->z_live = 0;
    d->zs = NULL;
}

/* One decompression call: appends to buf[*got..n). */
static int dec_step(struct dec *d, uint8_t *buf, size_t n, size_t *got, struct gv_err *err)
{
    if (d->method == 0) {
        uInt in_avail = (uInt)(d->in_len - d->in_pos > UINT32_MAX ? UINT32_MAX : d->in_len - d->in_pos);
        d->z.next_in = (Bytef *)(uintptr_t)(d->in + d->in_pos);
        d->z.avail_in = in_avail;
        d->z.next_out = buf + *got;
        d->z.avail_out = (uInt)(n - *got);
        int rc = inflate(&d->z, Z_NO_FLUSH);
        d->in_pos += in_avail - d->z.avail_in;
        *got = n - d->z.avail_out;
        if (rc == Z_STREAM_END)
            d->ended = 1;
        else if (rc != Z_OK && rc != Z_BUF_ERROR)
            return fmt_err(err, "zlib data is corrupt (%s)", d->z.msg ? d->z.msg : "inflate failed");
        return GV_OK;
    }
    ZSTD_inBuffer ib = {d->in, d->in_len, d->in_pos};
    ZSTD_outBuffer ob = {buf, n, *got};
    size_t rc = ZSTD_decompressStream(d->zs, &ob, &ib);
    if (ZSTD_isError(rc))
        return fmt_err(err, "zstd data is corrupt (%s)", ZSTD_getErrorName(rc));
    d->in_pos = ib.pos;
    *got = ob.pos;
    if (rc == 0)
        d->ended = 1;
    return GV_OK;
}

/* Reads exactly n bytes of decompressed data. */
static int dec_read(struct dec *d, uint8_t *buf, size_t n, struct gv_err *err)
{
    if (n > d->limit - d->produced)
        return fmt_err(err, "decompressed data ends before the %llu bytes the header announces",
                       (unsigned long long)d->limit);
    size_t got = 0;
    while (got < n) {
        if (d->ended)
            return fmt_err(err, "compressed stream ends after %llu of %llu announced bytes",
                           (unsigned long long)(d->produced + got), (unsigned long long)d->limit);
        size_t before = got, in_before = d->in_pos;
        int rc = dec_step(d, buf, n, &got, err);
        if (rc)
            return rc;
        if (got == before && d->in_pos == in_before && !d->ended)
            return fmt_err(err, "compressed stream is truncated after %llu decompressed bytes",
                           (unsigned long long)(d->produced + got));
    }
    d->produced += n;
    return GV_OK;
}

/* Decompresses the rest and checks it matches the announced size. */
static int dec_drain(struct dec *d, struct gv_err *err)
{
    uint8_t buf[16384];
    while (d->produced < d->limit) {
        uint64_t left = d->limit - d->produced;
        int rc = dec_read(d, buf, left < sizeof buf ? (size_t)left : sizeof buf, err);
        if (rc)
            return rc;
    }
    if (!d->ended) {
        size_t got = 0;
        int rc = dec_step(d, buf, 1, &got, err);
        if (rc)
            return rc;
        if (got)
            return fmt_err(err, "decompressed data is longer than the %llu bytes the header announces",
                           (unsigned long long)d->limit);
        if (!d->ended)
            return fmt_err(err, "compressed stream does not end after the announced %llu bytes",
                           (unsigned long long)d->limit);
    }
    return GV_OK;
}

static int src_read(struct src *s, uint8_t *buf, size_t n, const char *what, struct gv_err *err)
{
    if (!fits(s->pos, n, s->len))
        return fmt_err(err, "%s at bundle offset %llu runs past the end of the bundle (%llu bytes)",
                       what, (unsigned long long)s->pos, (unsigned long long)s->len);
    if (s->mem)
        memcpy(buf, s->mem + s->pos, n);
    else {
        int rc = dec_read(s->dec, buf, n, err);
        if (rc) {
            gv_err_prefix(err, "reading %s", what);
            return rc;
        }
    }
    s->pos += n;
    return GV_OK;
}

/* Moves forward to pos (a stream cannot go back). */
static int src_seek(struct src *s, uint64_t pos, struct gv_err *err)
{
    if (s->mem || pos == s->pos) {
        s->pos = pos;
        return GV_OK;
    }
    uint8_t buf[16384];
    while (s->pos < pos) {
        uint64_t left = pos - s->pos;
        int rc = src_read(s, buf, left < sizeof buf ? (size_t)left : sizeof buf, "code objects",
                          err);
        if (rc)
            return rc;
    }
    return GV_OK;
}

/* ---- one bundle ---- */

struct entry {
    uint64_t offset, size;
    char *id;
    size_t id_len;
};

static void free_entries(struct entry *e, size_t n)
{
    for (size_t i = 0; e && i < n; i++)
        free(e[i].id);
    free(e);
}

static int cmp_entry(const void *a, const void *b)
{
    const struct entry *x = a, *y = b;
    return x->offset < y->offset ? -1 : x->offset > y->offset;
}

/* The entry table at s's position; every code object must fit in limit bytes
 * from the bundle's start (s->len, unless the caller sees only the table). */
static int read_entry_table(struct src *s, uint64_t limit, struct entry **out, size_t *n_out,
                            struct gv_err *err)
{
    uint8_t head[BUNDLE_MAGIC_LEN + 8];
    *out = NULL;
    *n_out = 0;
    int rc = src_read(s, head, sizeof head, "bundle header", err);
    if (rc)
        return rc;
    if (memcmp(head, BUNDLE_MAGIC, BUNDLE_MAGIC_LEN) != 0)
        return fmt_err(err, "no \"" BUNDLE_MAGIC "\" magic");
    uint64_t n = le64(head + BUNDLE_MAGIC_LEN);
    if (n > GV_OFFLOAD_MAX_ENTRIES || n > (s->len - s->pos) / 24)
        return fmt_err(err, "entry count %llu is absurd for a %llu-byte bundle",
                       (unsigned long long)n, (unsigned long long)s->len);
    struct entry *e = calloc(n ? n : 1, sizeof *e);
    if (!e)
        return gv_err_set(err, GV_E_NOMEM, "out of memory for %llu bundle entries",
                          (unsigned long long)n);
    for (uint64_t i = 0; i < n && !rc; i++) {
        uint8_t f[24];
        rc = src_read(s, f, sizeof f, "entry header", err);
        if (rc)
            break;
        e[i].offset = le64(f);
        e[i].size = le64(f + 8);
        uint64_t id_len = le64(f + 16);
        if (id_len > GV_OFFLOAD_MAX_ID) {
            rc = fmt_err(err, "entry %llu: ID length %llu is absurd", (unsigned long long)i,
                         (unsigned long long)id_len);
            break;
        }
        if (!(e[i].id = malloc(id_len + 1))) {
            rc = gv_err_set(err, GV_E_NOMEM, "out of memory for a bundle entry ID");
            break;
        }
        rc = src_read(s, (uint8_t *)e[i].id, (size_t)id_len, "entry ID", err);
        e[i].id[rc ? 0 : id_len] = '\0';
        e[i].id_len = (size_t)id_len;
        if (!rc && !fits(e[i].offset, e[i].size, limit))
            rc = fmt_err(err, "entry %llu (%s): code object at %llu, %llu bytes, runs past the end of the bundle (%llu bytes)",
                         (unsigned long long)i, e[i].id, (unsigned long long)e[i].offset,
                         (unsigned long long)e[i].size, (unsigned long long)limit);
    }
    if (rc) {
        free_entries(e, (size_t)n);
        return rc;
    }
    *out = e;
    *n_out = (size_t)n;
    return GV_OK;
}

/* EF_AMDGPU_MACH of a code object's ELF header, or -1 when it is not an
 * AMDGPU ELF (bitcode, empty). */
static int code_object_mach(struct src *s, const struct entry *e, struct gv_err *err, int *mach)
{
    uint8_t h[64];
    *mach = -1;
    if (e->size < sizeof h || (!s->mem && e->offset < s->pos))
        return GV_OK; /* too small, or shares bytes already streamed past */
    int rc = src_seek(s, e->offset, err);
    if (!rc)
        rc = src_read(s, h, sizeof h, "code object header", err);
    if (rc)
        return rc;
    if (memcmp(h, "\177ELF", 4) == 0 && h[4] == 2 && h[5] == 1 && le16(h + 18) == EM_AMDGPU)
        *mach = (int)(le32(h + 48) & EF_AMDGPU_MACH);
    return GV_OK;
}

static int record_entry(struct scan *sc, const struct entry *e, int mach)
{
    char kind[32], tid[256];
    size_t proc_len = 0;
    int have_id = parse_id(e->id, e->id_len, kind, sizeof kind, tid, sizeof tid, &proc_len);
    if (have_id && strcmp(kind, "host") == 0)
        return GV_OK;
    if (!have_id && strncmp(e->id, "host-", 5) == 0)
        return GV_OK;
    sc->n_entries++;
    const char *elf_name = mach >= 0 ? gv_amdgpu_mach_name((unsigned)mach) : NULL;
    if (!have_id && !elf_name) {
        sc->n_skipped++;
        return GV_OK;
    }
    char proc[256];
    if (have_id)
        snprintf(proc, sizeof proc, "%.*s", (int)proc_len, tid);
    if (elf_name && (!have_id || strcmp(proc, elf_name) != 0)) {
        if (have_id)
            sc->n_mismatch++;
        int rc = set_add(&sc->targets, elf_name, sc->err);
        return rc ? rc : set_add(&sc->ids, elf_name, sc->err);
    }
    int rc = set_add(&sc->targets, proc, sc->err);
    return rc ? rc : set_add(&sc->ids, tid, sc->err);
}

/* Entry table, then (unless quick on a stream) each code object's e_flags. */
static int scan_bundle_src(struct scan *sc, struct src *s, uint64_t *end)
{
    struct entry *e;
    size_t n;
    int rc = read_entry_table(s, s->len, &e, &n, sc->err);
    if (rc)
        return rc;
    *end = s->pos;
    for (size_t i = 0; i < n; i++)
        if (e[i].offset + e[i].size > *end)
            *end = e[i].offset + e[i].size;
    if (n)
        qsort(e, n, sizeof *e, cmp_entry);
    int verify = s->mem || !(sc->flags & GV_OFFLOAD_QUICK);
    for (size_t i = 0; i < n && !rc; i++) {
        int mach = -1;
        if (verify && strncmp(e[i].id, "host-", 5) != 0)
            rc = code_object_mach(s, &e[i], sc->err, &mach);
        if (!rc)
            rc = record_entry(sc, &e[i], mach);
    }
    free_entries(e, n);
    return rc;
}

static int scan_plain(struct scan *sc, const uint8_t *data, size_t size, uint64_t at,
                      uint64_t *next)
{
    struct src s = {data + at, size - at, 0, NULL};
    uint64_t end = 0;
    int rc = scan_bundle_src(sc, &s, &end);
    if (rc) {
        gv_err_prefix(sc->err, "offload bundle at offset %llu", (unsigned long long)at);
        return rc;
    }
    sc->n_bundles++;
    *next = at + end;
    return GV_OK;
}

int gv_offload_bundle_spans(const uint8_t *head, size_t have, uint64_t room,
                            struct gv_offload_span **spans, size_t *n, uint64_t *table_len,
                            struct gv_err *err)
{
    struct src s = {head, have, 0, NULL};
    struct entry *e;
    size_t k;
    *spans = NULL;
    *n = 0;
    int rc = read_entry_table(&s, room, &e, &k, err);
    if (rc)
        return rc;
    struct gv_offload_span *out = calloc(k ? k : 1, sizeof *out);
    if (!out) {
        free_entries(e, k);
        return gv_err_set(err, GV_E_NOMEM, "out of memory for %zu bundle entries", k);
    }
    size_t m = 0;
    for (size_t i = 0; i < k; i++)
        if (strncmp(e[i].id, "host-", 5) != 0 && e[i].size)
            out[m++] = (struct gv_offload_span){e[i].offset, e[i].size};
    free_entries(e, k);
    *spans = out;
    *n = m;
    *table_len = s.pos;
    return GV_OK;
}

/* CCOB header fields. */
struct ccob {
    unsigned version, method;
    uint64_t header, total, raw;
};

static int read_ccob_header(const uint8_t *p, uint64_t avail, struct ccob *c, struct gv_err *err)
{
    if (avail < 8)
        return fmt_err(err, "compressed bundle header is truncated");
    c->version = le16(p + 4);
    c->method = le16(p + 6);
    c->total = 0;
    if (c->version == 1) {
        c->header = 20;
    } else if (c->version == 2) {
        c->header = 24;
    } else if (c->version == 3) {
        c->header = 32;
    } else
        return fmt_err(err, "unsupported compressed bundle version %u", c->version);
    if (avail < c->header)
        return fmt_err(err, "compressed bundle v%u header needs %llu bytes, %llu left", c->version,
                       (unsigned long long)c->header, (unsigned long long)avail);
    if (c->version == 1)
        c->raw = le32(p + 8);
    else if (c->version == 2) {
        c->total = le32(p + 8);
        c->raw = le32(p + 12);
    } else {
        c->total = le64(p + 8);
        c->raw = le64(p + 16);
    }
    if (c->method > 1)
        return fmt_err(err, "unknown compression method %u (0 = zlib, 1 = zstd)", c->method);
    if (c->version > 1 && (c->total < c->header || c->total > avail))
        return fmt_err(err, "total size %llu does not fit (header %llu, %llu bytes left)",
                       (unsigned long long)c->total, (unsigned long long)c->header,
                       (unsigned long long)avail);
    uint64_t packed = (c->version > 1 ? c->total : avail) - c->header;
    if (c->raw > packed * GV_OFFLOAD_MAX_RATIO + 65536)
        return fmt_err(err, "announced decompressed size %llu from %llu compressed bytes is an implausible ratio",
                       (unsigned long long)c->raw, (unsigned long long)packed);
    if (c->raw > GV_OFFLOAD_MAX_DECOMPRESSED)
        return fmt_err(err, "announced decompressed size %llu is over the %llu-byte limit",
                       (unsigned long long)c->raw, (unsigned long long)GV_OFFLOAD_MAX_DECOMPRESSED);
    return GV_OK;
}

static int scan_ccob_body(struct scan *sc, const uint8_t *p, uint64_t avail, const struct ccob *c,
                          uint64_t *len)
{
    uint64_t in_len = c->version > 1 ? c->total - c->header : avail - c->header;
    struct dec d;
    int rc = dec_init(&d, (int)c->method, p + c->header, (size_t)in_len, c->raw, &sc->zs,
                      sc->err);
    struct src s = {NULL, c->raw, 0, &d};
    uint64_t end = 0;
    if (!rc)
        rc = scan_bundle_src(sc, &s, &end);
    int full = !(sc->flags & GV_OFFLOAD_QUICK);
    if (!rc && full)
        rc = dec_drain(&d, sc->err);
    if (c->version > 1)
        *len = c->total;
    else
        *len = c->header + (full ? d.in_pos : 0);
    dec_end(&d);
    return rc;
}

static int scan_compressed(struct scan *sc, const uint8_t *data, size_t size, uint64_t at,
                           uint64_t *next)
{
    struct ccob c;
    memset(&c, 0, sizeof c);
    uint64_t len = 0;
    int rc = read_ccob_header(data + at, size - at, &c, sc->err);
    if (!rc)
        rc = scan_ccob_body(sc, data + at, size - at, &c, &len);
    if (rc) {
        gv_err_prefix(sc->err, "compressed offload bundle at offset %llu", (unsigned long long)at);
        return rc;
    }
    sc->n_bundles++;
    sc->n_compressed++;
    *next = at + (len ? len : 8);
    return GV_OK;
}

static void hand_out(struct scan *sc, int rc, struct gv_offload_targets *out)
{
    if (sc->zs)
        ZSTD_freeDStream(sc->zs);
    sc->zs = NULL;
    if (rc)
        scan_free(sc);
    else
        scan_to_out(sc, out);
}

/* Tells the kernel that the whole pages of a file mapping in [from, to) will
 * not be read again: they leave this process's resident set (the page cache
 * keeps them). A scan touches each entry header, and the kernel maps the 64 KiB
 * around every touch whatever madvise says, so without this scanning the 2782
 * containers of cuBLASLt's 140 MB .nv_fatbin left all 140 MB resident. */
static void drop_behind(const uint8_t *from, const uint8_t *to)
{
    long pg = sysconf(_SC_PAGESIZE);
    uintptr_t a = ((uintptr_t)from + (uintptr_t)pg - 1) & ~(uintptr_t)(pg - 1);
    uintptr_t b = (uintptr_t)to & ~(uintptr_t)(pg - 1);
    if (pg > 0 && b > a)
        madvise((void *)a, b - a, MADV_DONTNEED);
}

int gv_offload_scan_hip_ex(const uint8_t *data, size_t size, unsigned flags,
                           struct gv_offload_targets *out, struct gv_err *err)
{
    memset(out, 0, sizeof *out);
    struct scan sc;
    memset(&sc, 0, sizeof sc);
    sc.flags = flags;
    sc.err = err;
    int rc = GV_OK;
    uint64_t pos = 0, dropped = 0;
    while (!rc && data && pos < size && size - pos >= 4) {
        uint64_t next = pos + 8;
        if (size - pos >= BUNDLE_MAGIC_LEN && memcmp(data + pos, BUNDLE_MAGIC, BUNDLE_MAGIC_LEN) == 0)
            rc = scan_plain(&sc, data, size, pos, &next);
        else if (memcmp(data + pos, CCOB_MAGIC, 4) == 0)
            rc = scan_compressed(&sc, data, size, pos, &next);
        pos = align8(next);
        if ((flags & GV_OFFLOAD_MAPPED) && pos - dropped >= (1u << 20) && pos <= size) {
            drop_behind(data + dropped, data + pos);
            dropped = pos;
        }
    }
    if (!rc && size > 0 && sc.n_bundles == 0)
        rc = fmt_err(err, "no clang offload bundle found in %zu bytes", size);
    hand_out(&sc, rc, out);
    return rc;
}

int gv_offload_scan_hip(const uint8_t *data, size_t size, struct gv_offload_targets *out,
                        struct gv_err *err)
{
    return gv_offload_scan_hip_ex(data, size, 0, out, err);
}

/* ---- NVIDIA fatbin ---- */

/* Entry flags (+40, u64) that name the variant of the target, found by
 * building one kernel with nvcc 13.0 for sm_90/90a, 100/100a/100f, 120/120a
 * and checked against cuobjdump on cuBLASLt, cuDNN and libtorch_cuda
 * (tests/unit/test_offload_cuobjdump.c): arch-specific "a" (sm_90a, whose
 * code runs only on that exact arch) and family-specific "f" (sm_100f). */
#define NV_FLAG_ARCH_SPECIFIC 0x100000ull
#define NV_FLAG_FAMILY_SPECIFIC 0x200000ull

static int nv_entry(struct scan *sc, const uint8_t *e, uint32_t header_size)
{
    unsigned kind = le16(e), arch = le32(e + 28);
    uint64_t flags = header_size >= 48 ? le64(e + 40) : 0;
    sc->n_entries++;
    const char *prefix = kind == 1 ? "compute" : kind == 2 ? "sm" : NULL;
    if (!prefix || arch == 0 || arch > 9999) {
        sc->n_skipped++;
        return GV_OK;
    }
    const char *variant = flags & NV_FLAG_ARCH_SPECIFIC     ? "a"
                          : flags & NV_FLAG_FAMILY_SPECIFIC ? "f"
                                                            : "";
    char name[32];
    snprintf(name, sizeof name, "%s_%u%s", prefix, arch, variant);
    int rc = set_add(&sc->targets, name, sc->err);
    return rc ? rc : set_add(&sc->ids, name, sc->err);
}

static int nv_container(struct scan *sc, const uint8_t *data, size_t size, uint64_t at,
                        uint64_t *next)
{
    if (size - at < 16)
        return fmt_err(sc->err, "fatbin container at offset %llu: header is truncated",
                       (unsigned long long)at);
    unsigned hsize = le16(data + at + 6);
    uint64_t fat = le64(data + at + 8);
    if (hsize < 16 || !fits(at + hsize, fat, size))
        return fmt_err(sc->err, "fatbin container at offset %llu: header size %u and payload %llu do not fit in %zu bytes",
                       (unsigned long long)at, hsize, (unsigned long long)fat, size);
    uint64_t e = at + hsize, end = e + fat;
    while (e < end) {
        if (end - e < 32)
            return fmt_err(sc->err, "fatbin entry at offset %llu: header is truncated",
                           (unsigned long long)e);
        uint32_t eh = le32(data + e + 4);
        uint64_t padded = le64(data + e + 8);
        if (eh < 32 || !fits(e + eh, padded, end))
            return fmt_err(sc->err, "fatbin entry at offset %llu: header size %u and payload %llu run past the container end (%llu)",
                           (unsigned long long)e, eh, (unsigned long long)padded,
                           (unsigned long long)end);
        int rc = nv_entry(sc, data + e, eh);
        if (rc)
            return rc;
        e += eh + padded;
    }
    sc->n_bundles++;
    *next = end;
    return GV_OK;
}

static int scan_cuda(const uint8_t *data, size_t size, unsigned flags,
                     struct gv_offload_targets *out, struct gv_err *err)
{
    memset(out, 0, sizeof *out);
    struct scan sc;
    memset(&sc, 0, sizeof sc);
    sc.err = err;
    int rc = GV_OK;
    uint64_t pos = 0, dropped = 0;
    while (!rc && data && pos < size && size - pos >= 4) {
        uint64_t next = pos + 8;
        if (le32(data + pos) == NV_FATBIN_MAGIC)
            rc = nv_container(&sc, data, size, pos, &next);
        pos = align8(next);
        if ((flags & GV_OFFLOAD_MAPPED) && pos - dropped >= (1u << 20) && pos <= size) {
            drop_behind(data + dropped, data + pos);
            dropped = pos;
        }
    }
    if (!rc && size > 0 && sc.n_bundles == 0)
        rc = fmt_err(err, "no fatbin container (magic 0x%08x) found in %zu bytes", NV_FATBIN_MAGIC,
                     size);
    hand_out(&sc, rc, out);
    return rc;
}

int gv_offload_scan_cuda(const uint8_t *data, size_t size, struct gv_offload_targets *out,
                         struct gv_err *err)
{
    return scan_cuda(data, size, 0, out, err);
}

/* ---- files ---- */

void gv_offload_free(struct gv_offload_targets *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->n_targets; i++)
        free(t->targets[i]);
    free(t->targets);
    for (size_t i = 0; i < t->n_target_ids; i++)
        free(t->target_ids[i]);
    free(t->target_ids);
    memset(t, 0, sizeof *t);
}

/* Adds b's names and counts to a (b is freed). */
static int merge(struct gv_offload_targets *a, struct gv_offload_targets *b, struct gv_err *err)
{
    struct scan sc;
    memset(&sc, 0, sizeof sc);
    int rc = GV_OK;
    for (size_t i = 0; i < a->n_targets && !rc; i++)
        rc = set_add(&sc.targets, a->targets[i], err);
    for (size_t i = 0; i < b->n_targets && !rc; i++)
        rc = set_add(&sc.targets, b->targets[i], err);
    for (size_t i = 0; i < a->n_target_ids && !rc; i++)
        rc = set_add(&sc.ids, a->target_ids[i], err);
    for (size_t i = 0; i < b->n_target_ids && !rc; i++)
        rc = set_add(&sc.ids, b->target_ids[i], err);
    sc.n_entries = a->n_entries + b->n_entries;
    sc.n_skipped = a->n_skipped + b->n_skipped;
    sc.n_bundles = a->n_bundles + b->n_bundles;
    sc.n_compressed = a->n_compressed + b->n_compressed;
    sc.n_mismatch = a->n_mismatch + b->n_mismatch;
    gv_offload_free(a);
    gv_offload_free(b);
    hand_out(&sc, rc, a);
    return rc;
}

/* A section's bytes inside the mapping (none for SHT_NOBITS or size 0). */
static size_t section_bytes(const struct gv_elf_map *m, const struct gv_elf_section *sec,
                            const uint8_t **p)
{
    *p = gv_elf_section_data(sec, m->data, m->size);
    return *p ? (size_t)sec->size : 0;
}

static int scan_sections(const char *path, const struct gv_elf_map *m,
                         const struct gv_elf_section *hip, const struct gv_elf_section *cuda,
                         unsigned flags, struct gv_offload_targets *out, struct gv_err *err)
{
    const uint8_t *p;
    size_t n;
    int rc = GV_OK;
    if (hip) {
        n = section_bytes(m, hip, &p);
        rc = gv_offload_scan_hip_ex(p, n, flags | GV_OFFLOAD_MAPPED, out, err);
        if (rc) {
            gv_err_prefix(err, "%s: section .hip_fatbin", path);
            return rc;
        }
    }
    if (cuda) {
        struct gv_offload_targets nv;
        n = section_bytes(m, cuda, &p);
        rc = scan_cuda(p, n, GV_OFFLOAD_MAPPED, &nv, err);
        if (rc) {
            gv_offload_free(out);
            gv_err_prefix(err, "%s: section .nv_fatbin", path);
            return rc;
        }
        if (hip)
            rc = merge(out, &nv, err);
        else
            *out = nv;
    }
    return rc;
}

int gv_offload_scan_file_ex(const char *path, unsigned flags, struct gv_offload_targets *out,
                            const char **kind, struct gv_err *err)
{
    return gv_offload_scan_rooted(NULL, path, flags, out, kind, err);
}

int gv_offload_scan_rooted(const char *root, const char *path, unsigned flags,
                           struct gv_offload_targets *out, const char **kind, struct gv_err *err)
{
    memset(out, 0, sizeof *out);
    if (kind)
        *kind = NULL;
    struct gv_elf_map m;
    int rc = gv_elf_map_rooted(root, path, &m, err);
    if (rc)
        return rc;
    struct gv_elf_info info;
    rc = gv_elf_parse(m.data, m.size, path, &info, err);
    if (!rc) {
        const struct gv_elf_section *hip = gv_elf_find_section(&info, ".hip_fatbin");
        const struct gv_elf_section *cuda = gv_elf_find_section(&info, ".nv_fatbin");
        if (!hip && !cuda)
            rc = gv_err_set(err, GV_E_NOTFOUND, "%s: no .hip_fatbin or .nv_fatbin section", path);
        else
            rc = scan_sections(path, &m, hip, cuda, flags, out, err);
        if (!rc && kind)
            *kind = hip && cuda ? "hip+cuda" : hip ? "hip" : "cuda";
        gv_elf_free(&info);
    }
    gv_elf_unmap(&m);
    return rc;
}

int gv_offload_scan_file(const char *path, struct gv_offload_targets *out, const char **kind,
                         struct gv_err *err)
{
    return gv_offload_scan_file_ex(path, GV_OFFLOAD_QUICK, out, kind, err);
}
