/* ELF reader against gcc-built libraries, with `readelf` (binutils) as the
 * independent oracle; damaged copies of those libraries must give
 * GV_E_FORMAT, never a crash. */
#include <errno.h>
#include <unistd.h>

#include "env/elf.h"
#include "t.h"
#include "tools.h"
#include "elf_oracle.h"

static char dir[512];
static char lib_runpath[600], lib_rpath[600], obj_path[600];

#define RPATH_TEXT "$ORIGIN/../lib:/opt/rocm-6.2.0/lib"

static void build_fixtures(void)
{
    char src[600];
    snprintf(src, sizeof src, "%s/lib.c", dir);
    const char *code = "#include <zlib.h>\n#include <math.h>\n"
                       "double gv_f(double x) { return sqrt(x) + (double)zlibVersion()[0]; }\n";
    T_EQ_INT(tl_write(src, code, strlen(code)), 0);
    snprintf(lib_runpath, sizeof lib_runpath, "%s/libamdhip64.so.6.2.0", dir);
    snprintf(lib_rpath, sizeof lib_rpath, "%s/libtorch_hip.so", dir);
    snprintf(obj_path, sizeof obj_path, "%s/lib.o", dir);
    T_EQ_INT(tl_sh("gcc -shared -fPIC -O1 -o '%s' -Wl,-soname,libamdhip64.so.6 "
                   "-Wl,-rpath,'" RPATH_TEXT "' -Wl,--enable-new-dtags -Wl,--no-as-needed "
                   "'%s' -lz -lm -ldl",
                   lib_runpath, src),
             0);
    T_EQ_INT(tl_sh("gcc -shared -fPIC -O1 -o '%s' -Wl,-soname,libtorch_hip.so "
                   "-Wl,-rpath,'$ORIGIN' -Wl,--disable-new-dtags -Wl,--no-as-needed "
                   "'%s' -lm -lz",
                   lib_rpath, src),
             0);
    T_EQ_INT(tl_sh("gcc -c -fPIC -O1 -o '%s' '%s'", obj_path, src), 0);
}

static void test_runpath_library(void)
{
    check_like_readelf(lib_runpath);
    /* And what the build command asked for. */
    struct gv_elf_info e;
    struct gv_err err = {0};
    T_EQ_INT(gv_elf_read_file(lib_runpath, &e, &err), GV_OK);
    T_EQ_STR(e.soname, "libamdhip64.so.6");
    T_EQ_STR(e.runpath, RPATH_TEXT);
    T_CHECK(e.rpath == NULL);
    T_EQ_INT(e.elf_class, 64);
    T_EQ_INT(e.little_endian, 1);
    T_EQ_INT(e.type, 3);      /* ET_DYN */
    T_EQ_INT(e.machine, 62);  /* EM_X86_64 */
    int z = 0, m = 0;
    for (size_t i = 0; i < e.n_needed; i++) {
        z += strcmp(e.needed[i], "libz.so.1") == 0;
        m += strcmp(e.needed[i], "libm.so.6") == 0;
    }
    T_EQ_INT(z, 1);
    T_EQ_INT(m, 1);
    T_CHECK(gv_elf_find_section(&e, ".dynstr") != NULL);
    T_CHECK(gv_elf_find_section(&e, ".no_such_section") == NULL);
    gv_elf_free(&e);
}

static void test_rpath_library(void)
{
    check_like_readelf(lib_rpath);
    struct gv_elf_info e;
    struct gv_err err = {0};
    T_EQ_INT(gv_elf_read_file(lib_rpath, &e, &err), GV_OK);
    T_EQ_STR(e.rpath, "$ORIGIN");
    T_CHECK(e.runpath == NULL);
    T_EQ_STR(e.soname, "libtorch_hip.so");
    gv_elf_free(&e);
}

static void test_relocatable_object(void)
{
    check_like_readelf(obj_path);
    struct gv_elf_info e;
    struct gv_err err = {0};
    T_EQ_INT(gv_elf_read_file(obj_path, &e, &err), GV_OK);
    T_EQ_INT(e.type, 1); /* ET_REL */
    T_CHECK(e.soname == NULL);
    T_EQ_INT(e.n_needed, 0);
    T_CHECK(gv_elf_find_section(&e, ".text") != NULL);
    gv_elf_free(&e);
}

