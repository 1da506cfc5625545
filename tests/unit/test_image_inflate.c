/* gzip inflate through both implementations (src/image/inflate.c): ISA-L
 * (when libisal.so.2 can be opened) and zlib (GPUVET_NO_ISAL=1). Inputs are
 * made by gzip and by python's gzip module (several members, an empty one, a
 * name and a comment in the header); the expected bytes are `gzip -dc`'s.
 * Truncated, corrupt and changed streams must be refused with the same kind
 * of message by both. With ISA-L's header installed, the struct and values
 * declared in syms_isal.h are checked against it. */
#include <dlfcn.h>
#include <stddef.h>
#include <unistd.h>

#include "image/inflate.h"
#include "image/syms_isal.h"
#include "t.h"
#include "tools.h"

#if defined(__has_include)
#if __has_include(<isa-l/igzip_lib.h>)
#include <isa-l/igzip_lib.h>
#define HAVE_ISAL_HEADER 1
#endif
#endif

static char tmp[1024];

struct outbuf {
    uint8_t *p;
    size_t len, cap;
};

static int grow(struct outbuf *o, size_t room)
{
    if (o->cap - o->len >= room)
        return 0;
    size_t cap = o->cap ? o->cap : 1 << 16;
    while (cap - o->len < room)
        cap *= 2;
    uint8_t *p = realloc(o->p, cap);
    if (!p)
        return -1;
    o->p = p;
    o->cap = cap;
    return 0;
}

/* Inflates data fed in pieces of in_step bytes into rooms of out_step bytes. */
static int inflate_all(const uint8_t *data, size_t n, size_t in_step, size_t out_step,
                       struct outbuf *o, const char **impl, struct gv_err *err)
{
    struct gv_inflate *z;
    int rc = gv_inflate_start(&z, err);
    if (rc != GV_OK)
        return rc;
    *impl = gv_inflate_impl(z);
    size_t off = 0;
    while (rc == GV_OK && off < n) {
        const unsigned char *in = data + off;
        size_t k = n - off < in_step ? n - off : in_step;
        off += k;
        while (rc == GV_OK && k) {
            if (grow(o, out_step) != 0)
                return -100;
            unsigned char *p = o->p + o->len;
            size_t room = out_step;
            rc = gv_inflate_feed(z, &in, &k, &p, &room, err);
            o->len += out_step - room;
        }
    }
    int done = 0;
    while (rc == GV_OK && !done) {
        if (grow(o, out_step) != 0)
            return -100;
        unsigned char *p = o->p + o->len;
        size_t room = out_step;
        rc = gv_inflate_finish(z, &p, &room, &done, err);
        o->len += out_step - room;
    }
    gv_inflate_end(z);
    return rc;
}

static const size_t steps[][2] = {{1 << 20, 1 << 20}, {65536, 4096}, {4093, 65536}, {7, 1000}};

/* Inflates tmp/name through every step size: the bytes of want (when what is
 * NULL), or a GV_E_FORMAT whose message holds what. */
static void through_steps(const char *name, const char *want_impl, const uint8_t *want,
                          size_t wn, const char *what)
{
    char gz[1300];
    snprintf(gz, sizeof gz, "%s/%s", tmp, name);
    uint8_t *data = NULL;
    size_t n = 0;
    T_EQ_INT(tl_read(gz, &data, &n), 0);
    for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
        /* a few bytes at a time is slow: only for the smaller inputs */
        if (steps[i][0] < 64 && n > (1u << 20))
            continue;
        struct outbuf o = {0};
        struct gv_err err = {0};
        const char *impl = "";
        int rc = inflate_all(data, n, steps[i][0], steps[i][1], &o, &impl, &err);
        T_EQ_STR(impl, want_impl);
        if (what) {
            T_EQ_INT(rc, GV_E_FORMAT);
            if (!strstr(err.msg, what))
                fprintf(stderr, "%s (%s): \"%s\" lacks \"%s\"\n", name, impl, err.msg, what);
            T_CHECK(strstr(err.msg, what) != NULL);
        } else {
            if (rc != GV_OK)
                fprintf(stderr, "%s (%s, %zu/%zu): %s\n", name, impl, steps[i][0],
                        steps[i][1], err.msg);
            T_EQ_INT(rc, GV_OK);
            T_EQ_INT(o.len, wn);
            T_CHECK(o.len == wn && (wn == 0 || memcmp(o.p, want, wn) == 0));
        }
        free(o.p);
    }
    free(data);
}

