/* The cpu kind: gpuvet's reference loops (cpu.c), OpenBLAS for bench
 * (cpu_bench.c). Never chosen before a GPU; used when none opens. */
#include "dev/kind.h"

static const struct gv_probe_route_def probe_routes[] = {
    {"cpu", "", GV_CALL_DEFAULT, "gpuvet's CPU reference loops", NULL},
};

static const struct gv_bench_route bench_routes[] = {{"openblas", 0}};

static const enum gv_dtype host_types[] = {GV_F32, GV_F64};

static int on_host(const char *spec)
{
    (void)spec;
    return 1;
}

const struct gv_dev_kind gv_kind_cpu = {
    .name = "cpu",
    .usage = "cpu",
    .auto_choice = GV_AUTO_FALLBACK,
    .backend = &gv_backend_cpu,
    .bench = &gv_bench_cpu,
    GV_KIND_ROUTES(probe_routes, bench_routes),
    GV_KIND_HOST_TYPES(host_types),
    .bench_parts = GV_BENCH_MEMORY,
    .no_collectives = "no GPU: the CPU backend",
    .on_host = on_host,
};