static void test_system_files(void)
{
    const char *cands[] = {"/bin/ls", "/bin/sh", "/usr/bin/readelf"};
    for (size_t i = 0; i < sizeof cands / sizeof cands[0]; i++)
        if (access(cands[i], R_OK) == 0)
            check_like_readelf(cands[i]);
    char *libc = tl_capture("gcc -print-file-name=libc.so.6");
    if (libc) {
        libc[strcspn(libc, "\n")] = '\0';
        if (libc[0] == '/')
            check_like_readelf(libc);
        free(libc);
    }
}

/* ---- damaged copies ---- */

static uint8_t *img;
static size_t img_len;

static uint64_t rd64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

static void wr64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static void wr32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static void wr16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

/* Parses a copy of exactly len bytes (so ASan sees any overread). */
static int parse_copy(const uint8_t *data, size_t len, struct gv_elf_info *e, struct gv_err *err)
{
    uint8_t *c = malloc(len ? len : 1);
    if (len)
        memcpy(c, data, len);
    int rc = gv_elf_parse(c, len, "damaged.so", e, err);
    free(c);
    return rc;
}

static void expect_format(const uint8_t *data, size_t len, const char *needle, int line)
{
    struct gv_elf_info e;
    struct gv_err err = {0};
    int rc = parse_copy(data, len, &e, &err);
    t_checks++;
    if (rc != GV_E_FORMAT || !strstr(err.msg, "damaged.so") ||
        (needle && !strstr(err.msg, needle))) {
        t_failed++;
        fprintf(stderr, "line %d: want GV_E_FORMAT mentioning \"%s\", got %d \"%s\"\n", line,
                needle ? needle : "", rc, err.msg);
    }
    if (rc == GV_OK)
        gv_elf_free(&e);
}

static void test_truncated_every_length(void)
{
    T_EQ_INT(tl_read(lib_runpath, &img, &img_len), 0);
    /* The premise: gcc/ld put the section header table at the very end, so
     * every shorter copy misses part of it (readelf says where it is). */
    long long shoff = tl_readelf_header_num(lib_runpath, "Start of section headers");
    long long shsz = tl_readelf_header_num(lib_runpath, "Size of section headers");
    long long shn = tl_readelf_header_num(lib_runpath, "Number of section headers");
    T_EQ_INT(shoff + shsz * shn, img_len);
    int bad = 0;
    for (size_t len = 0; len < img_len; len++) {
        struct gv_elf_info e;
        struct gv_err err = {0};
        int rc = parse_copy(img, len, &e, &err);
        if (rc != GV_E_FORMAT || !strstr(err.msg, "damaged.so")) {
            if (bad++ < 5)
                fprintf(stderr, "  length %zu: rc %d: %s\n", len, rc, err.msg);
            if (rc == GV_OK)
                gv_elf_free(&e);
        }
    }
    T_EQ_INT(bad, 0);
    /* Truncated files on disk: the message names the file. */
    size_t lens[] = {0, 3, 16, 63, 64, img_len / 2, img_len - 1};
    for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++) {
        char p[700];
        snprintf(p, sizeof p, "%s/trunc-%zu.so", dir, lens[i]);
        T_EQ_INT(tl_write(p, img, lens[i]), 0);
        struct gv_elf_info e;
        struct gv_err err = {0};
        T_EQ_INT(gv_elf_read_file(p, &e, &err), GV_E_FORMAT);
        T_CHECK(strstr(err.msg, p) != NULL);
    }
}

/* Offset of the dynamic entry with this tag, from readelf's dynamic offset. */
static size_t dyn_entry(uint64_t tag)
{
    char *txt = tl_capture("readelf -d '%s' | sed -n 's/^Dynamic section at offset \\(0x[0-9a-f]*\\).*/\\1/p'",
                           lib_runpath);
    size_t off = txt ? (size_t)strtoull(txt, NULL, 0) : 0;
    free(txt);
    for (size_t o = off; off && o + 16 <= img_len; o += 16) {
        uint64_t t = rd64(img + o);
        if (t == tag)
            return o;
        if (t == 0)
            break;
    }
    return 0;
}

static size_t phdr_of_type(uint32_t type)
{
    uint64_t phoff = rd64(img + 32);
    unsigned n = img[56] | img[57] << 8;
    for (unsigned i = 0; i < n; i++) {
        size_t o = phoff + (size_t)i * 56;
        if ((img[o] | img[o + 1] << 8 | img[o + 2] << 16 | (uint32_t)img[o + 3] << 24) == type)
            return o;
    }
    return 0;
}

static uint8_t *patched(void)
{
    uint8_t *c = malloc(img_len);
    memcpy(c, img, img_len);
    return c;
}

