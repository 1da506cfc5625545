/* Fuzz target: bench's readers of /proc/loadavg and /proc/stat (src/bench/load.c), and
 * the busy-machine judge over what they read: the input is split at its first NUL (or
 * its middle) into a "before" and an "after" text, each read as both files. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bench/load.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 2);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = text[size + 1] = '\0';
    size_t cut = strnlen(text, size);
    if (cut == size)
        cut = size / 2;
    char *after = text + cut + 1; /* text[size + 1] is NUL: empty when cut == size */
    text[cut] = '\0';
    struct gv_bench_load l = {.ncpu = 2};
    double spread = 0;
    l.have_stat0 = gv_bench_parse_stat(text, &l.total0, &l.steal0) == 0;
    if (gv_bench_parse_loadavg(text, &l.load1_before))
        l.load1_before = -1;
    if (cut < size) {
        l.have_stat1 = gv_bench_parse_stat(after, &l.total1, &l.steal1) == 0;
        if (gv_bench_parse_loadavg(after, &spread))
            spread = 0;
    }
    json_t *o = gv_bench_load_judge(&l, spread, text);
    json_decref(o);
    double v;
    char buf[64];
    gv_bench_fit_unit(l.load1_before, "TFLOP/s", &v);
    gv_bench_format_figure(spread, "GB/s", buf, sizeof buf);
    free(text);
    return 0;
}
