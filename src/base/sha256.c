#include "base/sha256.h"

#include <errno.h>
#include <stdlib.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <cpuid.h>
#include <immintrin.h>
#define GV_HAVE_SHANI_CODE 1
#endif

static const uint32_t K[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4,
    0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe,
    0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f,
    0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7,
    0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc,
    0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
    0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116,
    0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
    0xc67178f2};

static uint32_t ror(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

static void compress(struct gv_sha256 *s, const uint8_t *b)
{
    uint32_t w[64];
    for (int i = 0; i < 16; i++)
        w[i] = (uint32_t)b[4 * i] << 24 | (uint32_t)b[4 * i + 1] << 16 |
               (uint32_t)b[4 * i + 2] << 8 | b[4 * i + 3];
    for (int i = 16; i < 64; i++) {
        uint32_t s0 = ror(w[i - 15], 7) ^ ror(w[i - 15], 18) ^ (w[i - 15] >> 3);
        uint32_t s1 = ror(w[i - 2], 17) ^ ror(w[i - 2], 19) ^ (w[i - 2] >> 10);
        w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    uint32_t a = s->h[0], bb = s->h[1], c = s->h[2], d = s->h[3];
    uint32_t e = s->h[4], f = s->h[5], g = s->h[6], h = s->h[7];
    for (int i = 0; i < 64; i++) {
        uint32_t t1 = h + (ror(e, 6) ^ ror(e, 11) ^ ror(e, 25)) + ((e & f) ^ (~e & g)) + K[i] + w[i];
        uint32_t t2 = (ror(a, 2) ^ ror(a, 13) ^ ror(a, 22)) + ((a & bb) ^ (a & c) ^ (bb & c));
        h = g;
        g = f;
        f = e;
        e = d + t1;
        d = c;
        c = bb;
        bb = a;
        a = t1 + t2;
    }
    s->h[0] += a;
    s->h[1] += bb;
    s->h[2] += c;
    s->h[3] += d;
    s->h[4] += e;
    s->h[5] += f;
    s->h[6] += g;
    s->h[7] += h;
}

#ifdef GV_HAVE_SHANI_CODE
/* 64-byte blocks with the SHA extensions. The state is kept as the two
 * registers the instructions want: ABEF and CDGH. */
/* optimised even in Debug builds with GCC: at -O0 the intrinsics spill every register */
#if defined(__clang__)
#define GV_HOT_OPT
#else
#define GV_HOT_OPT __attribute__((optimize("O2")))
#endif
__attribute__((target("sha,sse4.1,ssse3"))) GV_HOT_OPT static void blocks_shani(uint32_t h[8],
                                                                      const uint8_t *p,
                                                                      size_t nblocks)
{
    const __m128i bswap = _mm_set_epi64x(0x0c0d0e0f08090a0bULL, 0x0405060700010203ULL);
    __m128i dcba = _mm_loadu_si128((const __m128i *)&h[0]);
    __m128i hgfe = _mm_loadu_si128((const __m128i *)&h[4]);
    __m128i cdab = _mm_shuffle_epi32(dcba, 0xB1);
    __m128i efgh = _mm_shuffle_epi32(hgfe, 0x1B);
    __m128i abef = _mm_alignr_epi8(cdab, efgh, 8);
    __m128i cdgh = _mm_blend_epi16(efgh, cdab, 0xF0);
    for (; nblocks > 0; nblocks--, p += 64) {
        __m128i abef0 = abef, cdgh0 = cdgh, w[4];
        for (int g = 0; g < 16; g++) {
            if (g < 4) {
                w[g] = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(p + 16 * g)), bswap);
            } else {
                /* W[t] = s1(W[t-2]) + W[t-7] + s0(W[t-15]) + W[t-16], four at a time */
                __m128i t = _mm_sha256msg1_epu32(w[g & 3], w[(g + 1) & 3]);
                t = _mm_add_epi32(t, _mm_alignr_epi8(w[(g + 3) & 3], w[(g + 2) & 3], 4));
                w[g & 3] = _mm_sha256msg2_epu32(t, w[(g + 3) & 3]);
            }
            __m128i m = _mm_add_epi32(w[g & 3], _mm_loadu_si128((const __m128i *)&K[4 * g]));
            cdgh = _mm_sha256rnds2_epu32(cdgh, abef, m);
            m = _mm_shuffle_epi32(m, 0x0E);
            abef = _mm_sha256rnds2_epu32(abef, cdgh, m);
        }
        abef = _mm_add_epi32(abef, abef0);
        cdgh = _mm_add_epi32(cdgh, cdgh0);
    }
    __m128i feba = _mm_shuffle_epi32(abef, 0x1B);
    __m128i dchg = _mm_shuffle_epi32(cdgh, 0xB1);
    dcba = _mm_blend_epi16(feba, dchg, 0xF0);
    hgfe = _mm_alignr_epi8(dchg, feba, 8);
    _mm_storeu_si128((__m128i *)&h[0], dcba);
    _mm_storeu_si128((__m128i *)&h[4], hgfe);
}

