/* The torch kind: the user's own PyTorch (torch.c, torch_bench.c). Never
 * chosen automatically: opening it starts the user's Python. */
#include <string.h>

#include "base/fs.h"
#include "dev/kind.h"
#include "dev/torch/torch.h"

static const struct gv_probe_route_def probe_routes[] = {
    {"torch.matmul", "", GV_CALL_DEFAULT, "torch.matmul, flags set to the precision asked for",
     NULL},
    {"torch.linear", "", GV_CALL_LINEAR, "torch.nn.functional.linear", "torch.matmul"},
    {"torch.defaults", "", GV_CALL_DEFAULTS, "torch.matmul under PyTorch's own default flags",
     "torch.matmul"},
};

static const struct gv_bench_route bench_routes[] = {{"torch_mm", 0}};

static const enum gv_dtype host_types[] = {GV_F32, GV_F64, GV_BF16};

/* "cpu" or "cpu:0" (torch.c's spec; anything else is a GPU, called cuda
 * also on ROCm builds) */
static int on_host(const char *spec) { return !strcmp(spec, "cpu") || !strcmp(spec, "cpu:0"); }

/* The GPU when the machine has one. */
static const char *default_spec(void)
{
    return gv_exists("/dev/nvidiactl") || gv_exists("/dev/kfd") ? "torch:cuda:0" : "torch:cpu";
}

const struct gv_dev_kind gv_kind_torch = {
    .name = "torch",
    .usage = "torch:cpu, torch:cuda:N",
    .auto_choice = GV_AUTO_NEVER,
    .starts_python = 1,
    .backend = &gv_backend_torch,
    .bench = &gv_bench_torch,
    GV_KIND_ROUTES(probe_routes, bench_routes),
    GV_KIND_HOST_TYPES(host_types),
    .no_collectives = "through PyTorch only GEMMs are measured",
    .on_host = on_host,
    .default_spec = default_spec,
};
