/* The fleet's judgement (docs/fleet.md): node documents checked, grouped by
 * hardware, the majority stack and per case the majority digest, every class
 * (could not run, missing, stack drift, numerics outlier, slow), split cases,
 * cases not run-to-run identical, the directory loader, the reference and
 * the judge of one node. The documents are built here by hand; what each
 * test expects is written here, not derived from the code. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/json.h"
#include "fleet/fleet.h"
#include "store/safetensors.h"
#include "t.h"

#define CASES 3
static const char *const case_ids[CASES] = {"gemm.f32.a", "gemm.f16.b", "sum.f32.c"};

/* A digest of 64 hex digits from a letter: "aaaa...". */
static const char *dg(char c)
{
    static char buf[8][65];
    static int k;
    char *b = buf[k++ % 8];
    memset(b, c, 64);
    b[64] = 0;
    return b;
}

static json_t *stack_with(const char *libver)
{
    return json_pack("{s:[{s:s,s:s},{s:s,s:s}],s:{s:s}}", "libraries", "name", "libblas.so.1",
                     "version", "1.0", "name", "libhipblaslt.so.0", "version", libver,
                     "environment", "HIP_VISIBLE", "0");
}

struct spec {
    const char *name, *model, *libver; /* libver NULL: "0.10.0" */
    int rank, size;
    char digest[CASES][3]; /* per case and repeat (up to 3) the digest letter; 0: "a" */
    int repeats;           /* 0: 1 */
    int nondet_case;       /* 1-based, 0: none */
    double bench;          /* 0: 100 */
    const char *cannot;    /* reason: could not run */
};

static json_t *node_doc(const struct spec *s)
{
    json_t *stack = stack_with(s->libver ? s->libver : "0.10.0");
    char sd[72];
    struct gv_err err = {0};
    T_EQ_INT(gv_fleet_stack_digest(stack, sd, &err), GV_OK);
    json_t *n = json_pack("{s:s,s:i,s:s,s:i,s:i,s:s,s:s,s:s,s:{s:s,s:i,s:s},s:s,s:o,s:[],s:s}",
                          "schema", GV_FLEET_NODE_SCHEMA, "schema_version", 1, "node", s->name,
                          "rank", s->rank, "size", s->size ? s->size : 8, "job", "j.0", "tier",
                          "drain", "status", s->cannot ? "could_not_run" : "ran", "hardware",
                          "model", s->model ? s->model : "MI300X", "compute_units", 304, "driver",
                          "6.8.5", "stack_digest", sd, "stack", stack, "runs", "outputs", "absent");
    if (s->cannot) {
        json_object_set_new(n, "reason", json_string(s->cannot));
        return n;
    }
    int reps = s->repeats ? s->repeats : 1;
    for (int r = 0; r < reps; r++) {
        json_t *cases = json_array();
        for (int c = 0; c < CASES; c++) {
            char l = s->digest[c][r] ? s->digest[c][r] : 'a';
            json_t *cj = json_pack("{s:s,s:s,s:s,s:f}", "id", case_ids[c], "verdict", "pass",
                                   "output_digest", dg(l), "effective_bits", 21.5);
            if (s->nondet_case == c + 1)
                json_object_set_new(cj, "deterministic", json_false());
            json_array_append_new(cases, cj);
        }
        json_t *bench = json_pack("[{s:s,s:s,s:f,s:f}]", "id", "gemm.f16.8192", "unit", "TFLOP/s",
                                  "median", s->bench ? s->bench : 100.0, "spread", 0.5);
        json_array_append_new(json_object_get(n, "runs"),
                              json_pack("{s:i,s:i,s:o,s:o}", "repeat", r + 1, "hot_seconds", 0,
                                        "cases", cases, "bench", bench));
    }
    return n;
}

/* n alike nodes of one model, size n; *s may vary them after. */
static void alike(struct spec *s, int n, char names[][16])
{
    for (int i = 0; i < n; i++) {
        memset(&s[i], 0, sizeof s[i]);
        snprintf(names[i], 16, "gpu-a%03d", i);
        s[i].name = names[i];
        s[i].rank = i;
        s[i].size = n;
    }
}

