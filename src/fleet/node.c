/* Node documents (docs/fleet.md, "The node document"): validation, the stack
 * digest, and loading a gathered directory or named files. Every field is
 * hostile input: checked for type and range here, never used as a path. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/fs.h"
#include "base/json.h"
#include "base/sha256.h"
#include "base/utf8.h"
#include "fleet/fleet.h"
#include "fleet/fleet_impl.h"

int gv_fleet_node_name_ok(const char *name)
{
    size_t n = name ? strlen(name) : 0;
    if (n == 0 || n > GV_FLEET_NODE_NAME_MAX || !strcmp(name, ".") || !strcmp(name, ".."))
        return 0;
    for (size_t i = 0; i < n; i++) {
        char c = name[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '_' || c == '-'))
            return 0;
    }
    return 1;
}


int gv_fleet_stack_digest(const json_t *stack, char out[72], struct gv_err *err)
{
    out[0] = 0;
    if (!json_is_object(stack))
        return gv_err_set(err, GV_E_FORMAT, "stack summary: not an object");
    char *s = gv_json_dumps(stack, JSON_SORT_KEYS | JSON_COMPACT | JSON_ENSURE_ASCII);
    if (!s)
        return gv_err_set(err, GV_E_NOMEM, "stack summary: cannot serialise");
    char hex[65];
    gv_sha256_buf_hex(s, strlen(s), hex);
    free(s);
    snprintf(out, 72, "sha256:%s", hex);
    return GV_OK;
}

static int is_digest(const char *s)
{
    if (!s || strncmp(s, "sha256:", 7) != 0 || strlen(s) != 71)
        return 0;
    for (const char *p = s + 7; *p; p++)
        if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f')))
            return 0;
    return 1;
}

/* Output digests as check writes them: 64 hex, optionally "sha256:"-prefixed. */
static int is_output_digest(const char *s)
{
    if (s && !strncmp(s, "sha256:", 7))
        s += 7;
    if (!s || strlen(s) != 64)
        return 0;
    for (const char *p = s; *p; p++)
        if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f')))
            return 0;
    return 1;
}

static int bad(struct gv_err *err, const char *what, const char *field, const char *why)
{
    return gv_err_set(err, GV_E_FORMAT, "%s: field \"%s\" %s", what, field, why);
}

static int opt_text(const json_t *o, const char *key, size_t max, const char *what,
                    struct gv_err *err)
{
    const json_t *v = json_object_get(o, key);
    if (!v || json_is_null(v))
        return GV_OK;
    if (!json_is_string(v) ||
        (json_string_length(v) && !gv_text_line_ok(json_string_value(v), max)))
        return bad(err, what, key, "is not a short line of text");
    return GV_OK;
}

static int check_hardware(const json_t *hw, const char *what, struct gv_err *err)
{
    if (!json_is_object(hw))
        return bad(err, what, "hardware", "missing or not an object");
    if (!gv_text_line_ok(json_string_value(json_object_get(hw, "model")), 256))
        return bad(err, what, "hardware.model", "missing or not a short line of text");
    json_t *cu = json_object_get(hw, "compute_units");
    if (!json_is_integer(cu) || json_integer_value(cu) < 0 || json_integer_value(cu) > 1000000)
        return bad(err, what, "hardware.compute_units", "missing or not an integer 0..1000000");
    if (!gv_text_line_ok(json_string_value(json_object_get(hw, "driver")), 256))
        return bad(err, what, "hardware.driver", "missing or not a short line of text");
    if (opt_text(hw, "device", 256, what, err) || opt_text(hw, "uuid", 256, what, err))
        return err->code;
    return GV_OK;
}

static int check_number(const json_t *o, const char *key, const char *what, const char *field,
                        struct gv_err *err)
{
    const json_t *v = json_object_get(o, key);
    if (v && !json_is_null(v) && !json_is_number(v))
        return bad(err, what, field, "is not a number");
    return GV_OK;
}

