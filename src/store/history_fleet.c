/* The fleet in the history (docs/history.md, "The fleet"): the columns of a
 * node document (kind fleet-node) and of a fleet comparison (kind fleet), and
 * the fleet over time (gpuvet.fleet-history). Every field of a recorded
 * document is hostile input: checked as src/fleet/node.c checks it (the store
 * room does not reach src/fleet), never used as a path. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "base/utf8.h"
#include "num/catalog.h"
#include "store/history.h"
#include "store/history_db.h"

#define NODE_NAME_MAX 64
#define FLEET_RUNS_PER_NODE 100 /* the latest node runs kept per node */

/* ---------- checks (the node document's, docs/fleet.md "Limits") ---------- */

static int node_name_ok(const char *s)
{
    size_t n = s ? strlen(s) : 0;
    if (n == 0 || n > NODE_NAME_MAX || !strcmp(s, ".") || !strcmp(s, ".."))
        return 0;
    return strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") == n;
}


static int digest_ok(const char *s)
{
    return s && !strncmp(s, "sha256:", 7) && strlen(s) == 71 &&
           strspn(s + 7, "0123456789abcdef") == 64;
}

/* A class of an odd node: [a-z_], 1..32 ("stack_drift", "numerics_outlier", ...). */
static int class_ok(const char *s)
{
    size_t n = s ? strlen(s) : 0;
    return n >= 1 && n <= 32 && strspn(s, "abcdefghijklmnopqrstuvwxyz_") == n;
}

static int bad(struct gv_err *err, const char *what, const char *field, const char *why)
{
    return gv_err_set(err, GV_E_FORMAT, "%s: field \"%s\" %s", what, field, why);
}

static const char *sget(const json_t *o, const char *key)
{
    return json_string_value(json_object_get(o, key));
}

/* An optional text field: absent, null, or 1..max bytes of one line. */
static int opt_text(const json_t *o, const char *key, size_t max, const char **out,
                    const char *what, const char *field, struct gv_err *err)
{
    const json_t *v = json_object_get(o, key);
    *out = NULL;
    if (!v || json_is_null(v) || (json_is_string(v) && !json_string_length(v)))
        return GV_OK; /* absent, null or "" (a run with no launcher has no job) */
    if (!gv_text_line_ok(json_string_value(v), max))
        return bad(err, what, field, "is not a short line of text");
    *out = json_string_value(v);
    return GV_OK;
}

static void put(char *dst, size_t n, const char *s)
{
    snprintf(dst, n, "%s", s ? s : "");
}

/* ---------- a node document ---------- */

static void node_case(const json_t *cs, struct gv_run_cols *c)
{
    const char *v = sget(cs, "verdict");
    c->cases++;
    if (v && !strcmp(v, "pass"))
        c->passed++;
    else if (v && !strcmp(v, "fail"))
        c->failed++;
    else if (v && !strcmp(v, "skipped"))
        c->skipped++;
    else
        c->errors++;
    const char *id = sget(cs, "id");
    const json_t *eb = json_object_get(cs, "effective_bits");
    const struct gv_catalog_entry *e = id && json_is_number(eb) ? gv_catalog_find(id) : NULL;
    if (!e)
        return;
    double lost = gv_hist_bits_lost(json_number_value(eb), (int)e->c.compute_dtype,
                                    (int)e->c.out_dtype);
    if (lost >= 0 && lost > c->worst_bits_lost) {
        c->worst_bits_lost = lost;
        put(c->worst_case, sizeof c->worst_case, id);
    }
}