static json_t *nodes_of(const struct spec *s, int n)
{
    json_t *a = json_array();
    struct gv_err err = {0};
    for (int i = 0; i < n; i++) {
        json_t *d = node_doc(&s[i]);
        if (gv_fleet_node_check(d, s[i].name, &err) != GV_OK)
            fprintf(stderr, "node %d invalid: %s\n", i, err.msg);
        json_array_append_new(a, d);
    }
    return a;
}

static json_t *compare(const struct spec *s, int n)
{
    json_t *nodes = nodes_of(s, n), *fleet = NULL;
    struct gv_err err = {0};
    T_EQ_INT(gv_fleet_compare(nodes, "", &fleet, &err), GV_OK);
    json_decref(nodes);
    return fleet;
}

static long long summary(const json_t *f, const char *k)
{
    return json_integer_value(json_object_get(json_object_get(f, "summary"), k));
}

/* The odd entry of node name in any group, or NULL. */
static const json_t *odd_of(const json_t *f, const char *name)
{
    size_t gi, i;
    const json_t *g, *o;
    json_array_foreach(json_object_get(f, "groups"), gi, g)
        json_array_foreach(json_object_get(g, "odd"), i, o)
            if (!strcmp(json_string_value(json_object_get(o, "node")), name))
                return o;
    return NULL;
}

static const char *cls(const json_t *f, const char *name)
{
    return json_string_value(json_object_get(odd_of(f, name), "class"));
}

static void test_names(void)
{
    T_CHECK(gv_fleet_node_name_ok("gpu-a017"));
    T_CHECK(gv_fleet_node_name_ok("n1.cluster_x"));
    T_CHECK(!gv_fleet_node_name_ok(""));
    T_CHECK(!gv_fleet_node_name_ok("."));
    T_CHECK(!gv_fleet_node_name_ok(".."));
    T_CHECK(!gv_fleet_node_name_ok("a/b"));
    T_CHECK(!gv_fleet_node_name_ok("a b"));
    T_CHECK(!gv_fleet_node_name_ok("gpu\n1"));
    char longname[80];
    memset(longname, 'x', 65);
    longname[65] = 0;
    T_CHECK(!gv_fleet_node_name_ok(longname));
    longname[64] = 0;
    T_CHECK(gv_fleet_node_name_ok(longname));
}

static void test_stack_digest(void)
{
    /* sha256 of '{"a":"x","b":[1,{"c":true,"d":null}]}' (sorted keys, compact),
     * computed with sha256sum */
    json_t *s = json_pack("{s:[i,{s:n,s:b}],s:s}", "b", 1, "d", "c", 1, "a", "x");
    char out[72];
    struct gv_err err = {0};
    T_EQ_INT(gv_fleet_stack_digest(s, out, &err), GV_OK);
    T_EQ_STR(out, "sha256:063f1587acec8e6af9d1e89abbbc89ea9c84f056a2ababeaa3fa03417c7f7e9a");
    json_decref(s);
}

static void expect_invalid(json_t *n, const char *field)
{
    struct gv_err err = {0};
    T_CHECK(gv_fleet_node_check(n, "x.json", &err) != GV_OK);
    T_CHECK(strstr(err.msg, "x.json") != NULL);
    if (!strstr(err.msg, field))
        fprintf(stderr, "  message without %s: %s\n", field, err.msg);
    T_CHECK(strstr(err.msg, field) != NULL);
    json_decref(n);
}

static void test_check(void)
{
    struct spec s = {.name = "gpu-a001", .rank = 1, .size = 4};
    json_t *n = node_doc(&s);
    struct gv_err err = {0};
    T_EQ_INT(gv_fleet_node_check(n, "x.json", &err), GV_OK);
    json_decref(n);

    n = node_doc(&s);
    json_object_set_new(json_object_get(n, "stack"), "extra", json_string("v"));
    expect_invalid(n, "stack_digest");
    n = node_doc(&s);
    json_object_set_new(n, "rank", json_integer(4));
    expect_invalid(n, "rank");
    n = node_doc(&s);
    json_object_set_new(n, "node", json_string("../etc"));
    expect_invalid(n, "node");
    n = node_doc(&s);
    json_object_set_new(
        json_array_get(json_object_get(json_array_get(json_object_get(n, "runs"), 0), "cases"), 0),
        "output_digest", json_string("zz"));
    expect_invalid(n, "output_digest");
    n = node_doc(&s);
    json_object_set_new(n, "status", json_string("fine"));
    expect_invalid(n, "status");
    n = node_doc(&s);
    json_object_del(json_object_get(n, "hardware"), "model");
    expect_invalid(n, "hardware.model");
    n = node_doc(&s);
    json_object_set_new(n, "schema", json_string("gpuvet.results"));
    expect_invalid(n, "gpuvet.fleet.node");
}

