/* Fuzz target: the ELF reader on arbitrary bytes. Seeds: tests/fuzz/corpus/elf
 * (real toolchain output, see tests/fuzz/make-binary-seeds.sh). */
#include <stdint.h>
#include <string.h>

#include "env/elf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct gv_elf_info info;
    struct gv_err err = {0};
    int rc = gv_elf_parse(data, size, "fuzz", &info, &err);
    /* Without an error record the status must be the same. */
    struct gv_elf_info quiet;
    int rc2 = gv_elf_parse(data, size, NULL, &quiet, NULL);
    if (rc2 != rc)
        __builtin_trap();
    if (rc2 == GV_OK)
        gv_elf_free(&quiet);
    if (rc != GV_OK)
        return 0;
    /* Every reported string and section must be usable. */
    size_t sum = 0;
    if (info.soname)
        sum += strlen(info.soname);
    if (info.rpath)
        sum += strlen(info.rpath);
    if (info.runpath)
        sum += strlen(info.runpath);
    for (size_t i = 0; i < info.n_needed; i++)
        sum += strlen(info.needed[i]);
    for (size_t i = 0; i < info.n_sections; i++) {
        const uint8_t *p = gv_elf_section_data(&info.sections[i], data, size);
        if (p && info.sections[i].size)
            sum += p[0] + p[info.sections[i].size - 1];
    }
    const struct gv_elf_section *s = gv_elf_find_section(&info, ".dynstr");
    if (s)
        sum += s->size;
    gv_elf_free(&info);
    return sum == 0xdeadbeef; /* keeps the reads from being optimised away */
}
