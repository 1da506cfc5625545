/* The hip kind: the numerics behind a worker process (gpu_proxy.c, hip.c),
 * rocBLAS/hipBLASLt and gpuvet's kernels for bench (hip_bench.c). */
#include "dev/kind.h"

static const struct gv_probe_route_def probe_routes[] = {
    {"rocblas", "classic", GV_CALL_DEFAULT, "rocBLAS (rocblas_gemm_ex)", "kernel"},
    {"hipblaslt", "lt", GV_CALL_DEFAULT, "hipBLASLt (hipblasLtMatmul)", "kernel"},
    {"kernel", "kernel", GV_CALL_DEFAULT, "gpuvet's hipRTC kernel gv_gemm_f32", NULL},
};

/* no fp8 in rocblas_gemm_ex: the Lt row says what fp8 does */
static const struct gv_bench_route bench_routes[] = {{"hipblaslt", 0}, {"rocblas", 1}};

const struct gv_dev_kind gv_kind_hip = {
    .name = "hip",
    .usage = "hip:N",
    .auto_choice = GV_AUTO_GPU,
    .amd = 1,
    .backend = &gv_backend_hip,
    .bench = &gv_bench_hip,
    GV_KIND_ROUTES(probe_routes, bench_routes),
    .bench_parts = GV_BENCH_MEMORY | GV_BENCH_RUNTIME,
    .no_collectives = "RCCL collectives are not measured on HIP yet",
};