static void test_alike(void)
{
    struct spec s[6];
    char names[6][16];
    alike(s, 6, names);
    json_t *f = compare(s, 6);
    T_EQ_INT(summary(f, "odd"), 0);
    T_EQ_INT(summary(f, "missing"), 0);
    T_EQ_INT(json_array_size(json_object_get(f, "groups")), 1);
    const json_t *g = json_array_get(json_object_get(f, "groups"), 0);
    T_EQ_INT(json_integer_value(json_object_get(g, "stack_nodes")), 6);
    const json_t *c0 = json_array_get(json_object_get(g, "cases"), 0);
    T_EQ_STR(json_string_value(json_object_get(c0, "majority_digest")), dg('a'));
    T_EQ_INT(json_integer_value(json_object_get(c0, "nodes_agreeing")), 6);
    json_decref(f);
}

static void test_drift(void)
{
    struct spec s[6];
    char names[6][16];
    alike(s, 6, names);
    s[2].libver = "0.12.0";
    s[2].digest[0][0] = 'b'; /* another stack gives other bits: not an outlier */
    json_t *f = compare(s, 6);
    T_EQ_INT(summary(f, "odd"), 1);
    T_EQ_INT(summary(f, "stack_drift"), 1);
    T_EQ_INT(summary(f, "numerics_outlier"), 0);
    T_EQ_STR(cls(f, "gpu-a002"), "stack_drift");
    const json_t *diff =
        json_object_get(json_object_get(odd_of(f, "gpu-a002"), "evidence"), "diff");
    T_EQ_INT(json_array_size(diff), 1);
    T_EQ_STR(json_string_value(json_array_get(diff, 0)),
             "libraries.libhipblaslt.so.0: 0.10.0 → 0.12.0");
    json_decref(f);
}

static void test_outlier(void)
{
    struct spec s[8];
    char names[8][16];
    alike(s, 8, names);
    for (int i = 0; i < 8; i++)
        s[i].repeats = 2;
    s[3].digest[1][1] = 'e'; /* case 2, second repeat only */
    json_t *f = compare(s, 8);
    T_EQ_INT(summary(f, "odd"), 1);
    T_EQ_STR(cls(f, "gpu-a003"), "numerics_outlier");
    const json_t *c = json_array_get(
        json_object_get(json_object_get(odd_of(f, "gpu-a003"), "evidence"), "cases"), 0);
    T_EQ_STR(json_string_value(json_object_get(c, "id")), "gemm.f16.b");
    T_EQ_STR(json_string_value(json_object_get(c, "repeats_differing")), "1 of 2");
    T_EQ_STR(json_string_value(json_object_get(c, "digest")), dg('e'));
    T_EQ_STR(json_string_value(json_object_get(c, "majority_digest")), dg('a'));
    T_EQ_INT(json_integer_value(json_object_get(c, "nodes_agreeing")), 8);
    json_decref(f);
}

/* The same stack on another GPU model computes other bits: two groups, no odd node. */
static void test_groups(void)
{
    struct spec s[6];
    char names[6][16];
    alike(s, 6, names);
    for (int i = 3; i < 6; i++) {
        s[i].model = "MI250X";
        s[i].digest[0][0] = 'c';
    }
    json_t *f = compare(s, 6);
    T_EQ_INT(json_array_size(json_object_get(f, "groups")), 2);
    T_EQ_INT(summary(f, "odd"), 0);
    json_decref(f);
}

