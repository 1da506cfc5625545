/* What the port tests (test_port_ext.c, test_port_hipcc.c) share: a target
 * list from "gfx90a,gfx1100", and findings picked by file name and fields. */
#ifndef GV_TEST_PORT_T_H
#define GV_TEST_PORT_T_H

#include <string.h>

#include "port/port.h"

/* t over names (room for 8) from a comma-separated list. */
static __attribute__((unused)) void pt_targets(struct gv_port_targets *t, char (*names)[32],
                                               const char *list)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", list);
    memset(t, 0, sizeof *t);
    for (char *s = strtok(buf, ","); s && t->n < 8; s = strtok(NULL, ","))
        snprintf(names[t->n++], 32, "%s", s);
    t->names = names;
}

/* The first finding whose file ends with name and whose key has the string
 * value want (or, for line >= 0, whose "line" is line too); NULL when none. */
static __attribute__((unused)) json_t *pt_find(json_t *f, const char *name, const char *key,
                                               const char *want, long line)
{
    size_t i;
    json_t *v;
    json_array_foreach(f, i, v) {
        const char *file = json_string_value(json_object_get(v, "file"));
        const char *got = json_string_value(json_object_get(v, key));
        size_t n = file ? strlen(file) : 0, k = strlen(name);
        if (n >= k && strcmp(file + n - k, name) == 0 && got && strcmp(got, want) == 0 &&
            (line < 0 || json_integer_value(json_object_get(v, "line")) == line))
            return v;
    }
    return NULL;
}

#endif
