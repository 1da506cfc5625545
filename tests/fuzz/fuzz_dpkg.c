/* Fuzz target: the dpkg status parser and the rpm query-output parser.
 * Besides "no crash, no leak", checks the parser's promises on every input. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "env/pkgdb.h"

static void check(const struct gv_pkg_list *l)
{
    for (size_t i = 0; i < l->n; i++) {
        const struct gv_pkg *p = &l->items[i];
        if (!p->name[0] || strpbrk(p->name, " \t\n") || !p->state ||
            !strcmp(p->state, "not-installed") || strlen(p->name) > GV_DPKG_FIELD_MAX ||
            (p->version && strlen(p->version) > GV_DPKG_FIELD_MAX))
            abort();
        if (p->hold && strcmp(p->want, "hold") != 0)
            abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct gv_pkg_list l;
    struct gv_err err = {0};
    if (gv_dpkg_parse((const char *)data, size, &l, &err) == 0) {
        check(&l);
        gv_pkg_list_free(&l);
    }
    if (gv_rpm_parse((const char *)data, size, &l, &err) == 0) {
        check(&l);
        gv_pkg_list_free(&l);
    }
    return 0;
}