static int check_case(const json_t *c, const char *what, struct gv_err *err)
{
    if (!json_is_object(c))
        return bad(err, what, "runs[].cases[]", "is not an object");
    if (!gv_text_line_ok(json_string_value(json_object_get(c, "id")), GV_FLEET_CASE_ID_MAX))
        return bad(err, what, "runs[].cases[].id", "missing or not a short line of text");
    const char *verdict = json_string_value(json_object_get(c, "verdict"));
    if (!gv_text_line_ok(verdict, 32))
        return bad(err, what, "runs[].cases[].verdict", "missing or not a short word");
    const json_t *d = json_object_get(c, "output_digest");
    if (d && !json_is_null(d) && !is_output_digest(json_string_value(d)))
        return bad(err, what, "runs[].cases[].output_digest", "is not a SHA-256 hex digest");
    const json_t *det = json_object_get(c, "deterministic");
    if (det && !json_is_boolean(det))
        return bad(err, what, "runs[].cases[].deterministic", "is not true or false");
    static const char *const nums[] = {"effective_bits", "max_abs", "nan_count", "inf_count"};
    for (size_t i = 0; i < sizeof nums / sizeof *nums; i++)
        if (check_number(c, nums[i], what, nums[i], err))
            return err->code;
    return GV_OK;
}

static int check_bench(const json_t *b, const char *what, struct gv_err *err)
{
    if (!json_is_object(b) ||
        !gv_text_line_ok(json_string_value(json_object_get(b, "id")), GV_FLEET_CASE_ID_MAX))
        return bad(err, what, "runs[].bench[].id", "missing or not a short line of text");
    if (!gv_text_line_ok(json_string_value(json_object_get(b, "unit")), 32))
        return bad(err, what, "runs[].bench[].unit", "missing or not a short word");
    if (!json_is_number(json_object_get(b, "median")))
        return bad(err, what, "runs[].bench[].median", "missing or not a number");
    return check_number(b, "spread", what, "runs[].bench[].spread", err);
}

static int check_run(const json_t *r, const char *what, struct gv_err *err)
{
    if (!json_is_object(r))
        return bad(err, what, "runs[]", "is not an object");
    json_t *rep = json_object_get(r, "repeat");
    if (rep && (!json_is_integer(rep) || json_integer_value(rep) < 1))
        return bad(err, what, "runs[].repeat", "is not a positive integer");
    if (check_number(r, "hot_seconds", what, "runs[].hot_seconds", err))
        return err->code;
    const json_t *cases = json_object_get(r, "cases"), *bench = json_object_get(r, "bench");
    if (!json_is_array(cases) || json_array_size(cases) > GV_FLEET_CASES_MAX)
        return bad(err, what, "runs[].cases", "missing, not an array or too long");
    if (bench && !json_is_null(bench) &&
        (!json_is_array(bench) || json_array_size(bench) > GV_FLEET_CASES_MAX))
        return bad(err, what, "runs[].bench", "not an array or too long");
    size_t i;
    const json_t *v;
    json_array_foreach(cases, i, v) {
        if (check_case(v, what, err))
            return err->code;
    }
    json_array_foreach(bench, i, v) {
        if (check_bench(v, what, err))
            return err->code;
    }
    const json_t *pd = json_object_get(r, "probe_digest");
    if (pd && !json_is_null(pd) && !is_digest(json_string_value(pd)))
        return bad(err, what, "runs[].probe_digest", "is not \"sha256:\" and 64 hex digits");
    return GV_OK;
}

