/* AMD offload bundles made by the real toolchain (clang HIP, clang-offload-
 * bundler, ld.lld; see tests/fixtures/make-devcode.sh). Expected targets are
 * the ones the build asked for; clang-offload-bundler --list is the second
 * oracle; EF_AMDGPU_MACH names are checked against clang's own output for
 * every processor it knows. */
#include <unistd.h>

#include "devcode.h"
#include "env/elf.h"

static char dc[512], tmp[512], ver[16];

#define ALL3 "gfx1100 gfx90a gfx942"
#define ALL3_IDS "gfx1100 gfx90a:xnack- gfx942"

static void path(char *out, size_t outsz, const char *rel)
{
    snprintf(out, outsz, "%s/%s", dc, rel);
}

static uint8_t *load_rel(const char *rel, size_t *n)
{
    char p[700];
    uint8_t *d;
    path(p, sizeof p, rel);
    T_EQ_INT(tl_read(p, &d, n), 0);
    return d;
}

static int scan_file(const char *rel, unsigned flags, struct gv_offload_targets *t)
{
    char p[700];
    path(p, sizeof p, rel);
    struct gv_err err = {0};
    const char *kind = NULL;
    int rc = gv_offload_scan_file_ex(p, flags, t, &kind, &err);
    if (rc)
        fprintf(stderr, "  %s: %s\n", rel, err.msg);
    else
        T_EQ_STR(kind, "hip");
    return rc;
}

static void test_libtorch_hip(void)
{
    for (unsigned flags = 0; flags <= GV_OFFLOAD_QUICK; flags++) {
        struct gv_offload_targets t;
        T_EQ_INT(scan_file("libtorch_hip.so", flags, &t), GV_OK);
        T_CHECK(dc_same_list(t.targets, t.n_targets, ALL3));
        T_CHECK(dc_same_list(t.target_ids, t.n_target_ids, ALL3_IDS));
        T_EQ_INT(t.n_bundles, 2);    /* two translation units */
        T_EQ_INT(t.n_compressed, 1); /* b.hip was built with --offload-compress */
        T_EQ_INT(t.n_entries, 6);
        T_EQ_INT(t.n_skipped, 0);
        T_EQ_INT(t.n_mismatch, 0);
        gv_offload_free(&t);
    }
}

/* Non-host IDs that `clang-offload-bundler --list` prints, sorted, with the
 * triple removed: the same form as target_ids. */
static char *bundler_ids(const char *file)
{
    return tl_capture("clang-offload-bundler-%s --list --type=o --input='%s' | tr -s '\\n' '\\n' | "
                      "grep -o 'hipv4-amdgcn-amd-amdhsa--[^ ]*' | sed 's/^hipv4-amdgcn-amd-amdhsa--//' | "
                      "LC_ALL=C sort | tr '\\n' ' ' | sed 's/ $//'",
                      ver, file);
}

static void test_bundle_forms(void)
{
    static const struct {
        const char *lib, *bin;
        size_t compressed;
        int bundler_reads; /* clang-offload-bundler 19 does not know CCOB v3 */
    } forms[] = {
        {"amd/libhip-plain.so", "amd/bundle.bin", 0, 1},
        {"amd/libhip-v1-zlib.so", "amd/bundle-v1-zlib.bin", 1, 1},
        {"amd/libhip-v2-zstd.so", "amd/bundle-v2-zstd.bin", 1, 1},
        {"amd/libhip-v3-zlib.so", "amd/bundle-v3-zlib.bin", 1, 0},
    };
    for (size_t i = 0; i < sizeof forms / sizeof forms[0]; i++) {
        fprintf(stderr, "  %s\n", forms[i].lib);
        for (unsigned flags = 0; flags <= GV_OFFLOAD_QUICK; flags++) {
            struct gv_offload_targets t;
            T_EQ_INT(scan_file(forms[i].lib, flags, &t), GV_OK);
            T_CHECK(dc_same_list(t.targets, t.n_targets, ALL3));
            T_CHECK(dc_same_list(t.target_ids, t.n_target_ids, ALL3_IDS));
            T_EQ_INT(t.n_bundles, 1);
            T_EQ_INT(t.n_compressed, forms[i].compressed);
            T_EQ_INT(t.n_entries, 3);
            gv_offload_free(&t);
        }
        /* The bare bundle, scanned from memory, and the bundler's own listing. */
        char p[700];
        path(p, sizeof p, forms[i].bin);
        uint8_t *data;
        size_t n;
        T_EQ_INT(tl_read(p, &data, &n), 0);
        struct gv_offload_targets t;
        struct gv_err err = {0};
        T_EQ_INT(gv_offload_scan_hip(data, n, &t, &err), GV_OK);
        T_CHECK(dc_same_list(t.target_ids, t.n_target_ids, ALL3_IDS));
        if (forms[i].bundler_reads) {
            char *ids = bundler_ids(p);
            T_CHECK(ids != NULL);
            if (ids)
                T_CHECK(dc_same_list(t.target_ids, t.n_target_ids, ids));
            free(ids);
        }
        gv_offload_free(&t);
        free(data);
    }
}

