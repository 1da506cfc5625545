/* gv_coll_bench without the rest of gpuvet, for comparisons with nccl-tests
 * (tests/bench/nccl_tests_ref.sh) on a GPU machine. Prints {"results": [...],
 * "info": {...}} as JSON on stdout.
 *   bench_coll [-b MIN] [-e MAX] [-f FACTOR] [-n ITERS] [-w WARMUP] [-g NGPUS]
 *              [-o OP[,OP...]] [--only PATTERN]
 * Exit: 0 every result ok, 1 some failed or an error, 77 no GPU/NCCL, 2 usage. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/coll.h"

static size_t bytes_arg(const char *s)
{
    char *end;
    double v = strtod(s, &end);
    switch (*end) {
    case 'K': v *= 1024; break;
    case 'M': v *= 1024 * 1024; break;
    case 'G': v *= 1024.0 * 1024 * 1024; break;
    default: break;
    }
    return (size_t)v;
}

static unsigned ops_arg(const char *s)
{
    unsigned m = 0;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", s);
    for (char *t = strtok(buf, ","); t; t = strtok(NULL, ",")) {
        int op = gv_coll_op_from_name(t);
        if (op < 0) {
            fprintf(stderr, "bench_coll: unknown op %s\n", t);
            exit(2);
        }
        m |= 1u << op;
    }
    return m;
}

int main(int argc, char **argv)
{
    struct gv_coll_opts o = {0};
    for (int i = 1; i + 1 < argc; i += 2) {
        const char *a = argv[i], *v = argv[i + 1];
        if (!strcmp(a, "-b")) o.min_bytes = bytes_arg(v);
        else if (!strcmp(a, "-e")) o.max_bytes = bytes_arg(v);
        else if (!strcmp(a, "-f")) o.factor = atoi(v);
        else if (!strcmp(a, "-n")) o.iters = atoi(v);
        else if (!strcmp(a, "-w")) o.warmup = atoi(v);
        else if (!strcmp(a, "-g")) o.ndev = atoi(v);
        else if (!strcmp(a, "-o")) o.ops = ops_arg(v);
        else if (!strcmp(a, "--only")) o.only = v;
        else {
            fprintf(stderr, "bench_coll: unknown option %s\n", a);
            return 2;
        }
    }
    json_t *res = json_array(), *info = NULL;
    struct gv_err err = {0};
    int rc = gv_coll_bench(&o, res, &info, &err);
    json_t *doc = json_pack("{s:O, s:o}", "results", res, "info", info ? info : json_null());
    if (rc)
        json_object_set_new(doc, "error", json_string(err.msg));
    json_dumpf(doc, stdout, JSON_INDENT(1));
    printf("\n");
    json_decref(doc);
    int bad = 0;
    size_t i;
    json_t *r;
    json_array_foreach(res, i, r)
        bad |= strcmp(json_string_value(json_object_get(r, "status")), "ok") != 0;
    json_decref(res);
    if (rc) {
        fprintf(stderr, "bench_coll: %s\n", err.msg);
        return rc == GV_E_NOTFOUND || rc == GV_E_LIB ? 77 : 1;
    }
    return bad;
}