static int node_runs(const json_t *doc, struct gv_run_cols *c, const char *what,
                     struct gv_err *err)
{
    const json_t *runs = json_object_get(doc, "runs"), *r, *cs;
    if (runs && !json_is_null(runs) && (!json_is_array(runs) || json_array_size(runs) > 1000))
        return bad(err, what, "runs", "not an array of at most 1000 runs");
    size_t i, j;
    json_array_foreach(runs, i, r) {
        const json_t *cases = json_object_get(r, "cases");
        if (!json_is_array(cases) || json_array_size(cases) > 100000)
            return bad(err, what, "runs[].cases", "missing, not an array or too long");
        json_array_foreach(cases, j, cs) {
            if (!gv_text_line_ok(sget(cs, "id"), 200) || !gv_text_line_ok(sget(cs, "verdict"), 32))
                return bad(err, what, "runs[].cases[]", "without a short id and verdict");
            node_case(cs, c);
        }
    }
    return GV_OK;
}

static int node_cols(const json_t *doc, struct gv_run_cols *c, const char *what,
                     struct gv_err *err)
{
    const char *node = sget(doc, "node"), *status = sget(doc, "status"), *s;
    if (!node_name_ok(node))
        return bad(err, what, "node", "missing or not 1-64 characters of [A-Za-z0-9._-]");
    int ran = status && !strcmp(status, "ran");
    if (!ran && !(status && !strcmp(status, "could_not_run")))
        return bad(err, what, "status", "is neither \"ran\" nor \"could_not_run\"");
    put(c->hostname, sizeof c->hostname, node); /* the node is the machine */
    if (opt_text(doc, "job", 128, &s, what, "job", err))
        return err->code;
    put(c->fleet_job, sizeof c->fleet_job, s);
    if (opt_text(doc, "tier", 32, &s, what, "tier", err))
        return err->code;
    put(c->suite, sizeof c->suite, s);
    if (opt_text(doc, "started", 64, &s, what, "started", err))
        return err->code;
    if (s)
        put(c->created, sizeof c->created, s);
    const json_t *sd = json_object_get(doc, "stack_digest");
    if (sd && !json_is_null(sd) && !digest_ok(json_string_value(sd)))
        return bad(err, what, "stack_digest", "is not \"sha256:\" and 64 hex digits");
    put(c->stack_digest, sizeof c->stack_digest, json_string_value(sd));
    const json_t *hw = json_object_get(doc, "hardware");
    if (hw && !json_is_null(hw)) {
        if (!json_is_object(hw))
            return bad(err, what, "hardware", "is not an object");
        static const char *const keys[] = {"model", "driver", "device", "uuid"};
        const char *v[4];
        for (int k = 0; k < 4; k++) {
            char field[32];
            snprintf(field, sizeof field, "hardware.%s", keys[k]);
            if (opt_text(hw, keys[k], 256, &v[k], what, field, err))
                return err->code;
        }
        put(c->gpu_model, sizeof c->gpu_model, v[0]);
        put(c->driver, sizeof c->driver, v[1]);
        put(c->device, sizeof c->device, v[2]);
        put(c->gpu_ids, sizeof c->gpu_ids, v[3]);
        c->gpu_count = 1;
    }
    if (node_runs(doc, c, what, err))
        return err->code;
    /* as fleet run's exit status: it ran and every case passed */
    put(c->verdict, sizeof c->verdict, ran && c->cases > 0 && c->passed == c->cases ? "pass"
                                                                                    : "fail");
    return GV_OK;
}

/* ---------- a fleet document ---------- */