static int check_ids(const json_t *node, const char *what, struct gv_err *err)
{
    if (!gv_fleet_node_name_ok(json_string_value(json_object_get(node, "node"))))
        return bad(err, what, "node", "missing or not 1-64 characters of [A-Za-z0-9._-]");
    json_t *rank = json_object_get(node, "rank"), *size = json_object_get(node, "size");
    if (!json_is_integer(size) || json_integer_value(size) < 1 ||
        json_integer_value(size) > GV_FLEET_RANKS_MAX)
        return bad(err, what, "size", "missing or not an integer 1..10000000");
    if (!json_is_integer(rank) || json_integer_value(rank) < 0 ||
        json_integer_value(rank) >= json_integer_value(size))
        return bad(err, what, "rank", "missing or not an integer 0..size-1");
    if (opt_text(node, "launcher", 32, what, err) || opt_text(node, "job", 128, what, err) ||
        opt_text(node, "tier", 32, what, err) || opt_text(node, "started", 64, what, err) ||
        opt_text(node, "gpuvet_version", 64, what, err))
        return err->code;
    return check_number(node, "seconds", what, "seconds", err);
}

int gv_fleet_node_check(const json_t *node, const char *what, struct gv_err *err)
{
    if (!json_is_object(node))
        return gv_err_set(err, GV_E_FORMAT, "%s: not a JSON object", what);
    if (gv_json_check_schema(node, GV_FLEET_NODE_SCHEMA, GV_FLEET_SCHEMA_VERSION, what, err))
        return err->code;
    if (check_ids(node, what, err))
        return err->code;
    const char *status = json_string_value(json_object_get(node, "status"));
    int ran = status && !strcmp(status, "ran");
    if (!ran && !(status && !strcmp(status, "could_not_run")))
        return bad(err, what, "status", "is neither \"ran\" nor \"could_not_run\"");
    if (opt_text(node, "reason", GV_FLEET_REASON_MAX, what, err))
        return err->code;
    const json_t *hw = json_object_get(node, "hardware");
    if ((ran || hw) && check_hardware(hw, what, err))
        return err->code;
    const json_t *stack = json_object_get(node, "stack");
    const char *sd = json_string_value(json_object_get(node, "stack_digest"));
    if (ran || stack || sd) {
        if (!json_is_object(stack))
            return bad(err, what, "stack", "missing or not an object");
        if (!is_digest(sd))
            return bad(err, what, "stack_digest", "missing or not \"sha256:\" and 64 hex digits");
        char want[72];
        if (gv_fleet_stack_digest(stack, want, err))
            return gv_err_prefix(err, "%s", what);
        if (strcmp(want, sd) != 0)
            return bad(err, what, "stack_digest", "is not the digest of \"stack\"");
    }
    const json_t *runs = json_object_get(node, "runs");
    if (ran && (!json_is_array(runs) || json_array_size(runs) == 0 ||
                json_array_size(runs) > GV_FLEET_REPEATS_MAX))
        return bad(err, what, "runs", "missing, empty or longer than 1000");
    size_t i;
    const json_t *r;
    json_array_foreach(runs, i, r) {
        if (check_run(r, what, err))
            return err->code;
    }
    const json_t *outs = json_object_get(node, "outputs");
    if (outs && !json_is_null(outs) &&
        !(json_is_string(outs) && (!strcmp(json_string_value(outs), "present") ||
                                   !strcmp(json_string_value(outs), "absent"))))
        return bad(err, what, "outputs", "is neither \"present\" nor \"absent\"");
    return GV_OK;
}

/* Parses and checks a document already read; takes data. */
static int node_parse(char *data, size_t len, const char *what, json_t **node, struct gv_err *err)
{
    json_error_t je;
    *node = NULL;
    int rc = gv_json_parse(data, len, what, node, &je, err);
    free(data);
    if (rc == GV_E_FORMAT)
        return gv_err_set(err, GV_E_FORMAT, "%s: line %d column %d: %s", what, je.line, je.column,
                          je.text);
    if (rc)
        return rc;
    if (gv_fleet_node_check(*node, what, err)) {
        json_decref(*node);
        *node = NULL;
        return err->code;
    }
    return GV_OK;
}