static void test_damaged_fields(void)
{
    uint64_t shoff = rd64(img + 40);
    unsigned shnum = img[60] | img[61] << 8, shstrndx = img[62] | img[63] << 8;
    uint8_t *c;

    c = patched(); memcpy(c, "\177ELG", 4); expect_format(c, img_len, "magic", __LINE__); free(c);
    c = patched(); c[4] = 3; expect_format(c, img_len, "EI_CLASS", __LINE__); free(c);
    c = patched(); c[5] = 0; expect_format(c, img_len, "EI_DATA", __LINE__); free(c);
    c = patched(); wr64(c + 40, img_len); expect_format(c, img_len, "section header table", __LINE__); free(c);
    c = patched(); wr64(c + 40, UINT64_MAX - 10); expect_format(c, img_len, "section header", __LINE__); free(c);
    c = patched(); wr16(c + 60, 0xfff0); expect_format(c, img_len, "section header table", __LINE__); free(c);
    c = patched(); wr16(c + 58, 12); expect_format(c, img_len, "section header size", __LINE__); free(c);
    c = patched(); wr16(c + 62, (uint16_t)(shnum + 5)); expect_format(c, img_len, "name table index", __LINE__); free(c);
    c = patched(); wr64(c + shoff + 64 + 24, img_len + 100); expect_format(c, img_len, "section 1", __LINE__); free(c);
    c = patched(); wr64(c + shoff + 64 + 32, UINT64_MAX); expect_format(c, img_len, "section 1", __LINE__); free(c);
    c = patched(); wr32(c + shoff + 64, 0xffffff); expect_format(c, img_len, "past the end", __LINE__); free(c);
    c = patched(); wr64(c + 32, img_len - 8); expect_format(c, img_len, "program header", __LINE__); free(c);
    c = patched(); wr16(c + 54, 8); expect_format(c, img_len, "program header size", __LINE__); free(c);
    size_t load = phdr_of_type(1);
    T_CHECK(load != 0);
    c = patched(); wr64(c + load + 32, img_len * 4); expect_format(c, img_len, "segment", __LINE__); free(c);

    /* Extended numbering: e_shnum = 0 and e_shstrndx = SHN_XINDEX with the
     * real values in section 0 must parse like the original. */
    c = patched();
    wr16(c + 60, 0);
    wr64(c + shoff + 32, shnum);
    wr16(c + 62, 0xffff);
    wr32(c + shoff + 40, shstrndx);
    struct gv_elf_info e;
    struct gv_err err = {0};
    T_EQ_INT(parse_copy(c, img_len, &e, &err), GV_OK);
    T_EQ_INT(e.n_sections, shnum);
    T_EQ_STR(e.soname, "libamdhip64.so.6");
    if (e.n_sections > shstrndx)
        T_EQ_STR(e.sections[shstrndx].name, ".shstrtab");
    gv_elf_free(&e);
    wr64(c + shoff + 32, 1000000000);
    expect_format(c, img_len, "absurd", __LINE__);
    free(c);

    /* Dynamic section damage. */
    size_t soname = dyn_entry(14), strtab = dyn_entry(5), strsz = dyn_entry(10);
    T_CHECK(soname && strtab && strsz);
    if (!soname || !strtab || !strsz)
        return;
    c = patched(); wr64(c + soname + 8, 0x7fffffff); expect_format(c, img_len, "DT_SONAME", __LINE__); free(c);
    c = patched(); wr64(c + strsz + 8, UINT64_MAX / 2); expect_format(c, img_len, "DT_STRSZ", __LINE__); free(c);
    /* A table that ends inside the SONAME string: not terminated. */
    c = patched();
    wr64(c + strsz + 8, rd64(img + soname + 8) + 3);
    expect_format(c, img_len, "not terminated", __LINE__);
    free(c);

    /* DT_STRTAB at an unmapped address: .dynstr (the sh_link of .dynamic) is used. */
    c = patched();
    wr64(c + strtab + 8, 0x7ff000000000ull);
    T_EQ_INT(parse_copy(c, img_len, &e, &err), GV_OK);
    T_EQ_STR(e.soname, "libamdhip64.so.6");
    T_EQ_STR(e.runpath, RPATH_TEXT);
    gv_elf_free(&e);
    free(c);

    /* No PT_DYNAMIC: the .dynamic section is used. */
    size_t dynph = phdr_of_type(2);
    T_CHECK(dynph != 0);
    c = patched();
    wr32(c + dynph, 0); /* PT_NULL */
    T_EQ_INT(parse_copy(c, img_len, &e, &err), GV_OK);
    T_EQ_STR(e.soname, "libamdhip64.so.6");
    T_CHECK(e.n_needed >= 2);
    gv_elf_free(&e);
    free(c);
}