/* Checks every group and odd node the fleet history reads; counts the odd. */
static int fleet_groups(const json_t *doc, long long *odd, const char *what, struct gv_err *err)
{
    const json_t *groups = json_object_get(doc, "groups"), *g, *o;
    if (!json_is_array(groups) || json_array_size(groups) > 100000)
        return bad(err, what, "groups", "missing, not an array or too long");
    size_t i, j;
    *odd = 0;
    json_array_foreach(groups, i, g) {
        const json_t *key = json_object_get(g, "key"), *sd = json_object_get(g, "stack_digest");
        const char *s;
        if (!json_is_object(g) || !json_is_object(key))
            return bad(err, what, "groups[].key", "missing or not an object");
        if (opt_text(key, "model", 256, &s, what, "groups[].key.model", err) ||
            opt_text(key, "driver", 256, &s, what, "groups[].key.driver", err))
            return err->code;
        if (sd && !json_is_null(sd) && !digest_ok(json_string_value(sd)))
            return bad(err, what, "groups[].stack_digest", "is not \"sha256:\" and 64 hex digits");
        const json_t *list = json_object_get(g, "odd");
        if (list && !json_is_array(list))
            return bad(err, what, "groups[].odd", "is not an array");
        json_array_foreach(list, j, o) {
            if (!node_name_ok(sget(o, "node")))
                return bad(err, what, "groups[].odd[].node",
                           "missing or not 1-64 characters of [A-Za-z0-9._-]");
            if (!class_ok(sget(o, "class")))
                return bad(err, what, "groups[].odd[].class", "missing or not a class name");
            (*odd)++;
        }
    }
    return GV_OK;
}

static int fleet_cols(const json_t *doc, struct gv_run_cols *c, const char *what,
                      struct gv_err *err)
{
    const char *job;
    if (opt_text(doc, "job", 128, &job, what, "job", err))
        return err->code;
    put(c->fleet_job, sizeof c->fleet_job, job);
    const json_t *n = json_object_get(doc, "nodes");
    if (!json_is_integer(n) || json_integer_value(n) < 0 || json_integer_value(n) > 10000000)
        return bad(err, what, "nodes", "missing or not an integer 0..10000000");
    c->fleet_nodes = json_integer_value(n);
    if (fleet_groups(doc, &c->fleet_odd, what, err))
        return err->code;
    const json_t *miss = json_object_get(json_object_get(doc, "summary"), "missing");
    long long missing = json_is_integer(miss) ? json_integer_value(miss) : 0;
    /* as compare's exit status: no odd node and no rank missing */
    put(c->verdict, sizeof c->verdict, c->fleet_odd == 0 && missing == 0 ? "pass" : "fail");
    return GV_OK;
}

int gv_hist_fleet_cols(const json_t *doc, struct gv_run_cols *c, const char *what,
                       struct gv_err *err)
{
    if (c->schema_version != 1)
        return gv_err_set(err, GV_E_SCHEMA, "%s: %s schema_version %d is not 1", what,
                          c->schema, c->schema_version);
    return !strcmp(c->kind, "fleet-node") ? node_cols(doc, c, what, err)
                                          : fleet_cols(doc, c, what, err);
}

int gv_history_mark_fleet_job(json_t *fleet, const char *job, struct gv_err *err)
{
    if (!job || !*job)
        return GV_OK;
    if (!gv_text_line_ok(job, 128))
        return gv_err_set(err, GV_E_FORMAT, "fleet job must be one line of 1 to 128 bytes");
    return json_object_set_new(fleet, "job", json_string(job))
               ? gv_err_set(err, GV_E_NOMEM, "fleet job: out of memory")
               : GV_OK;
}

/* ---------- the fleet over time ---------- */

struct round {
    long long id;
    char time[32], job[136], verdict[8];
    long long nodes, odd;
};

struct rounds {
    struct round *r;
    size_t n, cap;
};

static const char *text_of(const struct gv_hv *v)
{
    return v->type == GV_HV_TEXT ? v->s : "";
}

static long long int_of(const struct gv_hv *v)
{
    return v->type == GV_HV_INT ? v->i : v->type == GV_HV_REAL ? (long long)v->d
         : v->type == GV_HV_TEXT ? strtoll(v->s, NULL, 10) : -1;
}