int gv_fleet_read_at(int dfd, const char *name, int nofollow, const char *what, size_t max,
                     char **data, size_t *len, struct gv_err *err)
{
    *data = NULL;
    int fd = openat(dfd, name, O_RDONLY | O_NONBLOCK | O_CLOEXEC | (nofollow ? O_NOFOLLOW : 0));
    if (fd < 0)
        return gv_err_set(err, GV_E_IO, "%s: %s", what,
                          errno == ELOOP && nofollow ? "a symbolic link (not followed)"
                                                     : strerror(errno));
    int rc = gv_read_fd(fd, what, max, data, len, err);
    close(fd);
    return rc;
}

int gv_fleet_node_read(const char *path, json_t **node, struct gv_err *err)
{
    char *data;
    size_t len;
    *node = NULL;
    if (gv_fleet_read_at(AT_FDCWD, path, 0, path, GV_FLEET_NODE_MAX_BYTES, &data, &len, err))
        return err->code;
    return node_parse(data, len, path, node, err);
}

/* "NODE.rRANK.json" -> node, rank; 0 when the name has another form. */
static int split_name(const char *name, char node[GV_FLEET_NODE_NAME_MAX + 1], long long *rank)
{
    size_t n = strlen(name);
    if (n < 8 || strcmp(name + n - 5, ".json") != 0)
        return 0;
    size_t end = n - 5, d = end;
    while (d > 0 && name[d - 1] >= '0' && name[d - 1] <= '9')
        d--;
    if (d == end || end - d > 9 || d < 3 || name[d - 1] != 'r' || name[d - 2] != '.')
        return 0;
    if (end - d > 1 && name[d] == '0')
        return 0;
    size_t nl = d - 2;
    if (nl > GV_FLEET_NODE_NAME_MAX)
        return 0;
    memcpy(node, name, nl);
    node[nl] = 0;
    *rank = strtoll(name + d, NULL, 10);
    return gv_fleet_node_name_ok(node);
}

struct loaded {
    json_t *arr;
    json_t *stacks; /* stack digest -> the first stack seen with it (shared) */
    json_t *probes; /* probe digest -> the first probe seen with it (shared when equal) */
    json_t *cases;  /* "ID\x1fDIGEST" -> the first case result seen with them (shared) */
};

/* Equal digests, equal stacks (checked): later nodes share the first stack
 * object, so 10,000 copies of one stack cost one. */
static void share_stack(struct loaded *l, json_t *node)
{
    const char *sd = json_string_value(json_object_get(node, "stack_digest"));
    json_t *stack = json_object_get(node, "stack");
    if (!sd || !stack)
        return;
    json_t *seen = json_object_get(l->stacks, sd);
    if (seen)
        json_object_set(node, "stack", seen);
    else
        json_object_set(l->stacks, sd, stack);
}

/* The same for each run's probe fingerprint, by its digest when equal. */
static void share_probes(struct loaded *l, json_t *node)
{
    size_t r;
    json_t *run;
    json_array_foreach(json_object_get(node, "runs"), r, run) {
        const char *pd = json_string_value(json_object_get(run, "probe_digest"));
        json_t *probe = json_object_get(run, "probe");
        if (!pd || !probe)
            continue;
        json_t *seen = json_object_get(l->probes, pd);
        if (!seen)
            json_object_set(l->probes, pd, probe);
        else if (seen != probe && json_equal(seen, probe))
            json_object_set(run, "probe", seen);
    }
}

/* Nodes alike have equal case results (equal outputs give equal metrics):
 * an equal one already seen replaces each, so a fleet costs its distinct
 * results, not nodes x cases x repeats objects. */
static void share_cases(struct loaded *l, json_t *node)
{
    size_t r, i;
    json_t *run, *c;
    json_array_foreach(json_object_get(node, "runs"), r, run) {
        json_t *cases = json_object_get(run, "cases");
        json_array_foreach(cases, i, c) {
            const char *d = json_string_value(json_object_get(c, "output_digest"));
            char key[GV_FLEET_CASE_ID_MAX + 80];
            snprintf(key, sizeof key, "%s\x1f%s", json_string_value(json_object_get(c, "id")),
                     d ? d : "");
            json_t *seen = json_object_get(l->cases, key);
            if (!seen)
                json_object_set(l->cases, key, c);
            else if (seen != c && json_equal(seen, c))
                json_array_set(cases, i, seen);
        }
    }
}