/* ---- files that are not regular files ---- */

static void test_file_kinds(void)
{
    struct gv_elf_info e;
    struct gv_err err = {0};
    T_EQ_INT(gv_elf_read_file(dir, &e, &err), GV_E_FORMAT);
    T_CHECK(strstr(err.msg, "not a regular file") != NULL);

    char p[700];
    snprintf(p, sizeof p, "%s/fifo", dir);
    T_EQ_INT(mkfifo(p, 0600), 0);
    T_EQ_INT(gv_elf_read_file(p, &e, &err), GV_E_FORMAT); /* and it did not block */
    T_CHECK(strstr(err.msg, p) != NULL);

    snprintf(p, sizeof p, "%s/missing.so", dir);
    T_EQ_INT(gv_elf_read_file(p, &e, &err), GV_E_NOTFOUND);
    T_CHECK(strstr(err.msg, p) != NULL);

    snprintf(p, sizeof p, "%s/loop.so", dir);
    T_EQ_INT(symlink("loop.so", p), 0);
    T_CHECK(gv_elf_read_file(p, &e, &err) != GV_OK);
    T_CHECK(strstr(err.msg, p) != NULL);

    snprintf(p, sizeof p, "%s/link.so", dir);
    T_EQ_INT(symlink(lib_runpath, p), 0);
    T_EQ_INT(gv_elf_read_file(p, &e, &err), GV_OK);
    T_EQ_STR(e.soname, "libamdhip64.so.6");
    gv_elf_free(&e);

    /* Over 4 GiB (sparse, so it costs no disk). */
    snprintf(p, sizeof p, "%s/huge.so", dir);
    if (tl_sh("truncate -s 4294967297 '%s'", p) == 0) {
        T_EQ_INT(gv_elf_read_file(p, &e, &err), GV_E_FORMAT);
        T_CHECK(strstr(err.msg, "4 GiB") != NULL);
        unlink(p);
    }
}

/* ---- hand-built headers for byte orders and classes gcc does not make here ---- */

static void test_hand_built_big_endian(void)
{
    /* ELF32, big-endian, ET_EXEC, EM_MIPS, e_flags 0x70001007, no sections. */
    uint8_t h32[52] = {0x7f, 'E', 'L', 'F', 1, 2, 1, 0};
    h32[17] = 2;            /* e_type */
    h32[19] = 8;            /* e_machine */
    h32[23] = 1;            /* e_version */
    h32[36] = 0x70; h32[37] = 0x00; h32[38] = 0x10; h32[39] = 0x07; /* e_flags */
    h32[41] = 52;           /* e_ehsize */
    struct gv_elf_info e;
    struct gv_err err = {0};
    T_EQ_INT(parse_copy(h32, sizeof h32, &e, &err), GV_OK);
    T_EQ_INT(e.elf_class, 32);
    T_EQ_INT(e.little_endian, 0);
    T_EQ_INT(e.type, 2);
    T_EQ_INT(e.machine, 8);
    T_EQ_INT(e.flags, 0x70001007);
    T_EQ_INT(e.n_sections, 0);
    gv_elf_free(&e);
    /* The same header one byte short. */
    expect_format(h32, sizeof h32 - 1, "file header", __LINE__);
    /* A big-endian ELF64 header whose section table lies past the end. */
    uint8_t h64[64] = {0x7f, 'E', 'L', 'F', 2, 2, 1, 0};
    h64[17] = 3;
    h64[19] = 21;     /* EM_PPC64 */
    h64[47] = 0x40;   /* e_shoff = 64 (big-endian u64 at 40) */
    h64[59] = 64;     /* e_shentsize */
    h64[61] = 1;      /* e_shnum */
    expect_format(h64, sizeof h64, "past the end", __LINE__);
}

int main(void)
{
    if (!tl_have("gcc") || !tl_have("readelf")) {
        fprintf(stderr, "skipped: needs gcc and readelf (binutils)\n");
        return 77;
    }
    tl_tmpdir("test_elf", dir, sizeof dir);
    build_fixtures();
    T_RUN(test_runpath_library);
    T_RUN(test_rpath_library);
    T_RUN(test_relocatable_object);
    T_RUN(test_system_files);
    T_RUN(test_truncated_every_length);
    T_RUN(test_damaged_fields);
    T_RUN(test_file_kinds);
    T_RUN(test_hand_built_big_endian);
    free(img);
    return t_done();
}
