/* Fuzz target for gpuvet diff: two JSON documents separated by a NUL byte
 * (or one document compared with itself). Any shape of JSON must give a
 * gpuvet.diff document, never a crash, a leak or undefined behaviour. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "base/json.h"
#include "env/diff.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const uint8_t *nul = memchr(data, 0, size);
    size_t na = nul ? (size_t)(nul - data) : size;
    json_t *a = json_loadb((const char *)data, na, JSON_DISABLE_EOF_CHECK, NULL);
    json_t *b = nul ? json_loadb((const char *)nul + 1, size - na - 1, JSON_DISABLE_EOF_CHECK, NULL)
                    : json_incref(a);
    if (a && b) {
        struct gv_err err = {0};
        json_t *doc = NULL;
        if (gv_diff_snapshots(a, b, "a", "b", &doc, &err) == 0) {
            char *s = gv_json_dumps(doc, JSON_COMPACT);
            free(s);
            json_decref(doc);
        }
    }
    json_decref(a);
    json_decref(b);
    return 0;
}
