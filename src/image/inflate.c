/* Inflating gzip layers: ISA-L (libisal.so.2, opened with dlopen once, never
 * linked) when it is there and GPUVET_NO_ISAL is not 1, zlib otherwise. Both
 * read every member of a multi-member stream and check each one's CRC-32 and
 * length. With ISA-L, each member's header (RFC 1952, 2.3) is read here and
 * ISA-L inflates the deflate data and checks the trailer; the header's
 * checks and their messages are zlib's. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "image/inflate.h"
#include "image/syms_isal.h"

#define REQ 1
#define OPT 0

#define GV_SYM_FIELD(req, field, ret, params, name) ret(*field) params;
struct gv_api_isal { GV_SYMS_ISAL(GV_SYM_FIELD) };
#undef GV_SYM_FIELD

struct isal_sym {
    int required;
    size_t offset;
    const char *name;
};
#define GV_SYM_ROW(req, field, ret, params, name) {req, offsetof(struct gv_api_isal, field), name},
static const struct isal_sym isal_syms[] = {GV_SYMS_ISAL(GV_SYM_ROW)};
#undef GV_SYM_ROW

static struct gv_api_isal isal;
static int isal_ok;
static pthread_once_t isal_once = PTHREAD_ONCE_INIT;

/* ISA-L's AVX2/AVX-512 inflate returns with the upper halves of the vector
 * registers in use; the SSE-encoded SHA-NI code that hashes its output next
 * (base/sha256.c, same thread) then ran 2.3x slower (AMD EPYC, ISA-L 2.30:
 * 6.2 s instead of 2.7 s for 3.4 GB). vzeroupper after each call. */
#if defined(__x86_64__) || defined(__i386__)
static int isal_avx;
__attribute__((target("avx"))) static void upper_clear(void)
{
    __builtin_ia32_vzeroupper();
}
#define UPPER_CLEAR() (isal_avx ? upper_clear() : (void)0)
#else
#define UPPER_CLEAR() ((void)0)
#endif

static void isal_load(void)
{
    void *h = dlopen("libisal.so.2", RTLD_NOW | RTLD_LOCAL);
    if (!h)
        return;
    for (size_t i = 0; i < sizeof isal_syms / sizeof isal_syms[0]; i++) {
        void *f = dlsym(h, isal_syms[i].name);
        if (!f && isal_syms[i].required) {
            dlclose(h);
            memset(&isal, 0, sizeof isal);
            return;
        }
        memcpy((char *)&isal + isal_syms[i].offset, &f, sizeof f);
    }
    isal_ok = 1;
#if defined(__x86_64__) || defined(__i386__)
    isal_avx = __builtin_cpu_supports("avx");
#endif
}

/* Where a member's header is read up to (H_FIXED = 0: a new member). */
enum { H_FIXED, H_XLEN, H_EXTRA, H_NAME, H_COMMENT, H_HCRC, H_DONE };
enum { F_HCRC = 2, F_EXTRA = 4, F_NAME = 8, F_COMMENT = 16, F_RESERVED = 0xe0 };

struct gz_header {
    int state;
    unsigned flags;
    size_t got, xlen;
    uLong crc;
    unsigned hcrc;
};

struct gv_inflate {
    int use_isal;
    int ended; /* the last member read is complete */
    z_stream z;
    struct gv_isal_inflate_state *st;
    struct gz_header h;
};

static int want_isal(void)
{
    const char *no = getenv("GPUVET_NO_ISAL");
    if (no && strcmp(no, "1") == 0)
        return 0;
    pthread_once(&isal_once, isal_load);
    return isal_ok;
}

int gv_inflate_start(struct gv_inflate **zp, struct gv_err *err)
{
    struct gv_inflate *z = calloc(1, sizeof *z);
    *zp = NULL;
    if (!z)
        return gv_err_set(err, GV_E_NOMEM, "cannot start inflate");
    z->use_isal = want_isal();
    if (z->use_isal) {
        z->st = malloc(sizeof *z->st);
        if (!z->st) {
            free(z);
            return gv_err_set(err, GV_E_NOMEM, "cannot start inflate");
        }
        isal.inflate_init(z->st);
    } else if (inflateInit2(&z->z, 16 + MAX_WBITS) != Z_OK) {
        free(z);
        return gv_err_set(err, GV_E_NOMEM, "cannot start inflate");
    }
    *zp = z;
    return GV_OK;
}