static void test_mixed_section(void)
{
    struct gv_offload_targets t;
    T_EQ_INT(scan_file("amd/libhip-mixed.so", 0, &t), GV_OK);
    T_CHECK(dc_same_list(t.targets, t.n_targets, "gfx1030 gfx1100 gfx908 gfx90a gfx942"));
    T_EQ_INT(t.n_bundles, 3);
    T_EQ_INT(t.n_compressed, 2);
    gv_offload_free(&t);
}

/* Other ID spellings, written by clang-offload-bundler itself. */
static void test_entry_ids(void)
{
    struct gv_offload_targets t;
    T_EQ_INT(scan_file("amd/libhip-ids.so", 0, &t), GV_OK);
    T_CHECK(dc_same_list(t.targets, t.n_targets, "gfx10-3-generic gfx906 gfx90a gfx942"));
    T_CHECK(dc_same_list(t.target_ids, t.n_target_ids,
                         "gfx10-3-generic gfx906 gfx90a gfx942:sramecc+:xnack-"));
    T_EQ_INT(t.n_mismatch, 0);
    gv_offload_free(&t);

    /* An ID with bytes that are no target name: the code object's e_flags
     * still name it; without an ELF either, the entry is counted as skipped. */
    size_t n;
    uint8_t *d = load_rel("amd/bundle-ids.bin", &n);
    uint8_t *id = memmem(d, n, "hip-amdgcn-amd-amdhsa--gfx906", 29);
    T_CHECK(id != NULL && id - d >= 32 + 24);
    if (!id || id - d < 32 + 24) {
        free(d);
        return;
    }
    id[25] = 0xff;
    id[26] = '"';
    struct gv_err err = {0};
    T_EQ_INT(gv_offload_scan_hip(d, n, &t, &err), GV_OK);
    T_CHECK(dc_same_list(t.targets, t.n_targets, "gfx10-3-generic gfx906 gfx90a gfx942"));
    T_EQ_INT(t.n_skipped, 0);
    gv_offload_free(&t);
    /* The entry's code object offset is the u64 24 bytes before its ID. */
    uint64_t off = 0;
    for (int i = 0; i < 8; i++)
        off |= (uint64_t)id[-24 + i] << (8 * i);
    T_CHECK(off + 4 <= n && memcmp(d + off, "\177ELF", 4) == 0);
    if (off + 4 <= n)
        d[off] = 'X';
    T_EQ_INT(gv_offload_scan_hip(d, n, &t, &err), GV_OK);
    T_CHECK(dc_same_list(t.targets, t.n_targets, "gfx10-3-generic gfx90a gfx942"));
    T_EQ_INT(t.n_skipped, 1);
    gv_offload_free(&t);
    free(d);
}

/* An ID naming another processor than the code object's e_flags: the
 * e_flags value wins and the disagreement is counted. */
