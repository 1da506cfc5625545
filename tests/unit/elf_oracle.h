/* Compares gv_elf_read_file with what `readelf` (binutils) says. */
#ifndef GV_TEST_ELF_ORACLE_H
#define GV_TEST_ELF_ORACLE_H

#include "env/elf.h"
#include "t.h"
#include "tools.h"

/* Everything `readelf -d/-h/-S` says that the parser reports too. */
static __attribute__((unused)) void check_like_readelf(const char *path)
{
    struct tl_dyn want;
    T_EQ_INT(tl_readelf_dynamic(path, &want), 0);
    struct gv_elf_info e;
    struct gv_err err = {0};
    int rc = gv_elf_read_file(path, &e, &err);
    T_EQ_INT(rc, GV_OK);
    if (rc) {
        fprintf(stderr, "  %s: %s\n", path, err.msg);
        return;
    }
    if (want.has_soname)
        T_EQ_STR(e.soname, want.soname);
    else
        T_CHECK(e.soname == NULL);
    if (want.has_rpath)
        T_EQ_STR(e.rpath, want.rpath);
    else
        T_CHECK(e.rpath == NULL);
    if (want.has_runpath)
        T_EQ_STR(e.runpath, want.runpath);
    else
        T_CHECK(e.runpath == NULL);
    T_EQ_INT(e.n_needed, want.n_needed);
    for (int i = 0; i < want.n_needed && (size_t)i < e.n_needed; i++)
        T_EQ_STR(e.needed[i], want.needed[i]);
    T_EQ_INT(e.n_sections, tl_readelf_header_num(path, "Number of section headers"));
    T_EQ_INT(e.flags, tl_readelf_header_num(path, "Flags"));

    /* Section names, in order, as `readelf -S -W` lists them. */
    char *txt = tl_capture("readelf -S -W '%s' | sed -n 's/^ *\\[ *\\([0-9]*\\)\\] \\([^ ]*\\) .*/\\1 \\2/p'",
                           path);
    T_CHECK(txt != NULL);
    int checked = 0;
    for (char *line = txt ? strtok(txt, "\n") : NULL; line; line = strtok(NULL, "\n")) {
        unsigned idx;
        char name[256];
        if (sscanf(line, "%u %255s", &idx, name) != 2 || idx == 0)
            continue;
        T_CHECK(idx < e.n_sections);
        if (idx < e.n_sections && strlen(name) < sizeof e.sections[0].name) {
            T_EQ_STR(e.sections[idx].name, name);
            checked++;
        }
    }
    T_CHECK(checked > 5 || e.n_sections <= 6);
    free(txt);
    gv_elf_free(&e);
}

#endif
