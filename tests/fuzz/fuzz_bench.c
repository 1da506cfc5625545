/* Fuzz target: the gpuvet.bench document reader and the bench comparison
 * (gpuvet compare A B of two bench documents): the input against itself, and
 * against a copy whose first ok result is halved and whose second is failed,
 * so that regressions, status changes and the cause ranking all run. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "bench/compare.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void compare(const json_t *a, const json_t *b)
{
    struct gv_bench_compare c;
    struct gv_err err = {0};
    if (gv_bench_compare_docs(a, b, &c, &err) == GV_OK) {
        json_t *doc = gv_bench_compare_json(&c, "a.json", "b.json");
        char *s = gv_json_dumps(doc, JSON_COMPACT);
        free(s);
        json_decref(doc);
        gv_bench_compare_free(&c);
    }
}

static json_t *variant(const json_t *a)
{
    json_t *b = json_deep_copy(a);
    size_t i;
    json_t *r;
    int n = 0;
    json_array_foreach(json_object_get(b, "results"), i, r) {
        if (strcmp(json_string_value(json_object_get(r, "status")), "ok") != 0)
            continue;
        if (n++ == 0) {
            static const char *const keys[] = {"value", "min", "max"};
            for (int k = 0; k < 3; k++)
                if (json_is_number(json_object_get(r, keys[k])))
                    json_object_set_new(r, keys[k],
                                        json_real(json_number_value(json_object_get(r, keys[k])) / 2));
        } else if (n == 2) {
            json_object_set_new(r, "status", json_string("failed"));
            json_object_del(r, "value");
        }
    }
    json_t *cond = json_object_get(json_object_get(b, "conditions"), "before");
    if (json_is_object(cond))
        json_object_set_new(cond, "sm_clock_mhz", json_integer(1));
    return b;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    json_t *doc = NULL;
    struct gv_err err = {0};
    if (gv_bench_parse((const char *)data, size, "fuzz.json", &doc, &err) != GV_OK)
        return 0;
    compare(doc, doc);
    json_t *b = variant(doc);
    compare(doc, b);
    compare(b, doc);
    json_decref(b);
    json_decref(doc);
    return 0;
}