static void test_id_disagrees_with_elf(void)
{
    char p[700];
    path(p, sizeof p, "amd/bundle.bin");
    uint8_t *data;
    size_t n;
    T_EQ_INT(tl_read(p, &data, &n), 0);
    uint8_t *at = memmem(data, n, "amdhsa--gfx942", 14);
    T_CHECK(at != NULL);
    if (!at) {
        free(data);
        return;
    }
    memcpy(at + 8, "gfx940", 6);
    struct gv_offload_targets t;
    struct gv_err err = {0};
    T_EQ_INT(gv_offload_scan_hip(data, n, &t, &err), GV_OK);
    T_CHECK(dc_same_list(t.targets, t.n_targets, ALL3));
    T_EQ_INT(t.n_mismatch, 1);
    gv_offload_free(&t);
    free(data);
}

/* Every truncated copy of a single bundle is malformed. */
static void truncate_bundle(const char *rel)
{
    char p[700];
    path(p, sizeof p, rel);
    uint8_t *data;
    size_t n;
    T_EQ_INT(tl_read(p, &data, &n), 0);
    int bad = 0, quick_crash = 0;
    for (size_t len = 1; len < n; len++) {
        uint8_t *c = malloc(len);
        memcpy(c, data, len);
        struct gv_offload_targets t;
        struct gv_err err = {0};
        int rc = gv_offload_scan_hip(c, len, &t, &err);
        if (rc != GV_E_FORMAT && bad++ < 3)
            fprintf(stderr, "  %s length %zu: rc %d\n", rel, len, rc);
        if (rc == GV_OK)
            gv_offload_free(&t);
        /* Quick mode reads less, so it may succeed, but never crashes. */
        rc = gv_offload_scan_hip_ex(c, len, GV_OFFLOAD_QUICK, &t, &err);
        if (rc != GV_OK && rc != GV_E_FORMAT)
            quick_crash++;
        if (rc == GV_OK)
            gv_offload_free(&t);
        free(c);
    }
    T_EQ_INT(bad, 0);
    T_EQ_INT(quick_crash, 0);
    free(data);
}

static void test_truncated(void)
{
    truncate_bundle("amd/bundle.bin");
    truncate_bundle("amd/bundle-v1-zlib.bin");
    truncate_bundle("amd/bundle-v2-zstd.bin");
    truncate_bundle("amd/bundle-v3-zlib.bin");

    /* libtorch_hip.so's .hip_fatbin holds two bundles: a cut inside the
     * padding after the first leaves a valid first bundle; any other cut is
     * malformed. */
    char lib[700], out[700];
    path(lib, sizeof lib, "libtorch_hip.so");
    snprintf(out, sizeof out, "%s/hip_fatbin.bin", tmp);
    uint8_t *sec;
    size_t n;
    T_EQ_INT(dc_section(lib, ".hip_fatbin", out, &sec, &n), 0);
    struct gv_offload_targets full;
    struct gv_err err = {0};
    T_EQ_INT(gv_offload_scan_hip(sec, n, &full, &err), GV_OK);
    int bad = 0;
    for (size_t len = 1; len < n; len++) {
        uint8_t *c = malloc(len);
        memcpy(c, sec, len);
        struct gv_offload_targets t;
        int rc = gv_offload_scan_hip(c, len, &t, &err);
        if (rc == GV_OK) {
            if (t.n_bundles != 1 || !dc_subset(t.targets, t.n_targets, full.targets, full.n_targets))
                bad++;
            gv_offload_free(&t);
        } else if (rc != GV_E_FORMAT)
            bad++;
        free(c);
    }
    T_EQ_INT(bad, 0);
    gv_offload_free(&full);
    free(sec);

    /* Truncated files: the ELF layer refuses them and names the file. */
    uint8_t *img;
    T_EQ_INT(tl_read(lib, &img, &n), 0);
    size_t lens[] = {10, 100, n / 3, n / 2, n - 100, n - 1};
    for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++) {
        char p[700];
        snprintf(p, sizeof p, "%s/trunc-%zu.so", tmp, lens[i]);
        T_EQ_INT(tl_write(p, img, lens[i]), 0);
        struct gv_offload_targets t;
        T_EQ_INT(gv_offload_scan_file(p, &t, NULL, &err), GV_E_FORMAT);
        T_CHECK(strstr(err.msg, p) != NULL);
    }
    free(img);
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

