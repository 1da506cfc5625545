/* ELF32/ELF64 in both byte orders, made by a real cross toolchain (clang +
 * ld.lld, which target every architecture from one install): i386, MIPS
 * (32-bit big-endian), PowerPC64 and s390x (64-bit big-endian). readelf is the
 * oracle; every truncated copy must give GV_E_FORMAT. */
#include "elf_oracle.h"

static char dir[512], ver[16];

struct target {
    const char *triple;
    int elf_class, little_endian;
    unsigned machine;
    int new_dtags;
};

static const struct target targets[] = {
    {"i686-linux-gnu", 32, 1, 3, 1},         /* EM_386 */
    {"mips-linux-gnu", 32, 0, 8, 0},         /* EM_MIPS, DT_RPATH */
    {"powerpc64-linux-gnu", 64, 0, 21, 1},   /* EM_PPC64 */
    {"s390x-linux-gnu", 64, 0, 22, 0},       /* EM_S390, DT_RPATH */
};

static int build(const struct target *t, char *lib, size_t libsz)
{
    snprintf(lib, libsz, "%s/libgv-%s.so", dir, t->triple);
    return tl_sh("cd '%s' && printf 'int gv_dep(void) { return 1; }\\n' > dep.c && "
                 "printf 'int gv_dep(void);\\nint gv_dep2(void);\\nint gv_f(void) { return gv_dep() + gv_dep2(); }\\n' > m.c && "
                 "clang-%s --target=%s -fPIC -O1 -c dep.c -o dep.o && "
                 "clang-%s --target=%s -fPIC -O1 -c m.c -o m.o && "
                 "ld.lld-%s -shared -soname libgvdep.so.1 dep.o -o libgvdep.so && "
                 "ld.lld-%s -shared -soname libgvdep2.so.7 dep.o -o libgvdep2.so && "
                 "ld.lld-%s -shared -soname libgv-%s.so.3 -rpath '/opt/gv/lib:$ORIGIN' %s "
                 "m.o libgvdep.so libgvdep2.so -o '%s'",
                 dir, ver, t->triple, ver, t->triple, ver, ver, ver, t->triple,
                 t->new_dtags ? "--enable-new-dtags" : "--disable-new-dtags", lib);
}

static void check_target(const struct target *t)
{
    char lib[700];
    T_EQ_INT(build(t, lib, sizeof lib), 0);
    check_like_readelf(lib);

    struct gv_elf_info e;
    struct gv_err err = {0};
    T_EQ_INT(gv_elf_read_file(lib, &e, &err), GV_OK);
    T_EQ_INT(e.elf_class, t->elf_class);
    T_EQ_INT(e.little_endian, t->little_endian);
    T_EQ_INT(e.machine, t->machine);
    T_EQ_INT(e.type, 3);
    char soname[128];
    snprintf(soname, sizeof soname, "libgv-%s.so.3", t->triple);
    T_EQ_STR(e.soname, soname);
    T_EQ_INT(e.n_needed, 2);
    if (e.n_needed == 2) {
        T_EQ_STR(e.needed[0], "libgvdep.so.1");
        T_EQ_STR(e.needed[1], "libgvdep2.so.7");
    }
    T_EQ_STR(t->new_dtags ? e.runpath : e.rpath, "/opt/gv/lib:$ORIGIN");
    T_CHECK((t->new_dtags ? e.rpath : e.runpath) == NULL);
    gv_elf_free(&e);

    /* Every shorter copy loses part of the section header table, which
     * ld.lld writes last (readelf tells where it is). */
    uint8_t *img = NULL;
    size_t n = 0;
    T_EQ_INT(tl_read(lib, &img, &n), 0);
    if (!img)
        return;
    long long shoff = tl_readelf_header_num(lib, "Start of section headers");
    long long shsz = tl_readelf_header_num(lib, "Size of section headers");
    long long shn = tl_readelf_header_num(lib, "Number of section headers");
    T_EQ_INT(shoff + shsz * shn, n);
    int bad = 0;
    for (size_t len = 0; len < n; len++) {
        uint8_t *c = malloc(len ? len : 1);
        memcpy(c, img, len);
        int rc = gv_elf_parse(c, len, t->triple, &e, &err);
        if (rc != GV_E_FORMAT) {
            if (bad++ < 3)
                fprintf(stderr, "  %s length %zu: rc %d\n", t->triple, len, rc);
            if (rc == GV_OK)
                gv_elf_free(&e);
        }
        free(c);
    }
    T_EQ_INT(bad, 0);
    free(img);
}

static void test_cross_targets(void)
{
    for (size_t i = 0; i < sizeof targets / sizeof targets[0]; i++) {
        fprintf(stderr, "  %s\n", targets[i].triple);
        check_target(&targets[i]);
    }
}

int main(void)
{
    if (!tl_have("readelf") || !tl_find_llvm(ver, sizeof ver)) {
        fprintf(stderr, "skipped: needs readelf and clang-NN + ld.lld-NN (Debian: clang-19 lld-19 "
                        "clang-tools-19) to build non-x86 ELF files\n");
        return 77;
    }
    tl_tmpdir("test_elf_cross", dir, sizeof dir);
    T_RUN(test_cross_targets);
    return t_done();
}
