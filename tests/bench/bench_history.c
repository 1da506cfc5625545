/* Benchmark: the history database (issue 14's targets).
 *   bench_history record DB RESULT.json [N]   recording a result file N times
 *        (each a distinct document, each its own transaction, as --record does):
 *        median and worst milliseconds per recording (target < 50 ms on SQLite)
 *   bench_history fill DB RUNS MACHINES        a database of RUNS judged runs
 *        from MACHINES machines, over a few dozen stacks, in one transaction
 *        through gv_history_record (the recording code itself)
 *   bench_history matrix DB [N]                gv_history_matrix N times: median
 *        and worst seconds (target < 1 s over 100,000 runs)
 * Built with the tests, run by tests/bench/bench_history.sh; not part of CTest. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/json.h"
#include "store/history.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static int die(const struct gv_err *err)
{
    fprintf(stderr, "bench_history: %s\n", err->msg);
    return 1;
}

static int bench_record(const char *db, const char *file, int n)
{
    struct gv_err err = {0};
    json_t *doc = NULL;
    if (gv_json_read_file(file, (size_t)1 << 30, &doc, &err))
        return die(&err);
    struct gv_history *h = NULL;
    if (gv_history_open(db, 1, &h, &err))
        return die(&err);
    struct gv_history_ident id;
    gv_history_this_machine(&id);
    double *t = calloc((size_t)n, sizeof *t);
    for (int i = 0; i < n; i++) {
        char note[64];
        snprintf(note, sizeof note, "bench %d %ld", i, (long)time(NULL));
        json_object_set_new(json_object_get(doc, "device"), "note", json_string(note));
        int64_t run;
        int is_new;
        double t0 = now();
        if (gv_history_record(h, doc, file, &id, &run, &is_new, &err))
            return die(&err);
        t[i] = now() - t0;
    }
    qsort(t, (size_t)n, sizeof *t, cmp);
    size_t cases = json_array_size(json_object_get(doc, "cases"));
    char *s = gv_json_dumps(doc, JSON_COMPACT);
    printf("record: %s (%zu cases, %zu bytes of JSON) into %s (%s): median %.1f ms, worst %.1f "
           "ms over %d recordings (target < 50 ms)\n", file, cases, s ? strlen(s) : 0,
           gv_history_name(h), gv_history_backend(h), 1e3 * t[n / 2], 1e3 * t[n - 1], n);
    free(s);
    free(t);
    gv_history_close(h);
    json_decref(doc);
    return 0;
}

/* A small judged document of machine m at time i, on one of a few dozen
 * stacks (each machine upgrades its stack twice over the period). */
static json_t *synthetic(int i, int m, int runs)
{
    static const char *const gpus[] = {"AMD Instinct MI300X", "AMD Instinct MI250X",
                                       "NVIDIA H200", "NVIDIA H100 80GB HBM3",
                                       "AMD Radeon PRO W7900"};
    static const char *const arch[] = {"gfx942", "gfx90a", "sm_90", "sm_90", "gfx1100"};
    static const char *const kernels[] = {"6.5.0-35-generic", "6.8.0-40-generic",
                                          "5.15.0-105-generic"};
    static const char *const rocm[] = {"6.0.0", "6.2.4", "6.4.1"};
    static const char *const cuda[] = {"12.4.1", "12.8.0", "13.0.1"};
    static const char *const torch[] = {"2.3.0", "2.5.1", "2.7.0"};
    int g = m % 5, phase = (int)((long)i * 3 / runs); /* 0, 1, 2: two upgrades */
    int amd = arch[g][0] == 'g';
    long sec = 1700000000L + (long)i * 600;
    time_t tt = (time_t)sec;
    struct tm tm;
    gmtime_r(&tt, &tm);
    char created[32];
    strftime(created, sizeof created, "%Y-%m-%dT%H:%M:%SZ", &tm);
    char tv[64];
    snprintf(tv, sizeof tv, "%s+%s", torch[phase], amd ? "rocm6.0" : "cu124");
    json_t *snap = json_pack("{s:s,s:i,s:s,s:{s:{s:s}},s:{s:[{s:s,s:s,s:s,s:b}]},"
                             "s:{s:[{s:s,s:{s:s,s:s}}]}}",
                             "schema", "gpuvet.snapshot", "schema_version", 1, "created", created,
                             "host", "kernel", "release", kernels[(m / 5 + phase) % 3],
                             "stacks", "installs", "kind", amd ? "rocm" : "cuda", "layout",
                             amd ? "amd" : "toolkit", "version",
                             amd ? rocm[phase] : cuda[phase], "is_default", 1,
                             "python", "environments", "prefix", "/usr", "torch", "version", tv,
                             "build", amd ? "rocm" : "cuda");
    int fail = (i * 7 + m) % 11 == 0;
    json_t *cases = json_pack("[{s:s,s:s,s:s,s:{s:f}}]", "id", "gemm.f16acc32.128x128x128.normal.s1",
                              "compute_dtype", "f32", "out_dtype", "f16", "metrics",
                              "effective_bits", fail ? 6.5 : 10.0 + (i % 7) * 0.1);
    json_t *doc = json_pack("{s:s,s:i,s:s,s:s,s:s,s:{s:s,s:{s:s,s:s}},s:{s:i,s:i,s:i,s:i,s:i},"
                            "s:o,s:o}",
                            "schema", "gpuvet.results", "schema_version", 1, "gpuvet_version",
                            "0.1.0", "created", created, "suite", "standard", "device", "spec",
                            amd ? "hip:0" : "cuda:0", "description", "name", gpus[g], "arch",
                            arch[g], "summary", "cases", 111, "pass", fail ? 110 : 111, "fail",
                            fail, "error", 0, "skipped", 0, "cases", cases, "snapshot", snap);
    return doc;
}

