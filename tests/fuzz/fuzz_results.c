/* Fuzz target: the result-file reader (gpuvet compare's input). */
#include <stddef.h>
#include <stdint.h>

#include "check/results.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct gv_results res;
    struct gv_err err = {0};
    if (gv_results_parse((const char *)data, size, "fuzz.json", &res, &err) == GV_OK) {
        for (size_t i = 0; i < res.n; i++)
            (void)gv_results_find(&res, res.cases[i].id);
        gv_results_free(&res);
    }
    return 0;
}
