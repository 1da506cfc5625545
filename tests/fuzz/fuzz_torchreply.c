/* Fuzz target: the PyTorch worker's reply headers (src/dev/torch/torch.c), which
 * gpuvet reads from a process running the user's Python. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "dev/torch/torch.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct gv_torch_reply r;
    struct gv_err err = {0};
    if (gv_torch_reply_parse((const char *)data, size, &r, &err) == GV_OK) {
        /* what the backend relies on: terminated strings, a sane payload size */
        if (strlen(r.status) >= sizeof r.status || strlen(r.error) >= sizeof r.error ||
            strlen(r.impl) >= sizeof r.impl || r.nbytes > ((uint64_t)1 << 40) ||
            (!r.ok && !r.status[0]))
            __builtin_trap();
        if (r.describe) {
            json_t *libs = gv_torch_libraries(json_object_get(r.describe, "mapped_files"));
            json_decref(libs);
        }
        gv_torch_reply_free(&r);
    } else if (!err.msg[0]) {
        __builtin_trap(); /* a refusal always says why */
    }
    return 0;
}
