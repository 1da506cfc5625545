/* NVIDIA fatbins made by the real nvcc (tests/fixtures/make-devcode.sh, and
 * one built here with sm_90a/sm_100f variants): the targets must be those the
 * build asked for; damaged or truncated containers give GV_E_FORMAT, never a
 * crash. (cuobjdump's listing is compared on real libraries by
 * test_offload_cuobjdump.c, which says "skipped" where there is no cuobjdump.) */
#include "devcode.h"

static char dc[512], tmp[512], lib[700];

#define WANT "compute_90 sm_80 sm_90"

static void test_libtorch_cuda(void)
{
    struct gv_offload_targets t;
    struct gv_err err = {0};
    const char *kind = NULL;
    T_EQ_INT(gv_offload_scan_file(lib, &t, &kind, &err), GV_OK);
    T_EQ_STR(kind, "cuda");
    T_CHECK(dc_same_list(t.targets, t.n_targets, WANT));
    T_CHECK(dc_same_list(t.target_ids, t.n_target_ids, WANT));
    T_CHECK(t.n_entries >= 3);
    T_EQ_INT(t.n_skipped, 0);
    T_CHECK(t.n_bundles >= 1);
    gv_offload_free(&t);
}

/* Arch-specific (sm_90a) and family-specific (sm_100f) code: the variant is a
 * flag of the entry, not part of the arch number; losing it would report a
 * library as running on GPUs it does not run on. The oracle is what nvcc was
 * asked for. */
static void test_arch_variants(void)
{
    const char *home = getenv("CUDA_HOME");
    char src[700], fat[700];
    snprintf(src, sizeof src, "%s/variants.cu", tmp);
    snprintf(fat, sizeof fat, "%s/variants.fatbin", tmp);
    FILE *f = fopen(src, "w");
    T_CHECK(f != NULL);
    if (!f)
        return;
    fputs("extern \"C\" __global__ void k(float *x) { x[threadIdx.x] += 1.0f; }\n", f);
    fclose(f);
    int rc = tl_sh("'%s/bin/nvcc' -fatbin -o '%s' '%s' -gencode arch=compute_80,code=sm_80 "
                   "-gencode 'arch=compute_90a,code=[sm_90a,compute_90a]' "
                   "-gencode arch=compute_100f,code=sm_100f >&2",
                   home && *home ? home : "/usr/local/cuda", fat, src);
    T_EQ_INT(rc, 0);
    uint8_t *d = NULL;
    size_t n = 0;
    if (rc || tl_read(fat, &d, &n) != 0)
        return;
    struct gv_offload_targets t;
    struct gv_err err = {0};
    T_EQ_INT(gv_offload_scan_cuda(d, n, &t, &err), GV_OK);
    T_CHECK(dc_same_list(t.targets, t.n_targets, "compute_90a sm_100f sm_80 sm_90a"));
    T_EQ_INT(t.n_entries, 4);
    gv_offload_free(&t);
    free(d);
}

static uint8_t *section(size_t *n)
{
    char out[700];
    uint8_t *d = NULL;
    snprintf(out, sizeof out, "%s/nv_fatbin.bin", tmp);
    T_EQ_INT(dc_section(lib, ".nv_fatbin", out, &d, n), 0);
    return d;
}

/* A cut between containers (or in the padding after one) leaves valid
 * containers; every other cut is malformed. */
static void test_truncated(void)
{
    size_t n;
    uint8_t *sec = section(&n);
    struct gv_offload_targets full, t;
    struct gv_err err = {0};
    T_EQ_INT(gv_offload_scan_cuda(sec, n, &full, &err), GV_OK);
    int bad = 0, ok = 0;
    for (size_t len = 1; len < n; len++) {
        uint8_t *c = malloc(len);
        memcpy(c, sec, len);
        int rc = gv_offload_scan_cuda(c, len, &t, &err);
        if (rc == GV_OK) {
            ok++;
            if (t.n_bundles >= full.n_bundles ||
                !dc_subset(t.targets, t.n_targets, full.targets, full.n_targets))
                bad++;
            gv_offload_free(&t);
        } else if (rc != GV_E_FORMAT || !strstr(err.msg, "fatbin"))
            bad++;
        free(c);
    }
    T_EQ_INT(bad, 0);
    T_CHECK(ok <= 8 * (int)full.n_bundles); /* only at container boundaries */
    gv_offload_free(&full);
    free(sec);
}

