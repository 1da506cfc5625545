/* The collective benchmark on real NVIDIA GPUs through the real NCCL (skipped,
 * 77, without a GPU, its driver or NCCL): a small sweep of every op passes its
 * exact check at every timed iteration with a positive bandwidth (busbw for 2
 * or more GPUs; algbw for one, where busbw is 0 by nccl-tests' formula except
 * for broadcast); --only selects by id; NCCL_NVLS_ENABLE=0 is in force and
 * recorded; one wrong element after one timed collective
 * (GPUVET_TEST_COLL_CORRUPT=1) fails every result, naming the iteration; with 2
 * or more GPUs, a collective left waiting for its peers
 * (GPUVET_TEST_COLL_HANG=1) ends as GV_E_TIMEOUT, not a hang.
 * GV_COLL_JSON=FILE also writes the first run's results and info there. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/coll.h"
#include "t.h"

static int nranks;

static const char *str(json_t *o, const char *k) { return json_string_value(json_object_get(o, k)); }
static double num(json_t *o, const char *k) { return json_number_value(json_object_get(o, k)); }

static void print_results(json_t *res)
{
    size_t i;
    json_t *r;
    json_array_foreach(res, i, r) {
        json_t *p = json_object_get(r, "params");
        fprintf(stderr, "  %-36s %-6s bytes %10.0f time %9.2f us algbw %8.2f busbw %8.2f "
                "spread %.3f %s\n", str(r, "id"), str(r, "status"), num(p, "bytes"),
                num(p, "time_us"), num(p, "algbw_gbps"), num(p, "busbw_gbps"), num(r, "spread"),
                str(r, "reason") ? str(r, "reason") : "");
    }
}

static int run(const struct gv_coll_opts *o, json_t **res, json_t **info, struct gv_err *err)
{
    *res = json_array();
    *info = NULL;
    gv_err_clear(err);
    return gv_coll_bench(o, *res, info, err);
}

static void sweep_passes(json_t *res, json_t *info)
{
    nranks = (int)json_integer_value(json_object_get(info, "nranks"));
    fprintf(stderr, "  NCCL %s, %d GPUs, %s\n", str(info, "version"), nranks,
            str(json_object_get(info, "library"), "path"));
    /* 8 B .. 4 MiB by 4: 11 sizes; all-gather, reduce-scatter and all-to-all
     * skip sizes below 16 bytes per rank */
    T_CHECK(json_array_size(res) >= 5 * 6);
    int seen[GV_COLL_NOPS] = {0};
    size_t i;
    json_t *r;
    json_array_foreach(res, i, r) {
        json_t *p = json_object_get(r, "params"), *ck = json_object_get(r, "check");
        int op = gv_coll_op_from_name(str(p, "op"));
        T_CHECK(op >= 0);
        if (op >= 0)
            seen[op]++;
        T_EQ_STR(str(r, "status"), "ok");
        T_EQ_STR(str(r, "group"), "collective");
        T_EQ_STR(str(r, "unit"), "GB/s");
        T_CHECK(json_is_true(json_object_get(ck, "ok")));
        T_EQ_INT(json_integer_value(json_object_get(ck, "mismatches")), 0);
        T_EQ_INT(json_array_size(json_object_get(r, "samples")), 10);
        T_CHECK(num(p, "algbw_gbps") > 0);
        T_CHECK(num(p, "time_us") > 0);
        if (nranks > 1 || op == GV_COLL_BROADCAST) {
            T_CHECK(num(r, "value") > 0 && num(p, "busbw_gbps") > 0);
            T_EQ_STR(str(p, "value_is"), "busbw");
        } else { /* one GPU: busbw is 0 by definition, the value is the algorithm bandwidth */
            T_CHECK(num(p, "busbw_gbps") == 0);
            T_CHECK(strncmp(str(p, "value_is"), "algbw", 5) == 0);
            T_CHECK(num(r, "value") > 0 &&
                    fabs(num(r, "value") - num(p, "algbw_gbps")) < 0.05 * num(p, "algbw_gbps"));
        }
        T_CHECK(strncmp(str(r, "impl"), "NCCL 2.", 7) == 0);
    }
    for (int op = 0; op < GV_COLL_NOPS; op++)
        T_CHECK(seen[op] >= 6);
    json_t *env = json_object_get(info, "env");
    T_EQ_STR(str(env, "NCCL_NVLS_ENABLE"), "0");
    T_EQ_INT(json_array_size(json_object_get(info, "devices")), nranks);
}