static int round_row(void *ud, int n, const struct gv_hv *v)
{
    struct rounds *rs = ud;
    if (n < 6)
        return 0;
    if (rs->n == rs->cap) {
        size_t cap = rs->cap ? rs->cap * 2 : 16;
        struct round *r = realloc(rs->r, cap * sizeof *r);
        if (!r)
            return GV_E_NOMEM;
        rs->r = r;
        rs->cap = cap;
    }
    struct round *r = &rs->r[rs->n++];
    r->id = int_of(&v[0]);
    put(r->time, sizeof r->time, text_of(&v[1]));
    put(r->job, sizeof r->job, text_of(&v[2]));
    r->nodes = int_of(&v[3]);
    r->odd = int_of(&v[4]);
    put(r->verdict, sizeof r->verdict, text_of(&v[5]));
    return 0;
}

static json_t *str_or_null(const char *s)
{
    return s && *s ? json_string(s) : json_null();
}

/* A group of a recorded comparison, as the fleet history shows it. */
static json_t *group_json(const json_t *g)
{
    const json_t *key = json_object_get(g, "key"), *cu = json_object_get(key, "compute_units");
    json_t *o = json_object();
    json_object_set_new(o, "gpu_model", str_or_null(sget(key, "model")));
    json_object_set_new(o, "compute_units",
                        json_is_integer(cu) ? json_integer(json_integer_value(cu)) : json_null());
    json_object_set_new(o, "driver", str_or_null(sget(key, "driver")));
    json_object_set_new(o, "stack_digest", str_or_null(sget(g, "stack_digest")));
    const json_t *n = json_object_get(g, "nodes");
    json_object_set_new(o, "nodes", json_integer(json_is_integer(n) ? json_integer_value(n) : 0));
    return o;
}

/* One recorded comparison: its columns, groups and odd nodes (checked again:
 * a document is hostile input wherever it comes from). */
static int round_json(struct gv_history *h, const struct round *r, json_t *out,
                      struct gv_err *err)
{
    json_t *doc = NULL;
    int rc = gv_hist_load_doc(h, r->id, &doc, err);
    if (rc)
        return rc;
    char what[64];
    snprintf(what, sizeof what, "run %lld", r->id);
    long long odd = 0;
    if (fleet_groups(doc, &odd, what, err)) {
        json_decref(doc);
        return err->code;
    }
    json_t *o = json_object(), *groups = json_array(), *odds = json_array();
    json_object_set_new(o, "run", json_integer(r->id));
    json_object_set_new(o, "time", json_string(r->time));
    json_object_set_new(o, "job", str_or_null(r->job));
    json_object_set_new(o, "verdict", json_string(r->verdict));
    json_object_set_new(o, "nodes", json_integer(r->nodes < 0 ? 0 : r->nodes));
    const json_t *miss = json_object_get(json_object_get(doc, "summary"), "missing");
    json_object_set_new(o, "missing", json_integer(json_is_integer(miss) ? json_integer_value(miss)
                                                                         : 0));
    size_t i, j;
    const json_t *g, *od;
    json_array_foreach(json_object_get(doc, "groups"), i, g) {
        json_array_append_new(groups, group_json(g));
        json_array_foreach(json_object_get(g, "odd"), j, od) {
            json_t *e = json_object();
            const json_t *rank = json_object_get(od, "rank");
            json_object_set_new(e, "node", json_string(sget(od, "node")));
            json_object_set_new(e, "rank", json_is_integer(rank)
                                               ? json_integer(json_integer_value(rank))
                                               : json_null());
            json_object_set_new(e, "class", json_string(sget(od, "class")));
            json_object_set_new(e, "group", json_integer((json_int_t)i));
            json_array_append_new(odds, e);
        }
    }
    json_object_set_new(o, "groups", groups);
    json_object_set_new(o, "odd", odds);
    json_array_append_new(out, o);
    json_decref(doc);
    return GV_OK;
}

/* The comparison of a node run's job in the document: its odd entry's class
 * ("" when the node was not odd there); NULL when no comparison of the job is. */
