/* The reference (gpuvet.fleet.reference): per hardware group the majority's
 * stack and per case the majority output digest; and the judgement of one
 * node against it (keep, drain, cannot assess), for fleet gate. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "fleet/fleet.h"
#include "fleet/fleet_impl.h"

/* "gpuvet: cannot assess: " + reason fits the 200 bytes of a drain reason. */
#define REASON_MAX (200 - 23)

static const char *sget(const json_t *o, const char *k)
{
    return json_string_value(json_object_get(o, k));
}

static json_t *ref_cases(const json_t *group)
{
    json_t *cases = json_object();
    size_t i;
    const json_t *c;
    json_array_foreach(json_object_get(group, "cases"), i, c) {
        const char *id = sget(c, "id"), *d = sget(c, "majority_digest");
        if (!id || !d)
            continue;
        json_t *e = json_object();
        json_object_set_new(e, "digest", json_string(d));
        json_object_set(e, "nodes", json_object_get(c, "nodes_agreeing"));
        json_object_set_new(cases, id, e);
    }
    return cases;
}

int gv_fleet_reference(const json_t *fleet, const json_t *nodes, json_t **ref, struct gv_err *err)
{
    *ref = NULL;
    if (gv_json_check_schema(fleet, GV_FLEET_SCHEMA, GV_FLEET_SCHEMA_VERSION, "fleet document",
                             err))
        return err->code;
    json_t *stacks = json_object(); /* digest -> stack */
    size_t i;
    const json_t *n, *g;
    json_array_foreach(nodes, i, n) {
        const char *sd = sget(n, "stack_digest");
        if (sd && json_is_object(json_object_get(n, "stack")) && !json_object_get(stacks, sd))
            json_object_set(stacks, sd, json_object_get(n, "stack"));
    }
    json_t *doc = json_object(), *groups = json_array();
    json_object_set_new(doc, "schema", json_string(GV_FLEET_REFERENCE_SCHEMA));
    json_object_set_new(doc, "schema_version", json_integer(GV_FLEET_SCHEMA_VERSION));
    json_object_set_new(doc, "gpuvet_version", json_string(GPUVET_VERSION));
    gv_json_set_utc_now(doc, "created");
    json_array_foreach(json_object_get(fleet, "groups"), i, g) {
        const char *sd = sget(g, "stack_digest");
        if (!sd || json_is_null(json_object_get(json_object_get(g, "key"), "model")))
            continue; /* nodes that could not run: nothing to refer to */
        json_t *e = json_object();
        json_object_set(e, "key", json_object_get(g, "key"));
        json_object_set(e, "nodes", json_object_get(g, "stack_nodes"));
        json_object_set_new(e, "stack_digest", json_string(sd));
        json_object_set(e, "stack", json_object_get(stacks, sd));
        json_object_set_new(e, "cases", ref_cases(g));
        json_array_append_new(groups, e);
    }
    json_decref(stacks);
    json_object_set_new(doc, "groups", groups);
    *ref = doc;
    return GV_OK;
}

/* ---- the judgement ---- */

static int ref_check(const json_t *ref, struct gv_err *err)
{
    if (gv_json_check_schema(ref, GV_FLEET_REFERENCE_SCHEMA, GV_FLEET_SCHEMA_VERSION, "reference",
                             err))
        return err->code;
    const json_t *groups = json_object_get(ref, "groups");
    if (!json_is_array(groups))
        return gv_err_set(err, GV_E_FORMAT, "reference: field \"groups\" missing or not an array");
    size_t i;
    const json_t *g;
    json_array_foreach(groups, i, g) {
        const json_t *k = json_object_get(g, "key");
        if (!json_is_string(json_object_get(k, "model")) ||
            !json_is_integer(json_object_get(k, "compute_units")) ||
            !json_is_string(json_object_get(k, "driver")))
            return gv_err_set(err, GV_E_FORMAT,
                              "reference: groups[%zu].key: model, "
                              "compute_units or driver missing or of the wrong type",
                              i);
        if (!json_is_string(json_object_get(g, "stack_digest")) ||
            !json_is_object(json_object_get(g, "stack")) ||
            !json_is_object(json_object_get(g, "cases")))
            return gv_err_set(err, GV_E_FORMAT,
                              "reference: groups[%zu]: stack_digest, stack "
                              "or cases missing or of the wrong type",
                              i);
        const char *id;
        const json_t *c;
        json_object_foreach((json_t *)json_object_get(g, "cases"), id, c) {
            if (!json_is_string(json_object_get(c, "digest")))
                return gv_err_set(err, GV_E_FORMAT,
                                  "reference: groups[%zu].cases: a case "
                                  "without a digest",
                                  i);
        }
    }
    return GV_OK;
}

static const json_t *ref_group(const json_t *ref, const json_t *node)
{
    char want[1024], key[1024];
    gv_fleet_group_key(node, want, sizeof want);
    size_t i;
    const json_t *g;
    json_array_foreach(json_object_get(ref, "groups"), i, g) {
        json_t *fake = json_object();
        json_object_set(fake, "hardware", json_object_get(g, "key"));
        gv_fleet_group_key(fake, key, sizeof key);
        json_decref(fake);
        if (!strcmp(key, want))
            return g;
    }
    return NULL;
}

