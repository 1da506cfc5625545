/* Fuzz target: what a snapshot's staging tree keeps of an ELF file from an
 * image (src/image/sparse.c, with env's bundle table reader under it) on
 * arbitrary bytes fed in arbitrary pieces. Checks what it promises: every byte
 * of every piece is either written or a hole, exactly once and in order, and a
 * hole never covers a bundle's magic or entry table (the first bytes of data
 * decide the piece sizes). Seeds: tests/fuzz/corpus/imagesparse. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "env/offload.h"
#include "image/sparse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct gv_offload_span *spans;
    size_t n;
    uint64_t table_len;
    struct gv_err err = {0};
    if (gv_offload_bundle_spans(data, size, size, &spans, &n, &table_len, &err) == GV_OK) {
        for (size_t i = 0; i < n; i++)
            if (spans[i].offset > size || spans[i].size > size - spans[i].offset)
                __builtin_trap(); /* a span outside the room it was given */
        free(spans);
    }
    size_t step = size ? 1 + (size_t)data[0] * 131u % 4099u : 1;
    struct gv_sparse sp;
    gv_sparse_start(&sp, (long long)size);
    for (size_t at = 0; at < size;) {
        size_t k = step < size - at ? step : size - at;
        if (gv_sparse_feed(&sp, data + at, k) != 0)
            break; /* out of memory */
        size_t done = 0;
        while (done < k) {
            int write = -1;
            size_t r = gv_sparse_run(&sp, (long long)(at + done), k - done, &write);
            if (r == 0 || r > k - done || (write != 0 && write != 1))
                __builtin_trap();
            /* the magic itself is always written */
            if (!write && memmem(data + at + done, r, "__CLANG_OFFLOAD_BUNDLE__", 24) == data + at + done)
                __builtin_trap();
            done += r;
        }
        at += k;
    }
    gv_sparse_end(&sp);
    return 0;
}