static int add_node(struct loaded *l, json_t *node, const char *what, struct gv_err *err)
{
    share_stack(l, node);
    share_probes(l, node);
    share_cases(l, node);
    if (json_array_append_new(l->arr, node))
        return gv_err_set(err, GV_E_NOMEM, "%s: out of memory", what);
    return GV_OK;
}

/* One document of a directory: its name checked, opened relative to the
 * directory without following a link, read, checked, its node and rank
 * those of its name. */
static int read_dir_entry(int dfd, const char *name, const char *dirpath, json_t **doc,
                          struct gv_err *err)
{
    char node[GV_FLEET_NODE_NAME_MAX + 1], what[GV_PATH_MAX];
    long long rank;
    *doc = NULL;
    snprintf(what, sizeof what, "%s/nodes/%s", dirpath, name);
    if (!split_name(name, node, &rank))
        return gv_err_set(err, GV_E_FORMAT, "%s: not named NODE.rRANK.json (NODE: [A-Za-z0-9._-])",
                          what);
    char *data;
    size_t len;
    if (gv_fleet_read_at(dfd, name, 1, what, GV_FLEET_NODE_MAX_BYTES, &data, &len, err) ||
        node_parse(data, len, what, doc, err))
        return err->code;
    if (strcmp(json_string_value(json_object_get(*doc, "node")), node) != 0 ||
        json_integer_value(json_object_get(*doc, "rank")) != rank) {
        json_decref(*doc);
        *doc = NULL;
        return gv_err_set(err, GV_E_FORMAT,
                          "%s: its \"node\" and \"rank\" are not those of its name", what);
    }
    return GV_OK;
}

/* The documents are read, parsed and checked by a few threads (parsing is
 * most of the time at 10,000 nodes); the sharing of stacks and case results
 * is done under a lock, one document at a time. */
#define LOAD_THREADS_MAX 8

struct loader {
    struct loaded *l;
    int dfd; /* the directory's nodes/, or -1: names are paths */
    const char *dirpath;
    const char *const *names;
    size_t n;
    atomic_size_t next;
    atomic_int failed;
    pthread_mutex_t mu;
    struct gv_err err; /* the first error */
};

static int load_one(struct loader *ld, size_t i, struct gv_err *err)
{
    json_t *doc;
    int rc = ld->dfd >= 0 ? read_dir_entry(ld->dfd, ld->names[i], ld->dirpath, &doc, err)
                          : gv_fleet_node_read(ld->names[i], &doc, err);
    if (rc)
        return rc;
    pthread_mutex_lock(&ld->mu);
    rc = add_node(ld->l, doc, ld->names[i], err);
    pthread_mutex_unlock(&ld->mu);
    return rc;
}

static void *load_worker(void *arg)
{
    struct loader *ld = arg;
    struct gv_err err = {0};
    for (;;) {
        size_t i = atomic_fetch_add(&ld->next, 1);
        if (i >= ld->n || atomic_load(&ld->failed))
            break;
        if (load_one(ld, i, &err)) {
            pthread_mutex_lock(&ld->mu);
            if (!atomic_exchange(&ld->failed, 1))
                ld->err = err;
            pthread_mutex_unlock(&ld->mu);
            break;
        }
    }
    return NULL;
}