static void same_as_gzip(const char *name, const char *want_impl)
{
    char gz[1300], plain[1300];
    snprintf(gz, sizeof gz, "%s/%s", tmp, name);
    snprintf(plain, sizeof plain, "%s/%s.out", tmp, name);
    T_EQ_INT(tl_sh("gzip -dc '%s' > '%s'", gz, plain), 0);
    uint8_t *want = NULL;
    size_t wn = 0;
    T_EQ_INT(tl_read(plain, &want, &wn), 0);
    through_steps(name, want_impl, want, wn, NULL);
    free(want);
}

static void refused(const char *name, const char *want_impl, const char *what)
{
    through_steps(name, want_impl, NULL, 0, what);
}

static void build_inputs(void)
{
    /* ~6 MiB: text, runs, and incompressible bytes (stored blocks) */
    T_EQ_INT(tl_sh("set -e; cd '%s'; python3 - <<'PY'\n"
                   "import gzip, os, random\n"
                   "r = random.Random(33)\n"
                   "parts = []\n"
                   "for i in range(40):\n"
                   "    parts.append(('line %%d of a text file\\n' %% i).encode() * r.randint(1, 4000))\n"
                   "    parts.append(bytes(r.getrandbits(8) for _ in range(r.randint(0, 70000))))\n"
                   "    parts.append(b'\\0' * r.randint(0, 200000))\n"
                   "data = b''.join(parts)\n"
                   "open('data', 'wb').write(data)\n"
                   "with open('multi.gz', 'wb') as f:\n"
                   "    cut = [0, 1000, 1000, 2000000, len(data)]\n"
                   "    for a, b in zip(cut, cut[1:]):\n"
                   "        f.write(gzip.compress(data[a:b], compresslevel=r.choice([1, 6, 9]), mtime=0))\n"
                   "small = b'hello, members\\n' * 50\n"
                   "open('small.gz', 'wb').write(gzip.compress(small[:100], mtime=0) +\n"
                   "                             gzip.compress(small[100:], mtime=0))\n"
                   "PY\n"
                   "gzip -9c data > name.gz\n"
                   "gzip -1nc data > fast.gz\n"
                   "printf '' | gzip -nc > empty.gz\n"
                   "python3 -c 'import gzip,sys; sys.stdout.buffer.write(gzip.compress(b\"\"))' "
                   "> empty_py.gz\n"
                   /* a header with FEXTRA, FNAME, FCOMMENT and FHCRC (RFC 1952) */
                   "python3 - <<'PY'\n"
                   "import struct, zlib\n"
                   "body = b'a header with every field\\n' * 300\n"
                   "c = zlib.compressobj(9, zlib.DEFLATED, -15)\n"
                   "raw = c.compress(body) + c.flush()\n"
                   "h = b'\\x1f\\x8b\\x08' + bytes([4 | 8 | 16 | 2]) + b'\\0\\0\\0\\0\\x02\\x03'\n"
                   "h += struct.pack('<H', 6) + b'ab\\x02\\x00xy' + b'name.tar\\0' + b'a comment\\0'\n"
                   "h += struct.pack('<H', zlib.crc32(h) & 0xffff)\n"
                   "t = struct.pack('<II', zlib.crc32(body), len(body))\n"
                   "open('fields.gz', 'wb').write(h + raw + t)\n"
                   "PY\n"
                   "n=$(stat -c %%s name.gz)\n"
                   "head -c $((n / 2)) name.gz > cut.gz\n"
                   "head -c $((n - 3)) name.gz > cut_trailer.gz\n"
                   "head -c 5 name.gz > cut_header.gz\n"
                   "cp small.gz bad_crc.gz\n"
                   "m=$(stat -c %%s small.gz)\n"
                   "printf '\\377' | dd of=bad_crc.gz bs=1 seek=$((m - 6)) conv=notrunc "
                   "status=none\n"
                   "cp small.gz bad_len.gz\n"
                   "printf '\\377' | dd of=bad_len.gz bs=1 seek=$((m - 2)) conv=notrunc "
                   "status=none\n"
                   "cp fast.gz bad_data.gz\n"
                   "head -c 4096 /dev/zero | tr '\\0' '\\377' | dd of=bad_data.gz bs=1 "
                   "seek=100000 conv=notrunc status=none\n"
                   "cp small.gz trailing.gz; printf 'garbage after the last member' >> "
                   "trailing.gz\n"
                   "cp fields.gz bad_hcrc.gz; printf 'N' | dd of=bad_hcrc.gz bs=1 seek=20 "
                   "conv=notrunc status=none\n"
                   "cp small.gz bad_flags.gz; printf '\\200' | dd of=bad_flags.gz bs=1 seek=3 "
                   "conv=notrunc status=none\n"
                   "cp small.gz bad_method.gz; printf '\\007' | dd of=bad_method.gz bs=1 seek=2 "
                   "conv=notrunc status=none\n",
                   tmp),
             0);
}

