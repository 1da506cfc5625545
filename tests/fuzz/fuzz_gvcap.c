/* Fuzz target: the capture file's reader (src/capture/gvcap.c): the trailer,
 * the index document and its validation, and the tensors it points to, on the
 * input taken as a whole .gvcap file. What the reader promises: every tensor
 * entry it accepts lies inside the data, its size matches dtype x shape, and
 * every tensor an op names exists. */
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "capture/gvcap.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 32 || memcmp(data, "GVCAP01\n", 8) != 0)
        return 0;
    uint64_t off = 0, len = 0;
    struct gv_err err = {0};
    if (gv_cap_parse_trailer(data + size - 24, size, &off, &len, "fuzz.gvcap", &err)) {
        if (!err.msg[0])
            abort();
        return 0;
    }
    if (off + len + 24 != size)
        abort();
    json_t *idx = json_loadb((const char *)data + off, len, JSON_REJECT_DUPLICATES, NULL);
    if (!idx)
        return 0;
    if (gv_cap_check_index(idx, off, "fuzz.gvcap", &err) == GV_OK) {
        size_t i;
        json_t *t;
        json_array_foreach(json_object_get(idx, "tensors"), i, t) {
            const json_t *o = json_object_get(t, "offset");
            if (!json_is_integer(o))
                continue;
            uint64_t at = (uint64_t)json_integer_value(o);
            uint64_t nb = (uint64_t)json_integer_value(json_object_get(t, "nbytes"));
            if (at > off || nb > off - at) /* the promise: inside the data */
                abort();
            volatile uint8_t sink = nb ? data[at + nb - 1] : 0;
            (void)sink;
        }
    } else if (!err.msg[0]) {
        abort();
    }
    json_decref(idx);
    return 0;
}