static void sweep(void)
{
    struct gv_coll_opts o = {.min_bytes = 8, .max_bytes = 4 << 20, .factor = 4, .iters = 10,
                             .warmup = 2};
    json_t *res, *info;
    struct gv_err err = {0};
    int rc = run(&o, &res, &info, &err);
    if (rc == GV_E_NOTFOUND || rc == GV_E_LIB) {
        printf("skipped: %s\n", err.msg);
        exit(77);
    }
    if (rc)
        fprintf(stderr, "  %s\n", err.msg);
    T_EQ_INT(rc, GV_OK);
    print_results(res);
    sweep_passes(res, info);
    const char *out = getenv("GV_COLL_JSON");
    if (out && *out) {
        json_t *doc = json_pack("{s:O, s:O}", "results", res, "info", info);
        json_dump_file(doc, out, JSON_INDENT(1));
        json_decref(doc);
    }
    json_decref(res);
    json_decref(info);
}

static void only(void)
{
    struct gv_coll_opts o = {.min_bytes = 1024, .max_bytes = 1 << 20, .factor = 32, .iters = 3,
                             .only = "coll.all_reduce.*,coll.broadcast.f32.1024B"};
    json_t *res, *info;
    struct gv_err err = {0};
    T_EQ_INT(run(&o, &res, &info, &err), GV_OK);
    /* 1 KiB, 32 KiB, 1 MiB of all_reduce and 1 KiB of broadcast */
    T_EQ_INT(json_array_size(res), 4);
    T_EQ_STR(str(json_array_get(res, 3), "id"), "coll.broadcast.f32.1024B");
    T_EQ_STR(str(json_array_get(res, 2), "id"), "coll.all_reduce.f32.1048576B");
    json_decref(res);
    json_decref(info);
}

static void corrupt(void)
{
    setenv("GPUVET_TEST_COLL_CORRUPT", "1", 1);
    struct gv_coll_opts o = {.min_bytes = 4096, .max_bytes = 1 << 20, .factor = 16, .iters = 6};
    json_t *res, *info;
    struct gv_err err = {0};
    T_EQ_INT(run(&o, &res, &info, &err), GV_OK);
    print_results(res);
    T_EQ_INT(json_array_size(res), 5 * 3);
    size_t i;
    json_t *r;
    json_array_foreach(res, i, r) {
        json_t *ck = json_object_get(r, "check");
        T_EQ_STR(str(r, "status"), "failed");
        T_CHECK(json_is_false(json_object_get(ck, "ok")));
        T_EQ_INT(json_integer_value(json_object_get(ck, "mismatches")), 1);
        json_t *its = json_object_get(ck, "failed_iterations");
        T_EQ_INT(json_array_size(its), 1);
        T_EQ_INT(json_integer_value(json_array_get(its, 0)), 3); /* iters / 2 */
        T_CHECK(json_object_get(r, "value") == NULL); /* a wrong result has no score */
        T_CHECK(str(r, "reason") && strstr(str(r, "reason"), "iteration 3"));
    }
    unsetenv("GPUVET_TEST_COLL_CORRUPT");
    json_decref(res);
    json_decref(info);
}

static void hang(void)
{
    if (nranks < 2) {
        fprintf(stderr, "  one GPU: a collective cannot wait for a peer; not run\n");
        return;
    }
    setenv("GPUVET_TEST_COLL_HANG", "1", 1);
    setenv("GPUVET_CASE_TIMEOUT", "5", 1);
    struct gv_coll_opts o = {.min_bytes = 1 << 20, .max_bytes = 1 << 20, .iters = 2,
                             .ops = 1u << GV_COLL_ALL_REDUCE};
    json_t *res, *info;
    struct gv_err err = {0};
    T_EQ_INT(run(&o, &res, &info, &err), GV_E_TIMEOUT);
    fprintf(stderr, "  message: %s\n", err.msg);
    T_CHECK(strstr(err.msg, "ncclCommAbort") != NULL);
    T_EQ_INT(json_array_size(res), 1);
    T_EQ_STR(str(json_array_get(res, 0), "status"), "error");
    unsetenv("GPUVET_TEST_COLL_HANG");
    unsetenv("GPUVET_CASE_TIMEOUT");
    json_decref(res);
    json_decref(info);
}

int main(void)
{
    T_RUN(sweep);
    T_RUN(only);
    T_RUN(corrupt);
    T_RUN(hang); /* last: the aborted GPUs' resources are left to the process exit */
    fprintf(stderr, "%d checks, %d failed\n", t_checks, t_failed);
    return t_failed ? 1 : 0;
}
