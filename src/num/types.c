#include "num/types.h"

#include <string.h>

static const char *const dtype_names[GV_DTYPE_COUNT] = {"f64",  "f32",    "tf32",  "f16",
                                                        "bf16", "f8e4m3", "f8e5m2"};
static const size_t dtype_sizes[GV_DTYPE_COUNT] = {8, 4, 4, 2, 2, 1, 1};
static const char *const call_names[GV_CALL_COUNT] = {"",          "linear", "defaults", "flash",
                                                      "efficient", "math",   "cudnn"};
static const char *const unary_names[GV_UN_COUNT] = {"none", "exp",  "log",     "tanh", "erf",
                                                     "gelu", "silu", "sigmoid", "rsqrt"};
static const char *const dist_names[GV_DIST_COUNT] = {"normal",    "uniform", "wide",
                                                      "subnormal", "cancel",  "positive"};

const char *gv_dtype_name(enum gv_dtype t)
{
    return (unsigned)t < GV_DTYPE_COUNT ? dtype_names[t] : "?";
}

int gv_dtype_from_name(const char *name)
{
    for (int i = 0; i < GV_DTYPE_COUNT; i++)
        if (strcmp(dtype_names[i], name) == 0)
            return i;
    return -1;
}

size_t gv_dtype_size(enum gv_dtype t)
{
    return (unsigned)t < GV_DTYPE_COUNT ? dtype_sizes[t] : 0;
}

const char *gv_unary_name(enum gv_unary u)
{
    return (unsigned)u < GV_UN_COUNT ? unary_names[u] : "?";
}

const char *gv_dist_name(enum gv_dist d)
{
    return (unsigned)d < GV_DIST_COUNT ? dist_names[d] : "?";
}

const char *gv_call_name(enum gv_call c)
{
    return (unsigned)c < GV_CALL_COUNT ? call_names[c] : "?";
}
