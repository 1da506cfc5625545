/* Fuzz target: a fingerprint read as block-FMA models (src/dev/cpu/fpmodel.c,
 * what --device cpu:emulate=FILE.json reads). Checks what the reader
 * promises on every input it accepts: every model passes gv_mma_model_check,
 * every echoed string is printable ASCII, and a model computes a short dot
 * product without fault; every per-K model (model.kN, order.kN) too, and its
 * structure text reads back as the same structure. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "dev/cpu/fpmodel.h"

static void printable(const char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || (unsigned char)*s > 0x7e)
            abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct gv_fpmodel fm; /* large: not on the stack */
    struct gv_err err = {0};
    const char *route = size && (data[0] & 1) ? "cpu" : NULL;
    if (gv_fpmodel_parse((const char *)data, size, "fuzz.json", route, &fm, &err) != GV_OK)
        return 0;
    printable(fm.route);
    printable(fm.device_spec);
    printable(fm.device);
    static const double a[5] = {1, 0x1p-24, -3.5, 0x1p-20, 65504};
    static const double b[5] = {1, 1, 0x1p-14, -2, 0.5};
    for (size_t i = 0; i < fm.n; i++) {
        printable(fm.e[i].precision);
        if (gv_mma_model_check(&fm.e[i].m, &err) != GV_OK)
            abort();
        (void)gv_mma_dot_acc(&fm.e[i].m, 0.75, a, b, 5);
        for (int j = 0; j < fm.e[i].nbyk; j++) {
            const struct gv_mma_model *m = &fm.e[i].byk[j].m;
            if (gv_mma_model_check(m, &err) != GV_OK)
                abort();
            (void)gv_mma_dot_acc(m, 0.75, a, b, 5);
            char s[128];
            gv_mma_structure_str(m, s, sizeof s);
            struct gv_mma_model r = fm.e[i].m;
            if (gv_mma_structure_parse(s, &r) || r.block != m->block || r.tile != m->tile ||
                r.chunk != m->chunk || r.extra_bits != m->extra_bits ||
                r.chunk_promote != m->chunk_promote ||
                (m->block > 1 && r.align_nominal != m->align_nominal))
                abort();
        }
    }
    json_t *j = gv_fpmodel_json(&fm, "fuzz.json");
    if (!j)
        abort();
    json_decref(j);
    return 0;
}