static void test_split(void)
{
    struct spec s[4];
    char names[4][16];
    alike(s, 4, names);
    s[2].digest[0][0] = s[3].digest[0][0] = 'b';
    json_t *f = compare(s, 4);
    T_EQ_INT(summary(f, "odd"), 0);
    T_EQ_INT(summary(f, "split_cases"), 1);
    const json_t *sp = json_array_get(
        json_object_get(json_array_get(json_object_get(f, "groups"), 0), "split"), 0);
    T_EQ_STR(json_string_value(json_object_get(sp, "id")), "gemm.f32.a");
    T_EQ_INT(json_integer_value(json_object_get(sp, "digests")), 2);
    T_EQ_INT(json_integer_value(json_object_get(sp, "largest")), 2);
    json_decref(f);
}

static void test_nondeterministic(void)
{
    /* not run-to-run identical everywhere: judged by fp64 only, no node odd */
    struct spec s[5];
    char names[5][16];
    alike(s, 5, names);
    for (int i = 0; i < 5; i++) {
        s[i].nondet_case = 3;
        s[i].digest[2][0] = (char)('b' + i);
    }
    json_t *f = compare(s, 5);
    T_EQ_INT(summary(f, "odd"), 0);
    T_EQ_INT(summary(f, "split_cases"), 0);
    json_decref(f);
    /* on one node only, identical on the four others: named, as not identical there */
    alike(s, 5, names);
    s[1].nondet_case = 3;
    s[1].digest[2][0] = 'f';
    f = compare(s, 5);
    T_EQ_STR(cls(f, "gpu-a001"), "numerics_outlier");
    const json_t *c = json_array_get(
        json_object_get(json_object_get(odd_of(f, "gpu-a001"), "evidence"), "cases"), 0);
    T_CHECK(json_is_true(json_object_get(c, "not_run_to_run_identical")));
    T_EQ_INT(json_integer_value(json_object_get(c, "identical_on_nodes")), 4);
    T_CHECK(json_object_get(c, "digest") == NULL); /* never judged by its digest */
    json_decref(f);
}

static void test_missing_cannot(void)
{
    struct spec s[5];
    char names[5][16];
    alike(s, 5, names);
    for (int i = 0; i < 5; i++)
        s[i].size = 7; /* ranks 5 and 6 left no document */
    s[4].cannot = "no GPU \"found\"";
    json_t *f = compare(s, 5);
    T_EQ_INT(summary(f, "missing"), 2);
    T_EQ_INT(json_integer_value(json_array_get(json_object_get(f, "missing"), 0)), 5);
    T_EQ_INT(json_integer_value(json_array_get(json_object_get(f, "missing"), 1)), 6);
    T_EQ_INT(summary(f, "could_not_run"), 1);
    T_EQ_STR(cls(f, "gpu-a004"), "could_not_run");
    T_EQ_INT(summary(f, "odd"), 1);
    json_decref(f);
    /* nodes in any order (an in-memory gather): the same ranks missing */
    struct spec rev[5];
    for (int i = 0; i < 5; i++)
        rev[i] = s[4 - i];
    f = compare(rev, 5);
    T_EQ_INT(summary(f, "missing"), 2);
    T_EQ_INT(json_integer_value(json_array_get(json_object_get(f, "missing"), 0)), 5);
    json_decref(f);
}

static void test_slow(void)
{
    static const double figs[7] = {100, 101, 99, 100.5, 102, 50, 93};
    struct spec s[7];
    char names[7][16];
    alike(s, 7, names);
    for (int i = 0; i < 7; i++)
        s[i].bench = figs[i];
    json_t *f = compare(s, 7);
    T_EQ_INT(summary(f, "odd"), 1);
    T_EQ_STR(cls(f, "gpu-a005"), "slow");
    T_CHECK(odd_of(f, "gpu-a006") == NULL); /* 7% under the median: within 10% */
    const json_t *b = json_array_get(
        json_object_get(json_object_get(odd_of(f, "gpu-a005"), "evidence"), "bench"), 0);
    T_NEAR(json_number_value(json_object_get(b, "group_median")), 100.0, 1e-9);
    json_decref(f);
}

/* ---- the loader ---- */

static void write_doc(const char *dir, const char *name, const json_t *doc)
{
    char path[512];
    snprintf(path, sizeof path, "%s/nodes/%s", dir, name);
    char *s = gv_json_dumps(doc, JSON_COMPACT);
    FILE *fp = fopen(path, "w");
    fputs(s, fp);
    fclose(fp);
    free(s);
}