static const json_t *round_of(const json_t *rounds, const char *job)
{
    size_t i;
    const json_t *r;
    if (!*job)
        return NULL;
    json_array_foreach(rounds, i, r) {
        const char *j = sget(r, "job");
        if (j && !strcmp(j, job))
            return r;
    }
    return NULL;
}

static const char *class_in(const json_t *round, const char *node)
{
    size_t i;
    const json_t *o;
    json_array_foreach(json_object_get(round, "odd"), i, o) {
        if (!strcmp(sget(o, "node"), node))
            return sget(o, "class");
    }
    return "";
}

struct node_ctx {
    json_t *rounds, *nodes; /* nodes: an object node name -> {node, runs: []} */
    const char *oldest;     /* with --limit: the oldest comparison shown ("" all) */
};

static int node_row(void *ud, int n, const struct gv_hv *v)
{
    struct node_ctx *x = ud;
    if (n < 8)
        return 0;
    const char *node = text_of(&v[2]), *job = text_of(&v[3]);
    if (!node_name_ok(node)) /* recorded before the checks, or altered: never shown */
        return 0;
    json_t *nd = json_object_get(x->nodes, node);
    if (!nd) {
        nd = json_pack("{s:s, s:[]}", "node", node, "runs");
        json_object_set_new(x->nodes, node, nd);
    }
    json_t *runs = json_object_get(nd, "runs");
    const json_t *r = round_of(x->rounds, job);
    /* newest first: the latest kept; under --limit those of the comparisons shown and later */
    if (json_array_size(runs) >= FLEET_RUNS_PER_NODE || (!r && strcmp(text_of(&v[1]), x->oldest) < 0))
        return 0;
    json_t *e = json_object();
    json_object_set_new(e, "run", json_integer(int_of(&v[0])));
    json_object_set_new(e, "time", json_string(text_of(&v[1])));
    json_object_set_new(e, "job", str_or_null(job));
    json_object_set_new(e, "stack_digest", str_or_null(text_of(&v[4])));
    json_object_set_new(e, "verdict", str_or_null(text_of(&v[5])));
    json_object_set_new(e, "gpu_model", str_or_null(text_of(&v[6])));
    json_object_set_new(e, "driver", str_or_null(text_of(&v[7])));
    const char *cls = r ? class_in(r, node) : NULL;
    json_object_set_new(e, "round", r ? json_integer(json_integer_value(json_object_get(r, "run")))
                                      : json_null());
    json_object_set_new(e, "odd", cls && *cls ? json_true() : json_false());
    json_object_set_new(e, "class", cls && *cls ? json_string(cls) : json_null());
    json_array_insert_new(runs, 0, e); /* oldest first */
    return 0;
}

/* Per node: how often it was odd, its classes, and the times its stack changed. */
static json_t *node_summary(json_t *nd)
{
    json_t *runs = json_object_get(nd, "runs"), *classes = json_array(), *changes = json_array();
    size_t i, odd = 0;
    json_t *r;
    const char *last = NULL;
    json_array_foreach(runs, i, r) {
        const char *cls = sget(r, "class"), *sd = sget(r, "stack_digest");
        if (cls) {
            odd++;
            size_t k;
            json_t *c;
            int seen = 0;
            json_array_foreach(classes, k, c) seen |= !strcmp(json_string_value(c), cls);
            if (!seen)
                json_array_append_new(classes, json_string(cls));
        }
        if (sd && last && strcmp(sd, last))
            json_array_append_new(changes, json_pack("{s:s, s:s, s:s}", "time", sget(r, "time"),
                                                     "from", last, "to", sd));
        if (sd)
            last = sd;
    }
    json_object_set_new(nd, "odd_runs", json_integer((json_int_t)odd));
    json_object_set_new(nd, "classes", classes);
    json_object_set_new(nd, "stack_changes", changes);
    return nd;
}

