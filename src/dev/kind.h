/* A device kind (cpu, cuda, hip, torch): one record that says everything the
 * rooms above dev need to know about it, so that nothing above compares device
 * names. Each kind's record lives in its subfolder (src/dev/cuda/kind.c ...);
 * src/dev/registry.c lists them (the one list) and parses --device (the one
 * parser). To add a kind: its folder with its backends and kind.c, and its
 * line in registry.c. */
#ifndef GV_DEV_KIND_H
#define GV_DEV_KIND_H

#include <stddef.h>

#include "base/err.h"
#include "dev/backend.h"
#include "dev/bench_dev.h"
#include "num/types.h"

/* One GEMM route gpuvet probe measures: the library chosen ($GPUVET_BLAS
 * while the device is opened: "classic", "lt", "kernel", or "" to leave it
 * alone) or the PyTorch call (src/probe/probe.h). */
struct gv_probe_route_def {
    const char *name; /* "cublas", "torch.matmul", "cpu" */
    const char *blas;
    enum gv_call call;
    const char *what; /* one line for people */
    /* NULL: the route runs the probe's row sums itself. Else the route that
     * does: the sums never go through this route's library, so probing them
     * here again measures the same kernel twice (and a second, noisy copy of
     * one property is no fingerprint). */
    const char *sums_on;
};

/* One GEMM route gpuvet bench times (the name the bench backend's prepare
 * takes as gv_bw_spec.route). */
struct gv_bench_route {
    const char *name; /* "cublaslt", "openblas", "torch_mm" */
    int no_fp8;       /* the library has no fp8 GEMM (the Lt route says what fp8 does) */
};

/* How a kind takes part in the choice made when no --device is given. */
enum gv_kind_auto {
    GV_AUTO_NEVER,    /* only when asked for (torch: it starts the user's Python) */
    GV_AUTO_GPU,      /* tried in the list's order, first that opens is used */
    GV_AUTO_FALLBACK, /* used when no GPU kind opens (cpu) */
};

/* What gpuvet bench measures beyond the GEMMs. */
enum gv_kind_bench_parts {
    GV_BENCH_MEMORY = 1u << 0,  /* the STREAM kernels */
    GV_BENCH_RUNTIME = 1u << 1, /* the runtime's copies (d2d, h2d, d2h), launches, peers */
};

struct gv_dev_kind {
    const char *name;  /* before the ':' in --device */
    const char *usage; /* its specs as usage text and errors say them: "cuda:N" */
    enum gv_kind_auto auto_choice;
    int starts_python; /* opening it starts the user's Python (--python goes with it) */
    int amd;           /* an AMD GPU: its last-level cache is the Infinity Cache */
    /* check says whether the installed PyTorch builds can run on it (its
     * description has a compute capability; the snapshot is needed early) */
    int framework_compat;
    const struct gv_backend *backend;     /* the numerics (check, probe, torch) */
    const struct gv_bench_backend *bench; /* gpuvet bench */
    const struct gv_probe_route_def *probe_routes;
    size_t n_probe_routes;
    /* GEMM routes for bench; the first is the one of the fp16/bf16 verdict */
    const struct gv_bench_route *bench_routes;
    size_t n_bench_routes;
    /* GEMM precisions bench measures when the device is the host's CPU */
    const enum gv_dtype *host_types;
    size_t n_host_types;
    unsigned bench_parts; /* enum gv_kind_bench_parts */
    /* why bench measures no collectives on it; NULL: they are measured */
    const char *no_collectives;
    /* Whether the device of spec (what follows "name:") is the host's CPU. */
    int (*on_host)(const char *spec);
    /* The spec to use when the user names none (NULL: the automatic choice). */
    const char *(*default_spec)(void);
};

/* A kind record's tables with their counts (in kind.c's initializers). */
#define GV_KIND_COUNT(a) (sizeof(a) / sizeof((a)[0]))
#define GV_KIND_ROUTES(probe, bench)                                                         \
    .probe_routes = (probe), .n_probe_routes = GV_KIND_COUNT(probe), .bench_routes = (bench), \
    .n_bench_routes = GV_KIND_COUNT(bench)
#define GV_KIND_HOST_TYPES(types) .host_types = (types), .n_host_types = GV_KIND_COUNT(types)

extern const struct gv_dev_kind gv_kind_cpu, gv_kind_cuda, gv_kind_hip, gv_kind_torch;

/* Every kind compiled in, in the order of the automatic choice. */
const struct gv_dev_kind *const *gv_dev_kinds(size_t *n);
const struct gv_dev_kind *gv_dev_kind_find(const char *name);
/* The kind a --device value names (the part before the first ':'); NULL for
 * NULL or a kind gpuvet does not know. */
const struct gv_dev_kind *gv_dev_kind_of(const char *spec);
/* Whether the device of a --device value is the host's CPU (NULL, unknown: 0). */
int gv_dev_spec_on_host(const char *spec);
/* Whether opening a --device value starts the user's Python (NULL, unknown: 0). */
int gv_dev_spec_starts_python(const char *spec);

/* Opens a bench device from a --device value, chosen as gv_device_open
 * chooses (backend.h): NULL spec is the first GPU kind that opens, else the
 * CPU, and note says which and why. */
int gv_bench_device_open(const char *spec, const struct gv_dev_kind **kind, struct gv_bdev **d,
                         char *note, size_t notesz, struct gv_err *err);

#endif
