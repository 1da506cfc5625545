/* Fuzz target: node documents (docs/fleet.md) through the fleet's whole
 * judgement. The input is parsed and checked as a node document; then, with
 * its stack digest recomputed so that mutations of the stack get past the
 * digest, three ranks are made of it (as is, one case digest changed, the
 * stack changed), compared, a reference written and the node judged.
 * Promises checked on every input: every odd node compare names is a valid
 * node name with a rank below the size; the judge's decision is one of the
 * three and its reason at most 177 bytes with no newline, quote or
 * backslash (a drain reason). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "fleet/fleet.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static json_t *rank_copy(const json_t *doc, int rank)
{
    json_t *c = json_deep_copy(doc);
    json_object_set_new(c, "rank", json_integer(rank));
    json_object_set_new(c, "size", json_integer(3));
    if (rank == 1) {
        json_t *c0 = json_array_get(
            json_object_get(json_array_get(json_object_get(c, "runs"), 0), "cases"), 0);
        if (json_is_string(json_object_get(c0, "output_digest")))
            json_object_set_new(c0, "output_digest",
                                json_string("00000000000000000000000000000000"
                                            "00000000000000000000000000000000"));
    }
    if (rank == 2 && json_is_object(json_object_get(c, "stack"))) {
        char sd[72];
        json_object_set_new(json_object_get(c, "stack"), "fuzz_drift", json_string("x"));
        if (gv_fleet_stack_digest(json_object_get(c, "stack"), sd, NULL) == GV_OK)
            json_object_set_new(c, "stack_digest", json_string(sd));
    }
    return c;
}

static void check_fleet(const json_t *fleet)
{
    size_t gi, i;
    const json_t *g, *o;
    json_array_foreach(json_object_get(fleet, "groups"), gi, g)
        json_array_foreach(json_object_get(g, "odd"), i, o) {
            if (!gv_fleet_node_name_ok(json_string_value(json_object_get(o, "node"))) ||
                json_integer_value(json_object_get(o, "rank")) >= 3)
                abort();
        }
}

static void check_verdict(const json_t *v)
{
    const char *d = json_string_value(json_object_get(v, "decision"));
    const char *r = json_string_value(json_object_get(v, "reason"));
    if (!d || (strcmp(d, "keep") && strcmp(d, "drain") && strcmp(d, "cannot_assess")))
        abort();
    if (!r || strlen(r) > 177 || strpbrk(r, "\n\r\"'\\"))
        abort();
}

static void judge_all(json_t *doc)
{
    struct gv_err err = {0};
    json_t *nodes = json_array();
    for (int r = 0; r < 3; r++)
        json_array_append_new(nodes, rank_copy(doc, r));
    for (size_t i = 0; i < 3; i++)
        if (gv_fleet_node_check(json_array_get(nodes, i), "fuzz.json", &err) != GV_OK) {
            json_decref(nodes);
            return;
        }
    json_t *fleet = NULL, *ref = NULL, *v = NULL;
    if (gv_fleet_compare(nodes, "", &fleet, &err) == GV_OK) {
        check_fleet(fleet);
        if (gv_fleet_reference(fleet, nodes, &ref, &err) == GV_OK &&
            gv_fleet_judge(ref, json_array_get(nodes, 1), &v, &err) == GV_OK)
            check_verdict(v);
    }
    json_decref(v);
    json_decref(ref);
    json_decref(fleet);
    json_decref(nodes);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    json_t *doc = NULL;
    json_error_t je;
    struct gv_err err = {0};
    if (gv_json_parse((const char *)data, size, "fuzz.json", &doc, &je, &err) != GV_OK)
        return 0;
    (void)gv_fleet_node_check(doc, "fuzz.json", &err);
    if (json_is_object(json_object_get(doc, "stack"))) {
        char sd[72];
        if (gv_fleet_stack_digest(json_object_get(doc, "stack"), sd, &err) == GV_OK)
            json_object_set_new(doc, "stack_digest", json_string(sd));
    }
    if (gv_fleet_node_check(doc, "fuzz.json", &err) == GV_OK)
        judge_all(doc);
    json_decref(doc);
    return 0;
}