static void run_cases(const char *impl)
{
    static const char *good[] = {"name.gz", "fast.gz", "multi.gz", "small.gz", "fields.gz"};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++)
        same_as_gzip(good[i], impl);
    same_as_gzip("empty.gz", impl);
    same_as_gzip("empty_py.gz", impl);
    refused("cut.gz", impl, "truncated gzip stream");
    refused("cut_trailer.gz", impl, "truncated gzip stream");
    refused("cut_header.gz", impl, "truncated gzip stream");
    refused("bad_crc.gz", impl, "corrupt gzip stream (incorrect data check)");
    refused("bad_len.gz", impl, "corrupt gzip stream");
    refused("bad_data.gz", impl, "corrupt gzip stream");
    refused("trailing.gz", impl, "corrupt gzip stream (incorrect header check)");
    refused("bad_method.gz", impl, "corrupt gzip stream (unknown compression method)");
    refused("bad_hcrc.gz", impl, "corrupt gzip stream (header crc mismatch)");
    refused("bad_flags.gz", impl, "corrupt gzip stream (unknown header flags set)");
}

static void test_zlib(void)
{
    setenv("GPUVET_NO_ISAL", "1", 1);
    run_cases("zlib");
}

static void test_isal(void)
{
    unsetenv("GPUVET_NO_ISAL");
    run_cases("isa-l");
}

/* syms_isal.h against isa-l/igzip_lib.h */
static void test_isal_layout(void)
{
#ifdef HAVE_ISAL_HEADER
    T_EQ_INT(sizeof(struct gv_isal_inflate_state), sizeof(struct inflate_state));
#define SAME_FIELD(f)                                                                        \
    T_EQ_INT(offsetof(struct gv_isal_inflate_state, f), offsetof(struct inflate_state, f));  \
    T_EQ_INT(sizeof(((struct gv_isal_inflate_state *)0)->f),                                 \
             sizeof(((struct inflate_state *)0)->f))
    SAME_FIELD(next_out);
    SAME_FIELD(avail_out);
    SAME_FIELD(next_in);
    SAME_FIELD(avail_in);
    SAME_FIELD(block_state);
    SAME_FIELD(crc_flag);
    SAME_FIELD(tmp_out_buffer);
#undef SAME_FIELD
    T_EQ_INT(GV_ISAL_GZIP_NO_HDR_VER, ISAL_GZIP_NO_HDR_VER);
    T_EQ_INT(GV_ISAL_BLOCK_FINISH, ISAL_BLOCK_FINISH);
    T_EQ_INT(GV_ISAL_DECOMP_OK, ISAL_DECOMP_OK);
    T_EQ_INT(GV_ISAL_END_INPUT, ISAL_END_INPUT);
    T_EQ_INT(GV_ISAL_OUT_OVERFLOW, ISAL_OUT_OVERFLOW);
    T_EQ_INT(GV_ISAL_NEED_DICT, ISAL_NEED_DICT);
    T_EQ_INT(GV_ISAL_INVALID_BLOCK, ISAL_INVALID_BLOCK);
    T_EQ_INT(GV_ISAL_INVALID_SYMBOL, ISAL_INVALID_SYMBOL);
    T_EQ_INT(GV_ISAL_INVALID_LOOKBACK, ISAL_INVALID_LOOKBACK);
    T_EQ_INT(GV_ISAL_INVALID_WRAPPER, ISAL_INVALID_WRAPPER);
    T_EQ_INT(GV_ISAL_UNSUPPORTED_METHOD, ISAL_UNSUPPORTED_METHOD);
    T_EQ_INT(GV_ISAL_INCORRECT_CHECKSUM, ISAL_INCORRECT_CHECKSUM);
#else
    fprintf(stderr, "ISA-L header isa-l/igzip_lib.h not installed: layout not checked\n");
#endif
}

int main(void)
{
    if (!tl_have("python3") || !tl_have("gzip")) {
        fprintf(stderr, "skipped: python3 and gzip are needed\n");
        return 77;
    }
    char name[64];
    snprintf(name, sizeof name, "image_inflate.%d", (int)getpid());
    tl_tmpdir(name, tmp, sizeof tmp);
    build_inputs();
    T_RUN(test_isal_layout);
    T_RUN(test_zlib);
    void *h = dlopen("libisal.so.2", RTLD_NOW | RTLD_LOCAL);
    if (h) {
        dlclose(h);
        T_RUN(test_isal);
    } else {
        fprintf(stderr, "ISA-L: not installed, zlib only\n");
    }
    int rc = t_done();
    if (rc == 0)
        tl_sh("rm -rf '%s'", tmp);
    return rc;
}