static const char *isal_why(int r)
{
    switch (r) {
    case GV_ISAL_INVALID_BLOCK:
        return "invalid deflate block";
    case GV_ISAL_INVALID_SYMBOL:
        return "invalid deflate symbol";
    case GV_ISAL_INVALID_LOOKBACK:
        return "invalid distance too far back";
    case GV_ISAL_INVALID_WRAPPER:
        return "incorrect header check";
    case GV_ISAL_UNSUPPORTED_METHOD:
        return "unknown compression method";
    case GV_ISAL_INCORRECT_CHECKSUM:
        return "incorrect data check";
    case GV_ISAL_NEED_DICT:
        return "a preset dictionary is needed";
    default:
        return "inflate failed";
    }
}

static uint32_t clamp32(size_t n)
{
    return n > UINT32_MAX ? UINT32_MAX : (uint32_t)n;
}

/* The state that follows a header field, given the flags. */
static int header_next(unsigned flags, int after)
{
    if (after < H_XLEN && (flags & F_EXTRA))
        return H_XLEN;
    if (after < H_NAME && (flags & F_NAME))
        return H_NAME;
    if (after < H_COMMENT && (flags & F_COMMENT))
        return H_COMMENT;
    if (after < H_HCRC && (flags & F_HCRC))
        return H_HCRC;
    return H_DONE;
}

static const char *header_fixed(struct gz_header *h, unsigned char c)
{
    if ((h->got == 0 && c != 0x1f) || (h->got == 1 && c != 0x8b))
        return "incorrect header check";
    if (h->got == 2 && c != 8)
        return "unknown compression method";
    if (h->got == 3 && (c & F_RESERVED))
        return "unknown header flags set";
    if (h->got == 3)
        h->flags = c;
    if (++h->got == 10)
        h->state = header_next(h->flags, H_FIXED);
    return NULL;
}

static const char *header_field(struct gz_header *h, unsigned char c)
{
    if (h->state != H_HCRC)
        h->crc = crc32(h->crc, &c, 1);
    switch (h->state) {
    case H_FIXED:
        return header_fixed(h, c);
    case H_XLEN:
        h->xlen |= (size_t)c << (8 * h->got);
        if (++h->got == 2)
            h->state = h->xlen ? H_EXTRA : header_next(h->flags, H_EXTRA);
        return NULL;
    case H_EXTRA:
        if (++h->got == h->xlen)
            h->state = header_next(h->flags, H_EXTRA);
        return NULL;
    case H_NAME:
    case H_COMMENT:
        if (!c)
            h->state = header_next(h->flags, h->state);
        return NULL;
    default: /* H_HCRC */
        h->hcrc |= (unsigned)c << (8 * h->got);
        if (++h->got < 2)
            return NULL;
        h->state = H_DONE;
        return h->hcrc == (h->crc & 0xffff) ? NULL : "header crc mismatch";
    }
}

/* One byte of a member's header; NULL, or what is wrong (zlib's words). */
static const char *header_byte(struct gz_header *h, unsigned char c)
{
    int state = h->state;
    const char *why = header_field(h, c);
    if (h->state != state)
        h->got = 0; /* counts the bytes of the field being read */
    return why;
}

/* Reads header bytes until the header is complete or the input is over. */
static const char *header_read(struct gv_inflate *z, const unsigned char **in, size_t *n_in)
{
    while (*n_in && z->h.state != H_DONE) {
        const char *why = header_byte(&z->h, **in);
        ++*in;
        --*n_in;
        if (why)
            return why;
    }
    if (z->h.state == H_DONE) {
        isal.inflate_reset(z->st);
        z->st->crc_flag = GV_ISAL_GZIP_NO_HDR_VER;
    }
    return NULL;
}

