/* Fuzz target: the report's renderers (src/report) on any JSON document. The
 * input is parsed; a document of a known schema then has some of its values
 * replaced by values of other types (chosen from the input's own bytes), so
 * that every renderer meets wrong field types, missing fields and non-finite
 * strings. What the room promises: no crash, and either a complete page or a
 * clear error; and the escaper never lets a markup character through. */
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "report/html.h"
#include "report/report.h"

static uint64_t seed;

static uint64_t next(void)
{
    uint64_t z = (seed += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static json_t *other_value(void)
{
    switch (next() % 10) {
    case 0: return json_null();
    case 1: return json_true();
    case 2: return json_integer((json_int_t)(next() % 2000) - 1000);
    case 3: return json_real(-1.5e300);
    case 4: return json_string("inf");
    case 5: return json_string("nan");
    case 6: return json_string("<b>\"x'&");
    case 7: return json_array();
    case 8: return json_object();
    default: return json_pack("[i,s,{s:[]}]", 1, "a", "b");
    }
}

/* Replaces about one value in `rate` below v (never schema/schema_version). */
static void perturb(json_t *v, unsigned rate, int depth)
{
    if (depth > 12)
        return;
    if (json_is_object(v)) {
        const char *k;
        json_t *c;
        void *tmp;
        json_object_foreach_safe(v, tmp, k, c) {
            if (!strcmp(k, "schema") || !strcmp(k, "schema_version"))
                continue;
            if (next() % rate == 0)
                json_object_set_new(v, k, other_value());
            else
                perturb(c, rate, depth + 1);
        }
    } else if (json_is_array(v)) {
        for (size_t i = 0; i < json_array_size(v); i++) {
            if (next() % rate == 0)
                json_array_set_new(v, i, other_value());
            else
                perturb(json_array_get(v, i), rate, depth + 1);
        }
    }
}

static void check_escape(const uint8_t *data, size_t size)
{
    struct gv_buf b = {0};
    gv_html_escn(&b, (const char *)data, size);
    for (size_t i = 0; i < b.len; i++)
        if (strchr("<>\"'", b.data[i]) || (unsigned char)b.data[i] < 0x09)
            abort();
    gv_buf_free(&b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    check_escape(data, size < 4096 ? size : 4096);
    json_t *doc = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, NULL);
    if (!doc)
        return 0;
    seed = 1469598103934665603ull;
    for (size_t i = 0; i < size; i++)
        seed = (seed ^ data[i]) * 1099511628211ull;
    struct gv_err err = {0};
    for (int round = 0; round < 2; round++) {
        if (round)
            perturb(doc, 3 + (unsigned)(next() % 20), 0);
        struct gv_report_input in = {"fuzz.json", doc};
        struct gv_buf page = {0};
        int rc = gv_report_render(&in, 1, NULL, &page, &err);
        if (rc == GV_OK) {
            static const char tail[] = "</body></html>\n";
            if (!page.data || page.len < sizeof tail || strcmp(page.data + page.len - (sizeof tail - 1), tail))
                abort();
        } else if (!err.msg[0]) {
            abort();
        }
        gv_buf_free(&page);
    }
    json_decref(doc);
    return 0;
}