static int load_all(struct loader *ld, struct gv_err *err)
{
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    size_t nt = cpus > 1 ? (size_t)cpus : 1;
    if (nt > LOAD_THREADS_MAX)
        nt = LOAD_THREADS_MAX;
    if (nt > ld->n / 16 + 1)
        nt = ld->n / 16 + 1;
    pthread_t th[LOAD_THREADS_MAX];
    size_t started = 0;
    pthread_mutex_init(&ld->mu, NULL);
    for (size_t t = 1; t < nt; t++)
        if (pthread_create(&th[started], NULL, load_worker, ld) == 0)
            started++;
    load_worker(ld);
    for (size_t t = 0; t < started; t++)
        pthread_join(th[t], NULL);
    pthread_mutex_destroy(&ld->mu);
    if (atomic_load(&ld->failed)) {
        *err = ld->err;
        return err->code ? err->code : GV_E_FORMAT;
    }
    return GV_OK;
}

static void free_names(char **names, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
}

/* The names of DIR/nodes that are documents (not ".", temporary files of
 * atomic writes or files of other kinds). */
static int list_dir(int dfd, const char *dirpath, char ***names, size_t *n, struct gv_err *err)
{
    int fd = dup(dfd);
    DIR *d = fd < 0 ? NULL : fdopendir(fd);
    if (!d) {
        if (fd >= 0)
            close(fd);
        return gv_err_set(err, GV_E_IO, "%s/nodes: %s", dirpath, strerror(errno));
    }
    size_t cap = 0;
    *names = NULL;
    *n = 0;
    int rc = GV_OK;
    struct dirent *e;
    while (!rc && (e = readdir(d))) {
        size_t len = strlen(e->d_name);
        if (e->d_name[0] == '.' || len < 5 || strcmp(e->d_name + len - 5, ".json") != 0)
            continue;
        if (*n == cap) {
            char **nn = realloc(*names, (cap = cap ? cap * 2 : 64) * sizeof *nn);
            if (!nn) {
                rc = gv_err_set(err, GV_E_NOMEM, "out of memory");
                break;
            }
            *names = nn;
        }
        if (!((*names)[*n] = strdup(e->d_name)))
            rc = gv_err_set(err, GV_E_NOMEM, "out of memory");
        else
            ++*n;
    }
    closedir(d);
    return rc;
}

