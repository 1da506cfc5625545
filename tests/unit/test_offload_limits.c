/* Limits of the bundle scanner on hand-built bundles (format edges no tool
 * produces): the most entries a bundle may have, the most distinct targets a
 * scan keeps, and bundles at any 8-byte alignment. */
#include <stdint.h>

#include "env/offload.h"
#include "t.h"

static void put64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

/* A plain bundle of n entries with empty code objects and IDs
 * hipv4-amdgcn-amd-amdhsa--gfx<first + i in hex>. Returns its size. */
static size_t make_bundle(uint8_t *buf, uint64_t n, unsigned first)
{
    memcpy(buf, "__CLANG_OFFLOAD_BUNDLE__", 24);
    put64(buf + 24, n);
    size_t p = 32;
    for (uint64_t i = 0; i < n; i++) {
        char id[64];
        int len = snprintf(id, sizeof id, "hipv4-amdgcn-amd-amdhsa--gfx%x", first + (unsigned)i);
        put64(buf + p, 0);
        put64(buf + p + 8, 0);
        put64(buf + p + 16, (uint64_t)len);
        memcpy(buf + p + 24, id, (size_t)len);
        p += 24 + (size_t)len;
    }
    return p;
}

static void test_many_entries(void)
{
    uint64_t n = GV_OFFLOAD_MAX_ENTRIES;
    uint8_t *buf = calloc(1, n * 64 + 64);
    size_t len = make_bundle(buf, n, 0x100000);
    struct gv_offload_targets t;
    struct gv_err err = {0};
    T_EQ_INT(gv_offload_scan_hip(buf, len, &t, &err), GV_OK);
    T_EQ_INT(t.n_targets, n);
    T_EQ_INT(t.n_entries, n);
    if (t.n_targets == n) {
        T_EQ_STR(t.targets[0], "gfx100000");
        T_EQ_STR(t.targets[n - 1], "gfx10ffff");
    }
    gv_offload_free(&t);
    /* One more entry than allowed. */
    put64(buf + 24, n + 1);
    T_EQ_INT(gv_offload_scan_hip(buf, len, &t, &err), GV_E_FORMAT);
    T_CHECK(strstr(err.msg, "entry count") != NULL);
    free(buf);
}

static void test_too_many_targets(void)
{
    uint64_t n = 40000;
    uint8_t *buf = calloc(1, 2 * (n * 64 + 4096));
    size_t a = make_bundle(buf, n, 0x100000);
    size_t at = (a + 4095) & ~(size_t)4095;
    size_t b = make_bundle(buf + at, n, 0x200000);
    struct gv_offload_targets t;
    struct gv_err err = {0};
    T_EQ_INT(gv_offload_scan_hip(buf, at + b, &t, &err), GV_E_FORMAT);
    T_CHECK(strstr(err.msg, "distinct targets") != NULL);
    /* The same IDs twice are one set of targets. */
    make_bundle(buf + at, n, 0x100000);
    T_EQ_INT(gv_offload_scan_hip(buf, at + a, &t, &err), GV_OK);
    T_EQ_INT(t.n_targets, n);
    T_EQ_INT(t.n_bundles, 2);
    T_EQ_INT(t.n_entries, 2 * n);
    gv_offload_free(&t);
    free(buf);
}

static void test_alignment(void)
{
    uint8_t buf[512] = {0};
    for (size_t off = 0; off < 64; off++) {
        memset(buf, 0, sizeof buf);
        make_bundle(buf + off, 1, 0x90a);
        struct gv_offload_targets t;
        struct gv_err err = {0};
        int rc = gv_offload_scan_hip(buf, sizeof buf, &t, &err);
        if (off % 8 == 0) {
            T_EQ_INT(rc, GV_OK);
            T_EQ_INT(t.n_targets, 1);
            if (t.n_targets == 1)
                T_EQ_STR(t.targets[0], "gfx90a");
            gv_offload_free(&t);
        } else {
            T_EQ_INT(rc, GV_E_FORMAT); /* found only at 8-byte aligned offsets */
        }
    }
}

int main(void)
{
    T_RUN(test_many_entries);
    T_RUN(test_too_many_targets);
    T_RUN(test_alignment);
    return t_done();
}