static int cpu_has_shani(void)
{
    unsigned a, b, c, d;
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d))
        return 0;
    int sha = (b >> 29) & 1;
    if (!__get_cpuid(1, &a, &b, &c, &d))
        return 0;
    return sha && (c & bit_SSE4_1) && (c & bit_SSSE3);
}
#endif

int gv_sha256_accelerated(void)
{
#ifdef GV_HAVE_SHANI_CODE
    static int cached = -1; /* races are benign: every thread computes the same value */
    if (cached < 0)
        cached = cpu_has_shani() && !getenv("GPUVET_NO_SHANI");
    return cached;
#else
    return 0;
#endif
}

/* n whole 64-byte blocks, with the SHA extensions where the CPU has them. */
static void compress_blocks(struct gv_sha256 *s, const uint8_t *p, size_t n)
{
#ifdef GV_HAVE_SHANI_CODE
    if (gv_sha256_accelerated()) {
        blocks_shani(s->h, p, n);
        return;
    }
#endif
    for (; n > 0; n--, p += 64)
        compress(s, p);
}

void gv_sha256_init(struct gv_sha256 *s)
{
    static const uint32_t iv[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                   0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    memcpy(s->h, iv, sizeof iv);
    s->bytes = 0;
    s->fill = 0;
}

void gv_sha256_update(struct gv_sha256 *s, const void *data, size_t len)
{
    if (!len)
        return; /* data may be NULL then (an empty tensor) */
    const uint8_t *p = data;
    s->bytes += len;
    if (s->fill) {
        size_t take = 64 - s->fill < len ? 64 - s->fill : len;
        memcpy(s->block + s->fill, p, take);
        s->fill += take;
        p += take;
        len -= take;
        if (s->fill < 64)
            return;
        compress_blocks(s, s->block, 1);
        s->fill = 0;
    }
    if (len >= 64) {
        compress_blocks(s, p, len / 64);
        p += len & ~(size_t)63;
        len &= 63;
    }
    memcpy(s->block, p, len);
    s->fill = len;
}

void gv_sha256_final(struct gv_sha256 *s, uint8_t out[32])
{
    uint64_t bits = s->bytes * 8;
    uint8_t pad = 0x80;
    gv_sha256_update(s, &pad, 1);
    uint8_t zero = 0;
    while (s->fill != 56)
        gv_sha256_update(s, &zero, 1);
    uint8_t len[8];
    for (int i = 0; i < 8; i++)
        len[i] = (uint8_t)(bits >> (56 - 8 * i));
    gv_sha256_update(s, len, 8);
    for (int i = 0; i < 8; i++) {
        out[4 * i] = (uint8_t)(s->h[i] >> 24);
        out[4 * i + 1] = (uint8_t)(s->h[i] >> 16);
        out[4 * i + 2] = (uint8_t)(s->h[i] >> 8);
        out[4 * i + 3] = (uint8_t)s->h[i];
    }
}

void gv_sha256_hex(const uint8_t digest[32], char out[65])
{
    static const char hex[] = "0123456789abcdef";
    for (int i = 0; i < 32; i++) {
        out[2 * i] = hex[digest[i] >> 4];
        out[2 * i + 1] = hex[digest[i] & 15];
    }
    out[64] = '\0';
}

void gv_sha256_buf_hex(const void *data, size_t len, char out[65])
{
    struct gv_sha256 s;
    uint8_t d[32];
    gv_sha256_init(&s);
    gv_sha256_update(&s, data, len);
    gv_sha256_final(&s, d);
    gv_sha256_hex(d, out);
}

int gv_sha256_fd_hex(int fd, const char *name, char out[65], struct gv_err *err)
{
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return gv_err_set(err, GV_E_FORMAT, "%s: not a regular file", name);
    }
    posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
    enum { BUF = 1 << 20 };
    uint8_t *buf = malloc(BUF);
    if (!buf) {
        close(fd);
        return gv_err_set(err, GV_E_NOMEM, "%s: out of memory", name);
    }
    struct gv_sha256 s;
    gv_sha256_init(&s);
    int rc = GV_OK;
    for (;;) {
        ssize_t r = read(fd, buf, BUF);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            rc = gv_err_set(err, GV_E_IO, "%s: %s", name, strerror(errno));
            break;
        }
        if (r == 0)
            break;
        gv_sha256_update(&s, buf, (size_t)r);
    }
    free(buf);
    close(fd);
    if (rc)
        return rc;
    uint8_t d[32];
    gv_sha256_final(&s, d);
    gv_sha256_hex(d, out);
    return GV_OK;
}

int gv_sha256_file_hex(const char *path, char out[65], struct gv_err *err)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0)
        return gv_err_set(err, GV_E_IO, "%s: %s", path, strerror(errno));
    return gv_sha256_fd_hex(fd, path, out, err);
}