static int load_dir(const char *dirpath, struct loaded *l, struct gv_err *err)
{
    int top = open(dirpath, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (top < 0)
        return gv_err_set(err, GV_E_IO, "%s: %s", dirpath, strerror(errno));
    int dfd = openat(top, "nodes", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    close(top);
    if (dfd < 0)
        return gv_err_set(err, GV_E_IO, "%s/nodes: %s", dirpath,
                          errno == ENOENT ? "no such directory (not a gathered fleet directory)"
                                          : strerror(errno));
    char **names = NULL;
    size_t n = 0;
    int rc = list_dir(dfd, dirpath, &names, &n, err);
    if (!rc) {
        struct loader ld = {
            .l = l, .dfd = dfd, .dirpath = dirpath, .names = (const char *const *)names, .n = n};
        rc = load_all(&ld, err);
    }
    free_names(names, n);
    close(dfd);
    return rc;
}

static int by_rank(const void *a, const void *b)
{
    json_int_t x = json_integer_value(json_object_get(*(json_t *const *)a, "rank"));
    json_int_t y = json_integer_value(json_object_get(*(json_t *const *)b, "rank"));
    return (x > y) - (x < y);
}

static const char *job_of(const json_t *n)
{
    const char *j = json_string_value(json_object_get(n, "job"));
    return j ? j : "";
}

int gv_fleet_by_hand(const json_t *nodes)
{
    size_t i;
    const json_t *n;
    json_array_foreach(nodes, i, n) {
        const char *l = json_string_value(json_object_get(n, "launcher"));
        if (!l || strcmp(l, "none") || json_integer_value(json_object_get(n, "size")) != 1)
            return 0;
    }
    return json_array_size(nodes) > 0;
}

static int by_node(const void *a, const void *b)
{
    const char *x = json_string_value(json_object_get(*(json_t *const *)a, "node"));
    const char *y = json_string_value(json_object_get(*(json_t *const *)b, "node"));
    return strcmp(x ? x : "", y ? y : "");
}

/* Sorted by rank; duplicate ranks, mixed sizes or jobs are errors (one run
 * per comparison, docs/fleet.md). Runs with no launcher: sorted by node, a
 * node twice is the error. */
static int order(json_t *arr, struct gv_err *err)
{
    size_t n = json_array_size(arr);
    if (n == 0)
        return gv_err_set(err, GV_E_FORMAT, "no node documents to compare");
    json_t **v = malloc(n * sizeof *v);
    if (!v)
        return gv_err_set(err, GV_E_NOMEM, "out of memory");
    for (size_t i = 0; i < n; i++)
        v[i] = json_incref(json_array_get(arr, i));
    int alone = gv_fleet_by_hand(arr);
    qsort(v, n, sizeof *v, alone ? by_node : by_rank);
    int rc = GV_OK;
    json_int_t size = json_integer_value(json_object_get(v[0], "size"));
    for (size_t i = 0; i < n && !rc && alone; i++)
        if (i > 0 && !by_node(&v[i - 1], &v[i]))
            rc = gv_err_set(err, GV_E_FORMAT, "node %s appears twice (runs with no launcher are "
                            "told apart by node name)",
                            json_string_value(json_object_get(v[i], "node")));
    for (size_t i = 0; i < n && !rc && !alone; i++) {
        const char *node = json_string_value(json_object_get(v[i], "node"));
        json_int_t rank = json_integer_value(json_object_get(v[i], "rank"));
        if (json_integer_value(json_object_get(v[i], "size")) != size)
            rc = gv_err_set(err, GV_E_FORMAT,
                            "%s (rank %lld): size %lld, others %lld: "
                            "documents of different runs",
                            node, (long long)rank,
                            (long long)json_integer_value(json_object_get(v[i], "size")),
                            (long long)size);
        else if (strcmp(job_of(v[i]), job_of(v[0])) != 0)
            rc = gv_err_set(err, GV_E_FORMAT,
                            "%s (rank %lld): job \"%s\", others \"%s\": "
                            "documents of different runs",
                            node, (long long)rank, job_of(v[i]), job_of(v[0]));
        else if (i > 0 && json_integer_value(json_object_get(v[i - 1], "rank")) == rank)
            rc =
                gv_err_set(err, GV_E_FORMAT, "rank %lld appears twice (%s and %s)", (long long)rank,
                           json_string_value(json_object_get(v[i - 1], "node")), node);
    }
    json_array_clear(arr);
    for (size_t i = 0; i < n; i++)
        json_array_append_new(arr, v[i]);
    free(v);
    return rc;
}

int gv_fleet_load(const char *const *paths, size_t n, json_t **nodes, char *dir, size_t dirsz,
                  struct gv_err *err)
{
    *nodes = NULL;
    if (dir && dirsz)
        dir[0] = 0;
    struct loaded l = {json_array(), json_object(), json_object(), json_object()};
    int rc = GV_OK;
    if (!l.arr || !l.stacks || !l.probes || !l.cases)
        rc = gv_err_set(err, GV_E_NOMEM, "out of memory");
    else if (n == 1 && gv_is_dir(paths[0])) {
        rc = load_dir(paths[0], &l, err);
        if (!rc && dir && snprintf(dir, dirsz, "%s", paths[0]) >= (int)dirsz)
            rc = gv_err_set(err, GV_E_USAGE, "%s: path too long", paths[0]);
    } else {
        struct loader ld = {.l = &l, .dfd = -1, .dirpath = "", .names = paths, .n = n};
        rc = load_all(&ld, err);
    }
    if (!rc)
        rc = order(l.arr, err);
    json_decref(l.stacks);
    json_decref(l.probes);
    json_decref(l.cases);
    if (rc) {
        json_decref(l.arr);
        return rc;
    }
    *nodes = l.arr;
    return GV_OK;
}
