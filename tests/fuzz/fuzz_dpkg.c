/* Fuzz target: the dpkg status parser and the rpm query-output parser.
 * Besides "no crash, no leak", checks the parser's promises on every input. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "env/pkgdb.h"

static int listed(const char *w, const char *const *words)
{
    for (; *words; words++)
        if (!strcmp(w, *words))
            return 1;
    return 0;
}

/* The parser's promises: packages with a name, never one that is not
 * installed, and (dpkg) a Status made of the words dpkg itself writes. */
static void check(const struct gv_pkg_list *l, int dpkg)
{
    static const char *const want[] = {"unknown", "install", "hold", "deinstall", "purge", NULL};
    static const char *const state[] = {"config-files", "half-installed", "unpacked",
                                        "half-configured", "triggers-awaited",
                                        "triggers-pending", "installed", NULL};
    for (size_t i = 0; i < l->n; i++) {
        const struct gv_pkg *p = &l->items[i];
        if (!p->name[0] || strpbrk(p->name, " \t\n") || !p->state ||
            !strcmp(p->state, "not-installed") || strlen(p->name) > GV_DPKG_FIELD_MAX ||
            (p->version && strlen(p->version) > GV_DPKG_FIELD_MAX))
            abort();
        if (p->hold && strcmp(p->want, "hold") != 0)
            abort();
        if (dpkg && (!listed(p->want, want) || !listed(p->state, state)))
            abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct gv_pkg_list l;
    struct gv_err err = {0};
    if (gv_dpkg_parse((const char *)data, size, &l, &err) == 0) {
        check(&l, 1);
        gv_pkg_list_free(&l);
    }
    if (gv_rpm_parse((const char *)data, size, &l, &err) == 0) {
        check(&l, 0);
        gv_pkg_list_free(&l);
    }
    return 0;
}
