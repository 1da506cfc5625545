/* The cuda kind: the numerics behind a worker process (gpu_proxy.c, cuda.c),
 * cuBLAS/cuBLASLt and gpuvet's kernels for bench (cuda_bench.c). */
#include "dev/kind.h"

static const struct gv_probe_route_def probe_routes[] = {
    {"cublas", "classic", GV_CALL_DEFAULT, "cuBLAS (cublasGemmEx family)", "kernel"},
    {"cublaslt", "lt", GV_CALL_DEFAULT, "cuBLASLt (cublasLtMatmul)", "kernel"},
    {"kernel", "kernel", GV_CALL_DEFAULT, "gpuvet's NVRTC kernel gv_gemm_f32", NULL},
};

/* no fp8 in cublasGemmEx: the Lt row says what fp8 does */
static const struct gv_bench_route bench_routes[] = {{"cublaslt", 0}, {"cublas", 1}};

const struct gv_dev_kind gv_kind_cuda = {
    .name = "cuda",
    .usage = "cuda:N",
    .auto_choice = GV_AUTO_GPU,
    .framework_compat = 1,
    .backend = &gv_backend_cuda,
    .bench = &gv_bench_cuda,
    GV_KIND_ROUTES(probe_routes, bench_routes),
    .bench_parts = GV_BENCH_MEMORY | GV_BENCH_RUNTIME,
};
