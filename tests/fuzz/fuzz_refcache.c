/* Fuzz target: the reference-cache file reader. The expected key is taken
 * from the input itself (bytes 24..88) half of the time, so mutations get
 * past the key check and exercise the size and checksum checks; n is the
 * element count the header claims, capped, or a fixed small value. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "num/ref.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char key[65];
    memset(key, '0', 64);
    key[64] = '\0';
    size_t n = 3;
    if (size >= GV_REFCACHE_HEADER && (data[0] & 1) == 0)
        memcpy(key, data + 24, 64);
    if (size >= 24) {
        uint64_t claimed;
        memcpy(&claimed, data + 16, 8);
        if (claimed <= 4096)
            n = (size_t)claimed;
    }
    double *ref = malloc((n ? n : 1) * sizeof(double));
    double *bound = malloc((n ? n : 1) * sizeof(double));
    double *scale = malloc((n ? n : 1) * sizeof(double));
    struct gv_err err;
    if (ref && bound && scale)
        gv_refcache_parse(data, size, key, n, ref, bound, scale, &err);
    free(ref);
    free(bound);
    free(scale);
    return 0;
}