static int bench_fill(const char *db, int runs, int machines)
{
    struct gv_err err = {0};
    struct gv_history *h = NULL;
    if (gv_history_open(db, 1, &h, &err))
        return die(&err);
    double t0 = now();
    if (gv_history_begin(h, &err))
        return die(&err);
    for (int i = 0; i < runs; i++) {
        int m = (int)(((long)i * 7919) % machines);
        struct gv_history_ident id = {{0}, {0}};
        snprintf(id.hostname, sizeof id.hostname, "node%04d", m);
        snprintf(id.machine_id, sizeof id.machine_id, "%032x", m + 1);
        json_t *doc = synthetic(i, m, runs);
        int64_t run;
        int is_new;
        int rc = gv_history_record(h, doc, NULL, &id, &run, &is_new, &err);
        json_decref(doc);
        if (rc)
            return die(&err);
    }
    if (gv_history_commit(h, &err))
        return die(&err);
    printf("fill: %d runs from %d machines into %s (%s) in %.1f s (one transaction)\n", runs,
           machines, gv_history_name(h), gv_history_backend(h), now() - t0);
    gv_history_close(h);
    return 0;
}

static int bench_matrix(const char *db, int n)
{
    struct gv_err err = {0};
    struct gv_history *h = NULL;
    if (gv_history_open(db, 0, &h, &err))
        return die(&err);
    double *t = calloc((size_t)n, sizeof *t);
    size_t rows = 0;
    long long runs = 0;
    for (int i = 0; i < n; i++) {
        json_t *doc = NULL;
        struct gv_history_filter f = {0};
        double t0 = now();
        if (gv_history_matrix(h, &f, &doc, &err))
            return die(&err);
        t[i] = now() - t0;
        const json_t *rs = json_object_get(doc, "rows"), *r;
        size_t k;
        rows = json_array_size(rs);
        runs = 0;
        json_array_foreach(rs, k, r) runs += json_integer_value(json_object_get(r, "runs"));
        json_decref(doc);
    }
    qsort(t, (size_t)n, sizeof *t, cmp);
    printf("matrix: %lld runs in %zu rows of %s (%s): median %.3f s, worst %.3f s over %d "
           "(target < 1 s)\n", runs, rows, gv_history_name(h), gv_history_backend(h), t[n / 2],
           t[n - 1], n);
    free(t);
    gv_history_close(h);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc >= 4 && !strcmp(argv[1], "record"))
        return bench_record(argv[2], argv[3], argc > 4 ? atoi(argv[4]) : 20);
    if (argc == 5 && !strcmp(argv[1], "fill"))
        return bench_fill(argv[2], atoi(argv[3]), atoi(argv[4]));
    if (argc >= 3 && !strcmp(argv[1], "matrix"))
        return bench_matrix(argv[2], argc > 3 ? atoi(argv[3]) : 5);
    fprintf(stderr, "usage: bench_history record DB RESULT.json [N] | fill DB RUNS MACHINES | "
                    "matrix DB [N]\n");
    return 2;
}
