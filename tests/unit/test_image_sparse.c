/* Which bytes of a kept ELF file a snapshot's staging tree gets (src/image/sparse.c):
 * every byte but the code objects of clang offload bundles past their first page.
 *  - made-up files: a bundle's code objects become holes exactly, everything
 *    else is written as it was, whatever the pieces the file comes in (a magic or
 *    a table split across two); a stray magic with no table, a table too long to
 *    collect and a bundle whose code starts inside its table make no hole;
 *  - the real librocblas.so.0.1 of the trixie-rocm root (tests/fixtures/
 *    debian-rocm.sh; skipped when it cannot be had), fed in 1 MiB pieces into a
 *    sparse file as layer.c writes it: env's own offload scan of the sparse
 *    file finds the same GPU targets and code objects as of the original, the
 *    bytes written are the original's, and the holes are most of the file. */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "env/elf.h"
#include "env/offload.h"
#include "image/sparse.h"
#include "t.h"
#include "tools.h"

#define MAGIC "__CLANG_OFFLOAD_BUNDLE__"

static void put64(unsigned char *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

static uint32_t rng = 12345;
static unsigned char next_byte(void)
{
    rng = rng * 1103515245u + 12345u;
    return (unsigned char)(rng >> 16);
}

/* A bundle at p: n entries (the first the host's, empty), each code object
 * `size` bytes after the table, aligned to 4096 from the bundle's start; an
 * AMDGPU ELF header at each. Its length. */
static size_t make_bundle(unsigned char *p, int n, size_t size, size_t *co_off)
{
    size_t at = 24 + 8;
    memcpy(p, MAGIC, 24);
    put64(p + 24, (uint64_t)n);
    size_t table = at;
    char ids[8][48];
    for (int i = 0; i < n; i++) {
        snprintf(ids[i], sizeof ids[i], i ? "hipv4-amdgcn-amd-amdhsa--gfx90%d" : "host-x86_64-unknown-linux-gnu", i);
        table += 24 + strlen(ids[i]);
    }
    size_t off = (table + 4095) & ~(size_t)4095;
    for (int i = 0; i < n; i++) {
        size_t len = strlen(ids[i]), sz = i ? size : 0;
        put64(p + at, i ? off : 0);
        put64(p + at + 8, sz);
        put64(p + at + 16, len);
        memcpy(p + at + 24, ids[i], len);
        at += 24 + len;
        if (i) {
            co_off[i - 1] = off;
            for (size_t k = 0; k < sz; k++)
                p[off + k] = next_byte();
            memcpy(p + off, "\177ELF\2\1", 6); /* e_machine EM_AMDGPU */
            p[off + 18] = 224;
            p[off + 19] = 0;
            off += (sz + 4095) & ~(size_t)4095;
        }
    }
    return off;
}

/* Feeds data to a gv_sparse in pieces of at most max (varying), then reads
 * back what would be written into out (zeros elsewhere). Bytes written. */
static size_t pass(const unsigned char *data, size_t size, size_t max, unsigned char *out)
{
    struct gv_sparse sp;
    gv_sparse_start(&sp, (long long)size);
    memset(out, 0, size);
    size_t at = 0, written = 0;
    while (at < size) {
        size_t n = 1 + (size_t)(next_byte() * 7919u) % max;
        if (n > size - at)
            n = size - at;
        T_EQ_INT(gv_sparse_feed(&sp, data + at, n), 0);
        size_t done = 0;
        while (done < n) {
            int w;
            size_t k = gv_sparse_run(&sp, (long long)(at + done), n - done, &w);
            T_CHECK(k > 0);
            if (w) {
                memcpy(out + at + done, data + at + done, k);
                written += k;
            }
            done += k;
        }
        at += n;
    }
    gv_sparse_end(&sp);
    return written;
}

static void test_made_up(void)
{
    size_t size = 3u << 20;
    unsigned char *f = calloc(size, 1), *out = malloc(size);
    T_CHECK(f && out);
    if (!f || !out)
        return;
    memcpy(f, "\177ELF\2\1", 6);
    for (size_t i = 64; i < 200000; i++)
        f[i] = next_byte();
    memcpy(f + 70001, MAGIC "garbage that is no table", 48); /* a stray magic */
    size_t co[4], b = 300000, len = make_bundle(f + b, 4, 250000, co);
    size_t b2 = b + len + 8, co2[2];
    size_t len2 = make_bundle(f + b2, 2, 9000, co2);
    T_CHECK(b2 + len2 < size);
    for (size_t i = b2 + len2; i < size; i++)
        f[i] = next_byte();
    size_t maxes[] = {size, 1 << 20, 65536, 4099, 23, 1};
    for (size_t m = 0; m < sizeof maxes / sizeof *maxes; m++) {
        size_t written = pass(f, size, maxes[m], out);
        size_t holes = 0;
        for (int i = 0; i < 3; i++) { /* each code object past its first page is a hole */
            size_t from = b + co[i] + 4096, to = b + co[i] + 250000;
            int zero = 1;
            for (size_t k = from; k < to && zero; k++)
                zero = out[k] == 0;
            T_CHECK(zero);
            T_CHECK(memcmp(out + b + co[i], f + b + co[i], 4096) == 0);
            holes += to - from;
            memcpy(out + from, f + from, to - from);
        }
        { /* 9000 bytes: its second page on is a hole too */
            size_t from = b2 + co2[0] + 4096, to = b2 + co2[0] + 9000;
            int zero = 1;
            for (size_t k = from; k < to && zero; k++)
                zero = out[k] == 0;
            T_CHECK(zero);
            holes += to - from;
            memcpy(out + from, f + from, to - from);
        }
        T_EQ_INT(written, size - holes);
        T_CHECK(memcmp(out, f, size) == 0); /* nothing else differs */
    }
    free(f);
    free(out);
}

/* A table longer than the bytes collected for it, and a code object that
 * starts inside its own table: no hole, every byte written. */
static void test_no_holes(void)
{
    size_t size = 2u << 20;
    unsigned char *f = calloc(size, 1), *out = malloc(size);
    T_CHECK(f && out);
    if (!f || !out)
        return;
    memcpy(f, MAGIC, 24);
    put64(f + 24, 60000); /* 60000 entries: over 64 KiB of table */
    for (size_t i = 32; i < size; i++)
        f[i] = next_byte();
    T_EQ_INT(pass(f, size, 1 << 20, out), size);
    memset(f, 0, size);
    memcpy(f + 100, MAGIC, 24);
    put64(f + 124, 1);
    put64(f + 132, 8); /* offset 8: inside the table */
    put64(f + 140, 1 << 20);
    put64(f + 148, 6);
    memcpy(f + 156, "hipv4-", 6);
    T_EQ_INT(pass(f, size, 1 << 20, out), size);
    free(f);
    free(out);
}

static void scan(const char *path, struct gv_offload_targets *t)
{
    struct gv_err err = {0};
    const char *kind = NULL;
    int rc = gv_offload_scan_file_ex(path, GV_OFFLOAD_QUICK, t, &kind, &err);
    if (rc)
        fprintf(stderr, "scan %s: %s\n", path, err.msg);
    T_EQ_INT(rc, GV_OK);
}

static int rocblas_skipped;

static void test_rocblas(void)
{
    char *roots = tl_capture("'%s/tests/fixtures/debian-rocm.sh' trixie-rocm 2>/dev/null",
                             getenv("GV_SRC") ? getenv("GV_SRC") : ".");
    char lib[2048] = "";
    if (roots) {
        roots[strcspn(roots, "\n")] = '\0';
        snprintf(lib, sizeof lib, "%s/usr/lib/x86_64-linux-gnu/librocblas.so.0.1", roots);
    }
    free(roots);
    int in = lib[0] ? open(lib, O_RDONLY) : -1;
    if (in < 0) {
        fprintf(stderr, "skipped: no trixie-rocm root with librocblas.so.0.1\n");
        rocblas_skipped = 1;
        return;
    }
    struct stat st;
    T_EQ_INT(fstat(in, &st), 0);
    const unsigned char *data = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, in, 0);
    T_CHECK(data != MAP_FAILED);
    if (data == MAP_FAILED)
        return;
    char tmp[1024], out_path[1100];
    tl_tmpdir("image_sparse", tmp, sizeof tmp);
    snprintf(out_path, sizeof out_path, "%s/librocblas.so.0.1", tmp);
    int out = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    T_CHECK(out >= 0);
    if (out < 0)
        return;
    struct gv_sparse sp;
    gv_sparse_start(&sp, (long long)st.st_size);
    size_t written = 0;
    for (size_t at = 0; at < (size_t)st.st_size;) {
        size_t n = (size_t)st.st_size - at < (1u << 20) ? (size_t)st.st_size - at : 1u << 20;
        T_EQ_INT(gv_sparse_feed(&sp, data + at, n), 0);
        for (size_t done = 0; done < n;) {
            int w;
            size_t k = gv_sparse_run(&sp, (long long)(at + done), n - done, &w);
            if (w) {
                T_EQ_INT(pwrite(out, data + at + done, k, (off_t)(at + done)), (long)k);
                written += k;
            }
            done += k;
        }
        at += n;
    }
    gv_sparse_end(&sp);
    T_EQ_INT(ftruncate(out, st.st_size), 0);
    close(out);
    fprintf(stderr, "librocblas.so.0.1: %lld bytes, %zu written\n", (long long)st.st_size, written);
    T_CHECK(written < (size_t)st.st_size / 4); /* the code objects are most of it */
    /* what was written is the original's; the scan finds the same code */
    int back = open(out_path, O_RDONLY);
    const unsigned char *got = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, back, 0);
    T_CHECK(got != MAP_FAILED);
    if (got == MAP_FAILED)
        return;
    size_t differ_in_data = 0;
    for (size_t i = 0; i < (size_t)st.st_size; i++)
        differ_in_data += got[i] != data[i] && got[i] != 0;
    T_EQ_INT(differ_in_data, 0);
    struct gv_offload_targets a, b;
    scan(lib, &a);
    scan(out_path, &b);
    T_EQ_INT(b.n_entries, a.n_entries);
    T_EQ_INT(b.n_bundles, a.n_bundles);
    T_EQ_INT(b.n_targets, a.n_targets);
    T_CHECK(a.n_targets > 0);
    for (size_t i = 0; i < a.n_targets && i < b.n_targets; i++)
        T_EQ_STR(b.targets[i], a.targets[i]);
    gv_offload_free(&a);
    gv_offload_free(&b);
    munmap((void *)got, (size_t)st.st_size);
    munmap((void *)data, (size_t)st.st_size);
    close(back);
    close(in);
    tl_sh("rm -rf '%s'", tmp);
}

int main(void)
{
    T_RUN(test_made_up);
    T_RUN(test_no_holes);
    T_RUN(test_rocblas);
    int rc = t_done();
    return rc == 0 && rocblas_skipped ? 77 : rc;
}
