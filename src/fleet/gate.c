/* The gate's decision for one node (docs/fleet.md, "fleet gate"): what the
 * node's own run says (a case that failed against fp64, a case whose output
 * changed from one repeat to the next while each repeat was run-to-run
 * identical), what the reference says (gv_fleet_judge) and what this
 * machine's last passing run says (a case's output digest changed on the same
 * stack). Drain wins over cannot assess, which wins over keep; the reason is
 * the first finding of the decision, one line fit for a Slurm drain reason. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "fleet/fleet_run.h"

#define REASON_MAX 200

enum decision { KEEP, CANNOT, DRAIN };
static const char *const decision_names[] = {"keep", "cannot_assess", "drain"};

struct gate {
    enum decision d;
    char reason[REASON_MAX + 1];
    json_t *findings;
};

/* At most REASON_MAX bytes, no control byte, no quote, no backslash. */
static void clean(char *s)
{
    size_t n = strlen(s);
    if (n > REASON_MAX) {
        n = REASON_MAX;
        while (n && ((unsigned char)s[n] & 0xC0) == 0x80) /* not inside a UTF-8 sequence */
            n--;
        s[n] = '\0';
    }
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f || s[i] == '"' || s[i] == '\'' ||
            s[i] == '\\' || s[i] == '`')
            s[i] = ' ';
}

static void find(struct gate *g, enum decision d, const char *source, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void find(struct gate *g, enum decision d, const char *source, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    json_t *f = json_object();
    json_object_set_new(f, "source", json_string(source));
    json_object_set_new(f, "decision", json_string(decision_names[d]));
    json_object_set_new(f, "message", json_string(msg));
    json_array_append_new(g->findings, f);
    if (d > g->d || (d == g->d && !g->reason[0])) {
        g->d = d;
        snprintf(g->reason, sizeof g->reason, "%s", msg);
        clean(g->reason);
    }
}

static const char *str(const json_t *o, const char *key)
{
    const char *s = json_string_value(json_object_get(o, key));
    return s ? s : "";
}

/* A failing case in any run drains; a case that could not run makes the node
 * not assessable. */
static void own_verdicts(struct gate *g, const json_t *runs)
{
    size_t i, j;
    json_t *run, *c;
    json_array_foreach(runs, i, run) {
        json_array_foreach(json_object_get(run, "cases"), j, c) {
            const char *v = str(c, "verdict");
            if (!strcmp(v, "fail"))
                find(g, DRAIN, "suite", "case %s failed against fp64 on repeat %lld "
                     "(%.1f effective bits, %lld NaN, %lld Inf)", str(c, "id"),
                     (long long)json_integer_value(json_object_get(run, "repeat")),
                     json_number_value(json_object_get(c, "effective_bits")),
                     (long long)json_integer_value(json_object_get(c, "nan_count")),
                     (long long)json_integer_value(json_object_get(c, "inf_count")));
            else if (!strcmp(v, "error"))
                find(g, CANNOT, "suite", "case %s could not run: %s", str(c, "id"),
                     str(c, "error"));
        }
    }
}

/* The digest of case id in run, when it was run-to-run identical there. */
static const char *stable_digest(const json_t *run, const char *id)
{
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(run, "cases"), i, c)
        if (!strcmp(str(c, "id"), id))
            return json_is_false(json_object_get(c, "deterministic")) ? NULL
                                                                      : str(c, "output_digest");
    return NULL;
}

/* A case run-to-run identical within each repeat whose output differs from
 * one repeat to another: an intermittent fault. */
static void across_repeats(struct gate *g, const json_t *runs)
{
    const json_t *first = json_array_get(runs, 0);
    size_t i, k;
    json_t *c;
    json_array_foreach(json_object_get(first, "cases"), i, c) {
        const char *id = str(c, "id"), *d1 = stable_digest(first, id);
        for (k = 1; d1 && *d1 && k < json_array_size(runs); k++) {
            const char *dk = stable_digest(json_array_get(runs, k), id);
            if (dk && *dk && strcmp(d1, dk)) {
                find(g, DRAIN, "repeats", "case %s: output differs between repeat 1 and "
                     "repeat %zu, each run-to-run identical (intermittent fault)", id, k + 1);
                break;
            }
        }
    }
}

static void against_reference(struct gate *g, const json_t *ref, const json_t *node)
{
    json_t *v = NULL;
    struct gv_err e = {0};
    if (gv_fleet_judge(ref, node, &v, &e)) {
        find(g, CANNOT, "reference", "reference: %s", e.msg);
        return;
    }
    const char *d = str(v, "decision");
    enum decision dd = !strcmp(d, "drain") ? DRAIN : !strcmp(d, "keep") ? KEEP : CANNOT;
    find(g, dd, "reference", "%s", str(v, "reason")[0] ? str(v, "reason") : d);
    json_decref(v);
}