static json_t *verdict_new(const char *decision, const char *reason, json_t *findings)
{
    char r[REASON_MAX + 1];
    snprintf(r, sizeof r, "%s", reason);
    gv_fleet_reason_clean(r, REASON_MAX);
    json_t *v = json_object();
    json_object_set_new(v, "decision", json_string(decision));
    json_object_set_new(v, "reason", json_string(r));
    json_object_set_new(v, "findings", findings ? findings : json_array());
    return v;
}

static json_t *drift(const json_t *g, const json_t *node)
{
    json_t *diff = json_array(), *findings = json_array(), *f = json_object();
    gv_fleet_stack_diff(json_object_get(g, "stack"), json_object_get(node, "stack"), diff,
                        GV_FLEET_DIFF_MAX);
    json_object_set_new(f, "class", json_string("stack_drift"));
    json_object_set_new(f, "diff", diff);
    json_array_append_new(findings, f);
    char reason[512];
    const char *first = json_string_value(json_array_get(diff, 0));
    snprintf(reason, sizeof reason, "stack drift: %s%s", first ? first : "the stack differs",
             json_array_size(diff) > 1 ? " and more" : "");
    return verdict_new("drain", reason, findings);
}

struct tally {
    int compared, differ, failed;
    const char *first; /* the first case that differs or fails */
};

static void judge_case(const json_t *rc, const json_t *c, json_t *cases, struct tally *t)
{
    const char *id = sget(c, "id"), *d = sget(c, "output_digest");
    const char *want = sget(json_object_get(rc, id), "digest");
    const char *v = sget(c, "verdict");
    int fail = v && (!strcmp(v, "fail") || !strcmp(v, "error"));
    int det = !json_is_false(json_object_get(c, "deterministic"));
    int differs = det && want && d && strcmp(want, d) != 0;
    t->compared += want && d && det;
    if (!fail && !differs)
        return;
    t->differ += differs;
    t->failed += fail;
    if (!t->first)
        t->first = id;
    json_t *e = json_object();
    json_object_set_new(e, "id", json_string(id));
    if (differs) {
        json_object_set_new(e, "reference_digest", json_string(want));
        json_object_set_new(e, "digest", json_string(d));
    }
    if (fail)
        json_object_set_new(e, "fails_against_fp64", json_true());
    json_array_append_new(cases, e);
}

static json_t *numerics(const json_t *g, const json_t *node)
{
    const json_t *rc = json_object_get(g, "cases");
    json_t *cases = json_array();
    struct tally t = {0, 0, 0, NULL};
    size_t r, i;
    const json_t *run, *c;
    json_array_foreach(json_object_get(node, "runs"), r, run)
        json_array_foreach(json_object_get(run, "cases"), i, c)
            judge_case(rc, c, cases, &t);
    char reason[512];
    if (!json_array_size(cases)) {
        json_decref(cases);
        if (!t.compared)
            return verdict_new("cannot_assess",
                               "no deterministic case in common with the reference", NULL);
        snprintf(reason, sizeof reason, "%d case results match the reference of %lld nodes",
                 t.compared, (long long)json_integer_value(json_object_get(g, "nodes")));
        return verdict_new("keep", reason, NULL);
    }
    json_t *findings = json_array(), *f = json_object();
    json_object_set_new(f, "class", json_string("numerics_outlier"));
    json_object_set_new(f, "cases", cases);
    json_array_append_new(findings, f);
    if (t.differ)
        snprintf(reason, sizeof reason,
                 "numerics outlier on the reference stack: %s and %d "
                 "other results differ from the reference",
                 t.first, t.differ + t.failed - 1);
    else
        snprintf(reason, sizeof reason, "fails against fp64: %s and %d other results", t.first,
                 t.failed - 1);
    return verdict_new("drain", reason, findings);
}

int gv_fleet_judge(const json_t *ref, const json_t *node, json_t **verdict, struct gv_err *err)
{
    *verdict = NULL;
    if (ref_check(ref, err) || gv_fleet_node_check(node, "node document", err))
        return err->code;
    char reason[512];
    const char *status = sget(node, "status");
    if (strcmp(status, "ran") != 0) {
        const char *why = sget(node, "reason");
        snprintf(reason, sizeof reason, "could not run: %s", why ? why : "no reason given");
        *verdict = verdict_new("cannot_assess", reason, NULL);
        return GV_OK;
    }
    const json_t *g = ref_group(ref, node);
    if (!g) {
        const json_t *hw = json_object_get(node, "hardware");
        snprintf(reason, sizeof reason, "no reference for %.80s (%lld compute units, driver %.40s)",
                 sget(hw, "model"),
                 (long long)json_integer_value(json_object_get(hw, "compute_units")),
                 sget(hw, "driver"));
        *verdict = verdict_new("cannot_assess", reason, NULL);
        return GV_OK;
    }
    if (strcmp(sget(g, "stack_digest"), sget(node, "stack_digest")) != 0)
        *verdict = drift(g, node);
    else
        *verdict = numerics(g, node);
    return GV_OK;
}
