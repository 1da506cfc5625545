/* Fuzz target: both device-code scanners (.hip_fatbin bundles, plain and
 * compressed, in full and quick mode; .nv_fatbin containers) on arbitrary
 * bytes. Seeds: tests/fuzz/corpus/offload (see tests/fuzz/make-binary-seeds.sh). */
#include <stdint.h>
#include <string.h>

#include "env/offload.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static size_t use(struct gv_offload_targets *t)
{
    size_t sum = t->n_entries + t->n_skipped;
    for (size_t i = 0; i < t->n_targets; i++)
        sum += strlen(t->targets[i]);
    for (size_t i = 0; i < t->n_target_ids; i++)
        sum += strlen(t->target_ids[i]);
    gv_offload_free(t);
    return sum;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct gv_offload_targets t;
    struct gv_err err = {0};
    size_t sum = 0;
    if (gv_offload_scan_hip(data, size, &t, &err) == GV_OK)
        sum += use(&t);
    if (gv_offload_scan_hip_ex(data, size, GV_OFFLOAD_QUICK, &t, &err) == GV_OK)
        sum += use(&t);
    int rc = gv_offload_scan_cuda(data, size, &t, &err);
    if (rc == GV_OK)
        sum += use(&t);
    /* Without an error record the status must be the same. */
    int rc2 = gv_offload_scan_cuda(data, size, &t, NULL);
    if (rc2 != rc)
        __builtin_trap();
    if (rc2 == GV_OK)
        use(&t);
    rc = gv_offload_scan_hip(data, size, &t, NULL);
    if (rc == GV_OK)
        use(&t);
    return sum == 0xdeadbeef;
}