static int load_dir(const char *dir, json_t **nodes, struct gv_err *err)
{
    const char *paths[1] = {dir};
    char got[512];
    return gv_fleet_load(paths, 1, nodes, got, sizeof got, err);
}

static void test_load(void)
{
    char dir[] = "/tmp/gv-fleet-XXXXXX", sub[600];
    T_CHECK(mkdtemp(dir) != NULL);
    snprintf(sub, sizeof sub, "%s/nodes", dir);
    mkdir(sub, 0700);
    struct spec s[3];
    char names[3][16];
    alike(s, 3, names);
    json_t *a = nodes_of(s, 3);
    write_doc(dir, "gpu-a002.r2.json", json_array_get(a, 2));
    write_doc(dir, "gpu-a000.r0.json", json_array_get(a, 0));
    write_doc(dir, "gpu-a001.r1.json", json_array_get(a, 1));
    json_t *nodes = NULL;
    struct gv_err err = {0};
    T_EQ_INT(load_dir(dir, &nodes, &err), GV_OK);
    T_EQ_INT(json_array_size(nodes), 3);
    T_EQ_INT(json_integer_value(json_object_get(json_array_get(nodes, 2), "rank")), 2);
    /* one stack object shared by equal digests */
    T_CHECK(json_object_get(json_array_get(nodes, 0), "stack") ==
            json_object_get(json_array_get(nodes, 1), "stack"));
    json_decref(nodes);

    /* a name that is not its document's */
    write_doc(dir, "gpu-a009.r1.json", json_array_get(a, 1));
    T_EQ_INT(load_dir(dir, &nodes, &err), GV_E_FORMAT);
    T_CHECK(strstr(err.msg, "gpu-a009.r1.json") != NULL);
    snprintf(sub, sizeof sub, "%s/nodes/gpu-a009.r1.json", dir);
    unlink(sub);
    /* a link is never followed */
    snprintf(sub, sizeof sub, "%s/nodes/gpu-a003.r3.json", dir);
    T_EQ_INT(symlink("/etc/passwd", sub), 0);
    T_EQ_INT(load_dir(dir, &nodes, &err), GV_E_IO);
    T_CHECK(strstr(err.msg, "symbolic link") != NULL);
    unlink(sub);
    /* a bad name */
    write_doc(dir, "x;rm.json", json_array_get(a, 1));
    T_EQ_INT(load_dir(dir, &nodes, &err), GV_E_FORMAT);
    T_CHECK(strstr(err.msg, "NODE.rRANK.json") != NULL);
    snprintf(sub, sizeof sub, "%s/nodes/x;rm.json", dir);
    unlink(sub);
    /* the same rank twice, through named files */
    char p0[600], p1[600];
    snprintf(p0, sizeof p0, "%s/nodes/gpu-a000.r0.json", dir);
    snprintf(p1, sizeof p1, "%s/nodes/gpu-a001.r1.json", dir);
    json_object_set_new(json_array_get(a, 1), "rank", json_integer(0));
    write_doc(dir, "gpu-a001.r1.json", json_array_get(a, 1));
    const char *files[2] = {p0, p1};
    T_EQ_INT(gv_fleet_load(files, 2, &nodes, NULL, 0, &err), GV_E_FORMAT);
    T_CHECK(strstr(err.msg, "rank 0 appears twice") != NULL);
    /* documents of runs of different sizes */
    json_object_set_new(json_array_get(a, 1), "rank", json_integer(1));
    json_object_set_new(json_array_get(a, 1), "size", json_integer(4));
    write_doc(dir, "gpu-a001.r1.json", json_array_get(a, 1));
    T_EQ_INT(gv_fleet_load(files, 2, &nodes, NULL, 0, &err), GV_E_FORMAT);
    T_CHECK(strstr(err.msg, "different runs") != NULL);
    json_decref(a);
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    T_EQ_INT(system(cmd), 0);
}

/* 40 documents: the loader reads them on several threads (where there are
 * several CPUs) and shares equal stacks and case results across them. */