static void expect_bad(const uint8_t *data, size_t n, const char *needle, int line)
{
    struct gv_offload_targets t;
    struct gv_err err = {0};
    int rc = gv_offload_scan_hip(data, n, &t, &err);
    t_checks++;
    if (rc != GV_E_FORMAT || (needle && !strstr(err.msg, needle))) {
        t_failed++;
        fprintf(stderr, "line %d: want GV_E_FORMAT with \"%s\", got %d \"%s\"\n", line,
                needle ? needle : "", rc, err.msg);
    }
    if (rc == GV_OK)
        gv_offload_free(&t);
}

/* Header fields that lie. Offsets are those of rocm-facts.md 7b. */
static void test_damaged_headers(void)
{
    size_t n;
    uint8_t *d;

    d = load_rel("amd/bundle-v2-zstd.bin", &n);
    uint32_t raw = d[12] | d[13] << 8 | d[14] << 16 | (uint32_t)d[15] << 24;
    wr32(d + 12, raw + 1); expect_bad(d, n, "announced", __LINE__);
    wr32(d + 12, raw - 1); expect_bad(d, n, "past the end", __LINE__);
    wr32(d + 12, raw);
    wr32(d + 8, (uint32_t)n + 1); expect_bad(d, n, "total size", __LINE__);
    wr32(d + 8, (uint32_t)n);
    d[6] = 5; expect_bad(d, n, "compression method", __LINE__);
    d[6] = 0; expect_bad(d, n, "zlib", __LINE__); /* zstd data read as zlib */
    d[6] = 1;
    d[4] = 4; expect_bad(d, n, "version 4", __LINE__);
    d[4] = 2;
    d[40] ^= 0xff; expect_bad(d, n, NULL, __LINE__);
    free(d);

    d = load_rel("amd/bundle-v3-zlib.bin", &n);
    wr64(d + 16, UINT64_C(1) << 31); expect_bad(d, n, "ratio", __LINE__);
    free(d);
    /* 1 MiB of "compressed" bytes announcing 2 GiB: a plausible ratio, but
     * over the per-bundle limit. */
    n = (1u << 20) + 32;
    d = calloc(1, n);
    memcpy(d, "CCOB", 4);
    d[4] = 3;
    wr64(d + 8, n);
    wr64(d + 16, UINT64_C(1) << 31);
    expect_bad(d, n, "limit", __LINE__);
    free(d);

    d = load_rel("amd/bundle.bin", &n);
    wr64(d + 24, UINT64_C(1) << 40); expect_bad(d, n, "entry count", __LINE__);
    wr64(d + 24, 4);
    wr64(d + 32 + 16, UINT64_C(1) << 33); expect_bad(d, n, "ID length", __LINE__);
    wr64(d + 32 + 16, 30); /* the host entry's ID length */
    wr64(d + 32 + 8, UINT64_MAX); expect_bad(d, n, "past the end", __LINE__);
    free(d);

    uint8_t junk[4096] = {1, 2, 3};
    expect_bad(junk, sizeof junk, "no clang offload bundle", __LINE__);
    struct gv_offload_targets t;
    struct gv_err err = {0};
    T_EQ_INT(gv_offload_scan_hip(junk, 0, &t, &err), GV_OK);
    T_EQ_INT(t.n_targets, 0);
    gv_offload_free(&t);
}

