/* Fuzz target: dpkg's status file and alternatives database as the stacks
 * probe parses them. */
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
    free(a);
    free(b);
    return 0;
}