static void test_load_many(void)
{
    char dir[] = "/tmp/gv-fleet-many-XXXXXX", sub[600];
    T_CHECK(mkdtemp(dir) != NULL);
    snprintf(sub, sizeof sub, "%s/nodes", dir);
    mkdir(sub, 0700);
    enum { N = 40 };
    struct spec s[N];
    char names[N][16], file[64];
    alike(s, N, names);
    s[7].digest[0][0] = 'c';
    json_t *a = nodes_of(s, N), *nodes = NULL, *f = NULL;
    for (int i = 0; i < N; i++) {
        snprintf(file, sizeof file, "%s.r%d.json", names[i], i);
        write_doc(dir, file, json_array_get(a, (size_t)i));
    }
    struct gv_err err = {0};
    T_EQ_INT(load_dir(dir, &nodes, &err), GV_OK);
    T_EQ_INT(json_array_size(nodes), N);
    const json_t *c0 = json_object_get(
        json_array_get(json_object_get(json_array_get(nodes, 0), "runs"), 0), "cases");
    const json_t *c9 = json_object_get(
        json_array_get(json_object_get(json_array_get(nodes, 9), "runs"), 0), "cases");
    T_CHECK(json_array_get(c0, 1) == json_array_get(c9, 1)); /* one shared result */
    T_EQ_INT(gv_fleet_compare(nodes, dir, &f, &err), GV_OK);
    T_EQ_INT(summary(f, "odd"), 1);
    T_EQ_STR(cls(f, "gpu-a007"), "numerics_outlier");
    json_decref(f);
    json_decref(nodes);
    json_decref(a);
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    T_EQ_INT(system(cmd), 0);
}

/* ---- saved outputs: elements and bits that differ ---- */

static void write_outputs(const char *dir, const char *node, int rank, const float *v, size_t n)
{
    char path[600];
    snprintf(path, sizeof path, "%s/outputs/%s.r%d.safetensors", dir, node, rank);
    struct gv_st_tensor t = {.name = "gemm.f32.a",
                             .dtype = GV_F32,
                             .ndim = 1,
                             .dims = {(long long)n},
                             .data = v,
                             .nbytes = n * sizeof *v};
    struct gv_err err = {0};
    T_EQ_INT(gv_safetensors_write(path, &t, 1, NULL, &err), GV_OK);
}

static const json_t *first_case(const json_t *f, const char *node)
{
    return json_array_get(json_object_get(json_object_get(odd_of(f, node), "evidence"), "cases"),
                          0);
}

static void test_outputs(void)
{
    char dir[] = "/tmp/gv-fleet-out-XXXXXX", sub[600];
    T_CHECK(mkdtemp(dir) != NULL);
    snprintf(sub, sizeof sub, "%s/outputs", dir);
    mkdir(sub, 0700);
    struct spec s[4];
    char names[4][16];
    alike(s, 4, names);
    s[2].digest[0][0] = 'f';
    json_t *nodes = nodes_of(s, 4), *f = NULL;
    for (int i = 0; i < 4; i++)
        json_object_set_new(json_array_get(nodes, (size_t)i), "outputs", json_string("present"));
    float good[6] = {1, 2, 3, 4, 5, 6}, bad[6] = {1, 2, 3, 4, 5, 6};
    uint32_t u;
    memcpy(&u, &bad[1], 4), u ^= 1u, memcpy(&bad[1], &u, 4);          /* one bit */
    memcpy(&u, &bad[4], 4), u ^= 0x80000003u, memcpy(&bad[4], &u, 4); /* three bits */
    for (int i = 0; i < 4; i++)
        write_outputs(dir, names[i], i, i == 2 ? bad : good, 6);
    struct gv_err err = {0};
    T_EQ_INT(gv_fleet_compare(nodes, dir, &f, &err), GV_OK);
    const json_t *c = first_case(f, "gpu-a002");
    T_EQ_INT(json_integer_value(json_object_get(c, "elements_differing")), 2);
    T_EQ_INT(json_integer_value(json_object_get(c, "max_bits")), 3);
    json_decref(f);
    /* the odd node's outputs a link: not followed, said instead */
    snprintf(sub, sizeof sub, "%s/outputs/gpu-a002.r2.safetensors", dir);
    unlink(sub);
    T_EQ_INT(symlink("/etc/passwd", sub), 0);
    T_EQ_INT(gv_fleet_compare(nodes, dir, &f, &err), GV_OK);
    c = first_case(f, "gpu-a002");
    T_CHECK(json_object_get(c, "elements_differing") == NULL);
    T_CHECK(strstr(json_string_value(json_object_get(c, "outputs_note")), "symbolic link") != NULL);
    json_decref(f);
    json_decref(nodes);
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    T_EQ_INT(system(cmd), 0);
}