static void wr32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static void wr64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static void expect_bad(const uint8_t *d, size_t n, const char *needle, int line)
{
    struct gv_offload_targets t;
    struct gv_err err = {0};
    int rc = gv_offload_scan_cuda(d, n, &t, &err);
    t_checks++;
    if (rc != GV_E_FORMAT || !strstr(err.msg, needle)) {
        t_failed++;
        fprintf(stderr, "line %d: want GV_E_FORMAT with \"%s\", got %d \"%s\"\n", line, needle, rc,
                err.msg);
    }
    if (rc == GV_OK)
        gv_offload_free(&t);
}

/* Header fields at the offsets of rocm-facts.md 7c. */
static void test_damaged_headers(void)
{
    size_t n;
    uint8_t *d = section(&n);
    T_CHECK(n > 64 && d[0] == 0x50 && d[1] == 0xed && d[2] == 0x55 && d[3] == 0xba);
    unsigned hs = d[6] | d[7] << 8;
    uint8_t *e = d + hs; /* first entry */
    uint8_t save[64];
    memcpy(save, d, sizeof save);

    wr64(d + 8, UINT64_MAX - 4); expect_bad(d, n, "do not fit", __LINE__);
    memcpy(d, save, sizeof save);
    d[6] = 8; d[7] = 0; expect_bad(d, n, "header size", __LINE__);
    memcpy(d, save, sizeof save);
    uint8_t esave[64];
    memcpy(esave, e, sizeof esave);
    wr32(e + 4, 4); expect_bad(d, n, "fatbin entry", __LINE__);
    memcpy(e, esave, sizeof esave);
    wr64(e + 8, UINT64_C(1) << 40); expect_bad(d, n, "run past", __LINE__);
    memcpy(e, esave, sizeof esave);

    /* An unknown entry kind is skipped and counted, not fatal. */
    e[0] = 7;
    struct gv_offload_targets t;
    struct gv_err err = {0};
    T_EQ_INT(gv_offload_scan_cuda(d, n, &t, &err), GV_OK);
    T_EQ_INT(t.n_skipped, 1);
    gv_offload_free(&t);
    memcpy(e, esave, sizeof esave);

    /* A kind-2 entry's sm_arch is what names it. */
    wr32(e + 28, 75);
    T_EQ_INT(gv_offload_scan_cuda(d, n, &t, &err), GV_OK);
    int has75 = 0;
    for (size_t i = 0; i < t.n_targets; i++)
        has75 += strcmp(t.targets[i], e[0] == 2 ? "sm_75" : "compute_75") == 0;
    T_EQ_INT(has75, 1);
    gv_offload_free(&t);

    /* Wrong scanner for the bytes. */
    T_EQ_INT(gv_offload_scan_hip(d, n, &t, &err), GV_E_FORMAT);
    uint8_t zeros[256] = {0};
    expect_bad(zeros, sizeof zeros, "no fatbin container", __LINE__);
    free(d);
}

int main(void)
{
    if (!tl_have("objcopy")) {
        fprintf(stderr, "skipped: needs objcopy (binutils)\n");
        return 77;
    }
    int made = dc_build("cuda", dc, sizeof dc);
    if (made < 0)
        return 1;
    if (made == 0)
        return 77;
    snprintf(lib, sizeof lib, "%s/libtorch_cuda.so", dc);
    tl_tmpdir("test_offload_cuda", tmp, sizeof tmp);
    T_RUN(test_libtorch_cuda);
    T_RUN(test_arch_variants);
    T_RUN(test_truncated);
    T_RUN(test_damaged_headers);
    return t_done();
}