/* The header, then one isal_inflate call; *moved: whether it read or wrote. */
static int isal_step(struct gv_inflate *z, const unsigned char **in, size_t *n_in,
                     unsigned char **out, size_t *n_out, int *moved, struct gv_err *err)
{
    struct gv_isal_inflate_state *st = z->st;
    if (z->ended) { /* another gzip member follows */
        memset(&z->h, 0, sizeof z->h);
        z->ended = 0;
    }
    size_t before = *n_in;
    if (z->h.state != H_DONE) {
        const char *why = header_read(z, in, n_in);
        if (why)
            return gv_err_set(err, GV_E_FORMAT, "corrupt gzip stream (%s)", why);
        *moved = *n_in != before;
        if (z->h.state != H_DONE || !*n_in)
            return GV_OK;
    }
    uint32_t ni = clamp32(*n_in), no = clamp32(*n_out);
    st->next_in = (uint8_t *)*in;
    st->avail_in = ni;
    st->next_out = *out;
    st->avail_out = no;
    int r = isal.inflate(st);
    UPPER_CLEAR();
    size_t used = ni - st->avail_in, made = no - st->avail_out;
    *in += used;
    *n_in -= used;
    *out += made;
    *n_out -= made;
    *moved = *n_in != before || made;
    if (st->block_state == GV_ISAL_BLOCK_FINISH)
        z->ended = 1;
    if (r < 0 || r == GV_ISAL_NEED_DICT)
        return gv_err_set(err, GV_E_FORMAT, "corrupt gzip stream (%s)", isal_why(r));
    return GV_OK;
}

static int zlib_step(struct gv_inflate *z, const unsigned char **in, size_t *n_in,
                     unsigned char **out, size_t *n_out, int *moved)
{
    if (z->ended) {
        inflateReset(&z->z);
        z->ended = 0;
    }
    uInt ni = *n_in > UINT_MAX ? UINT_MAX : (uInt)*n_in;
    uInt no = *n_out > UINT_MAX ? UINT_MAX : (uInt)*n_out;
    z->z.next_in = (unsigned char *)*in;
    z->z.avail_in = ni;
    z->z.next_out = *out;
    z->z.avail_out = no;
    int r = inflate(&z->z, Z_NO_FLUSH);
    size_t used = ni - z->z.avail_in, made = no - z->z.avail_out;
    *in += used;
    *n_in -= used;
    *out += made;
    *n_out -= made;
    *moved = used || made;
    if (r == Z_STREAM_END)
        z->ended = 1;
    return r == Z_OK || r == Z_BUF_ERROR || r == Z_STREAM_END ? 0 : -1;
}

static int step(struct gv_inflate *z, const unsigned char **in, size_t *n_in,
                unsigned char **out, size_t *n_out, int *moved, struct gv_err *err)
{
    if (z->use_isal)
        return isal_step(z, in, n_in, out, n_out, moved, err);
    if (zlib_step(z, in, n_in, out, n_out, moved) != 0) {
        return gv_err_set(err, GV_E_FORMAT, "corrupt gzip stream (%s)",
                          z->z.msg ? z->z.msg : "inflate failed");
    }
    return GV_OK;
}

int gv_inflate_feed(struct gv_inflate *z, const unsigned char **in, size_t *n_in,
                    unsigned char **out, size_t *n_out, struct gv_err *err)
{
    while (*n_in && *n_out) {
        int moved;
        int rc = step(z, in, n_in, out, n_out, &moved, err);
        if (rc != GV_OK)
            return rc;
        if (!moved)
            return gv_err_set(err, GV_E_FORMAT, "corrupt gzip stream (no progress)");
    }
    return GV_OK;
}

int gv_inflate_finish(struct gv_inflate *z, unsigned char **out, size_t *n_out, int *done,
                      struct gv_err *err)
{
    *done = z->ended;
    while (!*done && *n_out) {
        const unsigned char *none = (const unsigned char *)"";
        size_t zero = 0;
        int moved;
        int rc = step(z, &none, &zero, out, n_out, &moved, err);
        if (rc != GV_OK)
            return rc;
        *done = z->ended;
        if (!*done && !moved)
            return gv_err_set(err, GV_E_FORMAT, "truncated gzip stream");
    }
    return GV_OK;
}

void gv_inflate_end(struct gv_inflate *z)
{
    if (!z)
        return;
    if (z->use_isal)
        free(z->st);
    else
        inflateEnd(&z->z);
    free(z);
}

const char *gv_inflate_impl(const struct gv_inflate *z)
{
    return z->use_isal ? "isa-l" : "zlib";
}
