/* Fuzz target: the fingerprint document reader (gpuvet.probe, read by compare
 * from result files made with check --probe). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "probe/probe.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct gv_fingerprint fp;
    struct gv_err err = {0};
    if (gv_fp_parse((const char *)data, size, "fuzz.json", &fp, &err) == GV_OK) {
        struct gv_fp_change *ch = NULL;
        gv_fp_diff(&fp, &fp, &ch);
        free(ch);
        for (size_t i = 0; i < fp.n; i++)
            (void)gv_fp_value(&fp.e[i], "input_mantissa_bits");
        gv_fp_free(&fp);
    }
    return 0;
}