/* ---- the reference and the judge ---- */

static const char *judge(const json_t *ref, const struct spec *s, json_t **v)
{
    json_t *n = node_doc(s);
    struct gv_err err = {0};
    *v = NULL;
    T_EQ_INT(gv_fleet_judge(ref, n, v, &err), GV_OK);
    json_decref(n);
    const char *reason = json_string_value(json_object_get(*v, "reason"));
    T_CHECK(reason && strlen(reason) <= 177 && !strpbrk(reason, "\"'\n\r\\"));
    return json_string_value(json_object_get(*v, "decision"));
}

static void test_judge(void)
{
    struct spec s[5];
    char names[5][16];
    alike(s, 5, names);
    s[4].libver = "9.9"; /* a minority: not in the reference */
    json_t *nodes = nodes_of(s, 5), *fleet, *ref, *v;
    struct gv_err err = {0};
    T_EQ_INT(gv_fleet_compare(nodes, "", &fleet, &err), GV_OK);
    T_EQ_INT(gv_fleet_reference(fleet, nodes, &ref, &err), GV_OK);
    T_EQ_STR(json_string_value(json_object_get(ref, "schema")), GV_FLEET_REFERENCE_SCHEMA);
    const json_t *g = json_array_get(json_object_get(ref, "groups"), 0);
    T_EQ_INT(json_integer_value(json_object_get(g, "nodes")), 4);
    T_EQ_STR(json_string_value(json_object_get(
                 json_object_get(json_object_get(g, "cases"), "gemm.f32.a"), "digest")),
             dg('a'));

    struct spec one = {.name = "gpu-z1", .rank = 0, .size = 1};
    T_EQ_STR(judge(ref, &one, &v), "keep");
    json_decref(v);
    one.libver = "0.11.0";
    T_EQ_STR(judge(ref, &one, &v), "drain");
    T_CHECK(strstr(json_string_value(json_object_get(v, "reason")),
                   "stack drift: libraries.libhipblaslt.so.0: 0.10.0 → 0.11.0") != NULL);
    json_decref(v);
    one.libver = NULL;
    one.digest[1][0] = 'd';
    T_EQ_STR(judge(ref, &one, &v), "drain");
    T_CHECK(strstr(json_string_value(json_object_get(v, "reason")), "gemm.f16.b") != NULL);
    json_decref(v);
    one.digest[1][0] = 0;
    one.model = "H100";
    T_EQ_STR(judge(ref, &one, &v), "cannot_assess");
    T_CHECK(strstr(json_string_value(json_object_get(v, "reason")), "no reference for H100") !=
            NULL);
    json_decref(v);
    one.model = NULL;
    char longwhy[400];
    memset(longwhy, 'q', sizeof longwhy - 1);
    longwhy[sizeof longwhy - 1] = 0;
    memcpy(longwhy, "it's \"odd\"", 10);
    one.cannot = longwhy;
    T_EQ_STR(judge(ref, &one, &v), "cannot_assess");
    json_decref(v);

    /* a hostile reference: rejected with its field named */
    json_object_set_new(json_array_get(json_object_get(ref, "groups"), 0), "cases",
                        json_string("x"));
    json_t *n = node_doc(&s[0]);
    T_EQ_INT(gv_fleet_judge(ref, n, &v, &err), GV_E_FORMAT);
    T_CHECK(strstr(err.msg, "cases") != NULL);
    json_decref(n);
    json_decref(ref);
    json_decref(fleet);
    json_decref(nodes);
}

int main(void)
{
    T_RUN(test_names);
    T_RUN(test_stack_digest);
    T_RUN(test_check);
    T_RUN(test_alike);
    T_RUN(test_drift);
    T_RUN(test_outlier);
    T_RUN(test_groups);
    T_RUN(test_split);
    T_RUN(test_nondeterministic);
    T_RUN(test_missing_cannot);
    T_RUN(test_slow);
    T_RUN(test_load);
    T_RUN(test_load_many);
    T_RUN(test_outputs);
    T_RUN(test_judge);
    return t_done();
}
