/* Fuzz target: the safetensors reader (gpuvet compare's saved outputs). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "store/safetensors.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint8_t *copy = malloc(size ? size : 1);
    if (!copy)
        return 0;
    if (size)
        memcpy(copy, data, size);
    struct gv_st_file f;
    struct gv_err err = {0};
    if (gv_safetensors_parse(copy, size, "fuzz.safetensors", &f, &err) == GV_OK) {
        unsigned sum = 0;
        for (size_t i = 0; i < f.n; i++) /* touch every byte the reader vouched for */
            for (size_t j = 0; j < f.t[i].nbytes; j++)
                sum += ((const uint8_t *)f.t[i].data)[j];
        (void)sum;
        gv_safetensors_free(&f);
    }
    return 0;
}
