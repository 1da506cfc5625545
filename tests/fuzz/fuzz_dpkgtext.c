/* Fuzz target: the line-oriented files the stacks/libraries/python probes
 * parse: dpkg's status, alternatives database and .list files, /etc/passwd,
 * and wheel RECORD files. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "env/stackscan.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *a = malloc(size + 1), *b = malloc(size + 1);
    if (!a || !b) {
        free(a);
        free(b);
        return 0;
    }
    memcpy(a, data, size);
    a[size] = '\0';
    memcpy(b, a, size + 1);
    json_decref(gv_dpkg_status_versions(a));
    json_decref(gv_dpkg_alternatives_parse(b));
    struct gv_owner_map *m = gv_owner_map_new();
    if (m) {
        memcpy(a, data, size);
        a[size] = '\0';
        gv_owner_map_add_list(m, "pkg", a);
        gv_owner_map_owner(m, "/usr/lib/x86_64-linux-gnu/libamdhip64.so.6");
        gv_owner_map_manages_dir(m, "/usr/lib/x86_64-linux-gnu");
        gv_owner_map_free(m);
    }
    json_t *o = json_object();
    memcpy(a, data, size);
    a[size] = '\0';
    gv_parse_passwd_homes(a, o);
    memcpy(a, data, size);
    a[size] = '\0';
    gv_parse_record_libs(a, "1.0", "w-1.0.dist-info", o);
    json_decref(o);
    free(a);
    free(b);
    return 0;
}