static void test_both_kinds(void)
{
    char p[700];
    path(p, sizeof p, "amd/libboth.so");
    if (access(p, R_OK) != 0) {
        fprintf(stderr, "  no %s (needs nvcc too); not checked\n", p);
        return;
    }
    struct gv_offload_targets t;
    struct gv_err err = {0};
    const char *kind = NULL;
    T_EQ_INT(gv_offload_scan_file(p, &t, &kind, &err), GV_OK);
    T_EQ_STR(kind, "hip+cuda");
    T_CHECK(dc_same_list(t.targets, t.n_targets, "compute_90 gfx1100 gfx90a gfx942 sm_80 sm_90"));
    T_CHECK(t.n_bundles >= 2);
    gv_offload_free(&t);
}

static void test_no_device_code(void)
{
    char p[700];
    path(p, sizeof p, "amd/base.so");
    struct gv_offload_targets t;
    struct gv_err err = {0};
    const char *kind = "x";
    T_EQ_INT(gv_offload_scan_file(p, &t, &kind, &err), GV_E_NOTFOUND);
    T_CHECK(kind == NULL);
    T_CHECK(strstr(err.msg, p) != NULL);
    T_EQ_INT(gv_offload_scan_file(dc, &t, &kind, &err), GV_E_FORMAT);
}

/* EF_AMDGPU_MACH of what clang itself emits for each processor it knows. */
static void test_mach_names_from_clang(void)
{
    char *cpus = tl_capture("clang-%s --target=amdgcn-amd-amdhsa -nogpulib --print-supported-cpus "
                            "-c -x c /dev/null -o /dev/null 2>&1 | tr -s ' \\t' '\\n\\n' | grep -x 'gfx[0-9a-z-]*'",
                            ver);
    T_CHECK(cpus != NULL);
    int checked = 0;
    for (char *cpu = cpus ? strtok(cpus, "\n") : NULL; cpu; cpu = strtok(NULL, "\n")) {
        char obj[700];
        snprintf(obj, sizeof obj, "%s/%s.o", tmp, cpu);
        /* Generic processors need code object version 6. */
        int rc = tl_sh("echo 'void f(void) {}' | clang-%s --target=amdgcn-amd-amdhsa -mcpu=%s "
                       "%s -nogpulib -x c -c - -o '%s' 2>/dev/null",
                       ver, cpu, strstr(cpu, "generic") ? "-mcode-object-version=6" : "", obj);
        if (rc != 0) {
            fprintf(stderr, "  clang could not build for %s; not checked\n", cpu);
            continue;
        }
        struct gv_elf_info e;
        struct gv_err err = {0};
        T_EQ_INT(gv_elf_read_file(obj, &e, &err), GV_OK);
        T_EQ_INT(e.machine, 224);
        const char *name = gv_amdgpu_mach_name(e.flags & 0xff);
        if (!name || strcmp(name, cpu) != 0) {
            t_checks++;
            t_failed++;
            fprintf(stderr, "  %s: e_flags 0x%x gives %s\n", cpu, e.flags, name ? name : "(none)");
        } else {
            t_checks++;
            checked++;
        }
        gv_elf_free(&e);
    }
    fprintf(stderr, "  %d processors agree with clang-%s\n", checked, ver);
    T_CHECK(checked >= 40);
    free(cpus);
}

int main(void)
{
    if (!tl_find_llvm(ver, sizeof ver) || !tl_have("objcopy")) {
        fprintf(stderr, "skipped: needs clang-NN, ld.lld-NN, clang-offload-bundler-NN (NN >= 17; "
                        "Debian: clang-19 lld-19 clang-tools-19) and objcopy\n");
        return 77;
    }
    int made = dc_build("hip", dc, sizeof dc);
    if (made < 0)
        return 1;
    if (made == 0)
        return 77;
    tl_tmpdir("test_offload_hip", tmp, sizeof tmp);
    T_RUN(test_libtorch_hip);
    T_RUN(test_bundle_forms);
    T_RUN(test_mixed_section);
    T_RUN(test_entry_ids);
    T_RUN(test_id_disagrees_with_elf);
    T_RUN(test_truncated);
    T_RUN(test_damaged_headers);
    T_RUN(test_both_kinds);
    T_RUN(test_no_device_code);
    T_RUN(test_mach_names_from_clang);
    return t_done();
}