/* The digest of a stack summary without the libraries' content digests: gpuvet
 * check records its snapshot without them (it hashes no file), the fleet run
 * with them; versions, paths and the rest still tell a changed stack. */
static int digest_unhashed(const json_t *stack, char out[72])
{
    json_t *s = json_deep_copy(stack), *lib;
    size_t i;
    json_array_foreach(json_object_get(s, "libraries"), i, lib)
        json_object_del(lib, "sha256");
    struct gv_err e = {0};
    int rc = s ? gv_fleet_stack_digest(s, out, &e) : GV_E_NOMEM;
    json_decref(s);
    return rc;
}

/* The last good run's stack digest and case digests: a node document's own,
 * or a check result's (its embedded snapshot summarised the same way). */
static int good_digests(const json_t *good, char stack[72], const json_t **cases)
{
    if (!strcmp(str(good, "schema"), GV_FLEET_NODE_SCHEMA)) {
        const json_t *runs = json_object_get(good, "runs");
        *cases = json_object_get(json_array_get(runs, json_array_size(runs) - 1), "cases");
        return json_is_object(json_object_get(good, "stack"))
                   ? digest_unhashed(json_object_get(good, "stack"), stack)
                   : -1;
    }
    const json_t *snap = json_object_get(good, "snapshot");
    if (!json_is_object(snap) || !json_object_get(snap, "libraries"))
        return -1;
    json_t *sum = gv_fleet_stack_summary(snap);
    int rc = digest_unhashed(sum, stack);
    json_decref(sum);
    *cases = json_object_get(good, "cases");
    return rc ? -1 : 0;
}

static void against_history(struct gate *g, const json_t *good, const char *what,
                            const json_t *node)
{
    char stack[72] = "", mine[72] = "";
    const json_t *cases = NULL;
    if (good_digests(good, stack, &cases) ||
        digest_unhashed(json_object_get(node, "stack"), mine)) {
        find(g, KEEP, "history", "the last good run (%s) holds no stack to compare with", what);
        return;
    }
    if (strcmp(stack, mine)) {
        find(g, KEEP, "history", "the stack changed since the last good run (%s): outputs not "
             "compared with it", what);
        return;
    }
    const json_t *runs = json_object_get(node, "runs");
    const json_t *last = json_array_get(runs, json_array_size(runs) - 1);
    size_t i, compared = 0;
    json_t *c;
    json_array_foreach(cases, i, c) {
        const char *id = str(c, "id"), *gd = str(c, "output_digest");
        const char *nd = stable_digest(last, id);
        if (!*gd || !nd || !*nd)
            continue;
        compared++;
        if (strcmp(gd, nd))
            find(g, DRAIN, "history", "case %s: output differs from the last good run (%s) on "
                 "the same stack", id, what);
    }
    if (!compared)
        find(g, KEEP, "history", "no case in common with the last good run (%s)", what);
    else
        find(g, KEEP, "history", "%zu case(s) compared with the last good run (%s)", compared,
             what);
}

int gv_fleet_gate(const struct gv_fleet_gate_in *in, json_t **verdict, struct gv_err *err)
{
    struct gate g = {KEEP, "", json_array()};
    if (!g.findings)
        return gv_err_set(err, GV_E_NOMEM, "gate: out of memory");
    const json_t *node = in->node;
    if (strcmp(str(node, "status"), "ran")) {
        find(&g, CANNOT, "run", "%s", str(node, "reason")[0] ? str(node, "reason")
                                                              : "the tier could not run");
    } else {
        own_verdicts(&g, json_object_get(node, "runs"));
        across_repeats(&g, json_object_get(node, "runs"));
        if (in->reference)
            against_reference(&g, in->reference, node);
        if (in->good)
            against_history(&g, in->good, in->good_what ? in->good_what : "?", node);
    }
    if (g.d == KEEP && !g.reason[0]) {
        const json_t *runs = json_object_get(node, "runs");
        size_t n = json_array_size(json_object_get(json_array_get(runs, 0), "cases"));
        snprintf(g.reason, sizeof g.reason, "%zu case(s) on %zu repeat(s), every one as expected",
                 n, json_array_size(runs));
    }
    json_t *v = json_object();
    json_object_set_new(v, "decision", json_string(decision_names[g.d]));
    json_object_set_new(v, "reason", json_string(g.reason));
    json_object_set_new(v, "findings", g.findings);
    *verdict = v;
    return GV_OK;
}

int gv_fleet_gate_exit(const json_t *verdict)
{
    const char *d = str(verdict, "decision");
    return !strcmp(d, "keep") ? 0 : !strcmp(d, "drain") ? 1 : 2;
}
