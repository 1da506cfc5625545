/* A fingerprint (`gpuvet probe --json`, schema gpuvet.probe v1) read as
 * block-FMA models (num/mma.h), one per probed GEMM precision of one route:
 * what `--device cpu:emulate=FILE.json[,route=NAME]` computes with. The
 * document is hostile input: size-limited, schema and version checked, every
 * field it uses validated, errors naming the file and the field; nothing in
 * it names code, files or places to write. */
#ifndef GV_DEV_CPU_FPMODEL_H
#define GV_DEV_CPU_FPMODEL_H

#include <jansson.h>
#include <stddef.h>

#include "base/err.h"
#include "num/mma.h"

#define GV_FPMODEL_MAX_BYTES ((size_t)4 << 20)
#define GV_FPMODEL_MAX 16

#define GV_FPMODEL_ORDERS 32

/* The model at one K: the structure the probe fitted there (model.kN), or,
 * in older fingerprints, the block and chunks of its summation tree
 * (order.kN). */
struct gv_fpmodel_order {
    int k;
    struct gv_mma_model m;
};

struct gv_fpmodel_entry {
    char precision[24];
    enum gv_dtype in, compute, out;
    struct gv_mma_model m;       /* from the properties alone (fused_terms) */
    struct gv_fpmodel_order byk[GV_FPMODEL_ORDERS];
    int nbyk;
    char assumed[768]; /* "; "-separated: each default taken and why */
};

struct gv_fpmodel {
    char sha256[65];      /* of the file's bytes */
    char route[64];       /* the route chosen */
    char device_spec[96]; /* the fingerprint's device_spec */
    char device[160];     /* its device.name, "" when absent */
    size_t n;
    struct gv_fpmodel_entry e[GV_FPMODEL_MAX];
    char skipped[512];    /* GEMM precisions of the route not modelled, and why */
};

/* The model of one probed GEMM precision from its "properties" object (the
 * probe's names and values, src/probe/props.c). in/compute/out: the
 * precision's formats. Undetermined properties take a stated default, each
 * written into assumed (may be NULL). where names the object in messages
 * ("FILE: routes[0].precisions[3].properties"). GV_E_FORMAT for a missing
 * or malformed property, GV_E_UNSUPPORTED for formats the model lacks. */
int gv_mma_model_from_props(const json_t *props, enum gv_dtype in, enum gv_dtype compute,
                            enum gv_dtype out, struct gv_mma_model *m, char *assumed,
                            size_t assumed_size, const char *where, struct gv_err *err);

/* Parses a fingerprint document held in memory (what names it in messages),
 * choosing route (NULL: the first route with a probed GEMM precision). */
int gv_fpmodel_parse(const char *data, size_t len, const char *what, const char *route,
                     struct gv_fpmodel *fm, struct gv_err *err);
/* Reads path (at most GV_FPMODEL_MAX_BYTES) and parses it; sha256 filled. */
int gv_fpmodel_load(const char *path, const char *route, struct gv_fpmodel *fm,
                    struct gv_err *err);

/* The model for a GEMM of these formats, NULL when the fingerprint has none. */
const struct gv_fpmodel_entry *gv_fpmodel_find(const struct gv_fpmodel *fm, enum gv_dtype in,
                                               enum gv_dtype compute, enum gv_dtype out);

/* The model for a GEMM of inner dimension k: the one of the probed K nearest
 * k in log2, with 0.75 added where N and k are divisible by different powers
 * of two up to 32 (ties: the smaller N), else e->m. Libraries choose other
 * kernels for other shapes: an approximation, measured by test_emulate_share. */
const struct gv_mma_model *gv_fpmodel_model_for(const struct gv_fpmodel_entry *e, long k);

/* Every parameter of a model, as JSON (for device descriptions). */
json_t *gv_mma_model_json(const struct gv_mma_model *m);
/* The whole emulation: file hash, route, device, models, assumptions. */
json_t *gv_fpmodel_json(const struct gv_fpmodel *fm, const char *file);

#endif