int gv_history_fleet(struct gv_history *h, const struct gv_history_filter *f, json_t **out,
                     struct gv_err *err)
{
    *out = NULL;
    const char *since = f && f->since && *f->since ? f->since : "";
    const char *machine = f && f->machine && *f->machine ? f->machine : "";
    char sql[4096];
    struct gv_hv p[2] = {{.type = GV_HV_TEXT, .s = since}, {.type = GV_HV_TEXT, .s = machine}};
    snprintf(sql, sizeof sql, "SELECT id, created, fleet_job, fleet_nodes, fleet_odd, verdict "
             "FROM %s WHERE kind = 'fleet' AND created >= ? ORDER BY created DESC, id DESC "
             "LIMIT %d", gv_hist_runs(h), f && f->limit > 0 ? f->limit : 50);
    struct rounds rs = {0};
    int rc = gv_hist_query(h, sql, p, 1, round_row, &rs, err);
    if (rc == GV_E_NOMEM)
        gv_err_set(err, GV_E_NOMEM, "out of memory");
    json_t *doc = json_object(), *rounds = json_array(), *nodes = json_object();
    for (size_t i = 0; !rc && i < rs.n; i++)
        rc = round_json(h, &rs.r[i], rounds, err);
    snprintf(sql, sizeof sql, "SELECT id, created, hostname, fleet_job, stack_digest, verdict, "
             "gpu_model, driver FROM %s WHERE kind = 'fleet-node' AND created >= ? AND (? = '' OR hostname = ?) "
             "ORDER BY hostname, created DESC, id DESC", gv_hist_runs(h));
    struct gv_hv q[3] = {p[0], p[1], p[1]};
    int limited = rs.n && (int)rs.n == (f && f->limit > 0 ? f->limit : 50);
    struct node_ctx x = {rounds, nodes, limited ? rs.r[rs.n - 1].time : ""};
    if (!rc)
        rc = gv_hist_query(h, sql, q, 3, node_row, &x, err);
    json_object_set_new(doc, "schema", json_string(GV_FLEET_HISTORY_SCHEMA));
    json_object_set_new(doc, "schema_version", json_integer(GV_FLEET_HISTORY_SCHEMA_VERSION));
    json_object_set_new(doc, "db", json_string(gv_history_name(h)));
    gv_json_set_utc_now(doc, "generated");
    json_object_set_new(doc, "filters", json_pack("{s:o, s:o, s:i}", "since", str_or_null(since),
                                                  "node", str_or_null(machine), "limit",
                                                  f && f->limit > 0 ? f->limit : 50));
    json_object_set_new(doc, "rounds", rounds);
    json_t *list = json_array();
    const char *k;
    json_t *nd;
    json_object_foreach(nodes, k, nd) json_array_append(list, node_summary(nd));
    json_decref(nodes);
    json_object_set_new(doc, "nodes", list);
    free(rs.r);
    if (rc) {
        json_decref(doc);
        return rc;
    }
    *out = doc;
    return GV_OK;
}

int gv_hist_fleet_mark_odd(struct gv_history *h, const json_t *doc, const char *job,
                           struct gv_err *err)
{
    size_t i, j;
    const json_t *g, *o;
    json_array_foreach(json_object_get(doc, "groups"), i, g) {
        json_array_foreach(json_object_get(g, "odd"), j, o) {
            /* checked by gv_hist_fleet_cols before: a node name and a class */
            struct gv_hv p[] = {{.type = GV_HV_TEXT, .s = sget(o, "class")},
                                {.type = GV_HV_TEXT, .s = job},
                                {.type = GV_HV_TEXT, .s = sget(o, "node")}};
            int rc = gv_hist_query(h, "UPDATE runs SET node_class = ? WHERE kind = 'fleet-node' "
                                   "AND fleet_job = ? AND hostname = ? AND node_class IS NULL",
                                   p, 3, NULL, NULL, err);
            if (rc)
                return rc;
        }
    }
    return GV_OK;
}
