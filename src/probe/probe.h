/* gpuvet probe: the numerical fingerprint of every GEMM route a device offers
 * (docs/facts/numerics-methods.md §1-§4, §7), measured through the backend interface
 * (dev/backend.h) with crafted inputs, so that every route is probed by the
 * same code: a route is only a way of opening the device (a BLAS choice, a
 * PyTorch call) and never has probe code of its own.
 *
 * Every property records how it was established: the inputs used and the
 * outputs seen; when two answers disagree the value is "undetermined", when
 * the precision cannot express the probe it is "not applicable". The
 * document has schema "gpuvet.probe", version 1 (docs/probe.md). */
#ifndef GV_PROBE_PROBE_H
#define GV_PROBE_PROBE_H

#include <jansson.h>
#include <stddef.h>

#include "base/err.h"
#include "dev/backend.h"
#include "num/mma.h"

#define GV_PROBE_SCHEMA "gpuvet.probe"
#define GV_PROBE_SCHEMA_VERSION 1

/* ---------- routes ---------- */

/* One way of opening a device for GEMM: the device spec, the GEMM library
 * (the value of $GPUVET_BLAS while the device is opened: "classic", "lt",
 * "kernel", or "" to leave it alone) and, for torch:, the PyTorch call. */
struct gv_probe_route {
    char name[32];     /* "cublas", "cublaslt", "kernel", "cpu", "torch.matmul" */
    char device[200];  /* "cuda:0", "cpu:emulate=tf32" */
    char blas[16];
    enum gv_call call;
    char what[160];    /* one line for people */
    char sums_on[32];  /* "": this route runs the row sums; else the route that does */
};

/* The routes of a --device value (NULL: cpu). Returns the count (<= max). */
size_t gv_probe_routes(const char *device, struct gv_probe_route *out, size_t max);

/* ---------- precisions ---------- */

struct gv_probe_prec {
    const char *name; /* "f32", "tf32", "f16", "f16.out16", "f16acc16", ... */
    const char *op;   /* "gemm" or "sum" */
    enum gv_dtype in, compute, out;
    const char *what;
};
/* All precisions probed, GEMMs first, then the reductions. */
const struct gv_probe_prec *gv_probe_precs(size_t *n);

/* ---------- running ---------- */

struct gv_probe_opts {
    const char *device;   /* --device (NULL: cpu) */
    const char *route;    /* only this route name (NULL: all) */
    const char *dtype;    /* only precisions whose name starts with this (NULL: all) */
    const char *fit_k;    /* --fit-k: "K,K,..." or "none" (NULL: the default grid) */
};

/* The inner dimensions model.kN is fitted at (fit.c). */
#define GV_PROBE_FIT_MAX 32
struct gv_probe_fit_ks {
    int n;                    /* 0: none */
    int k[GV_PROBE_FIT_MAX];  /* largest first */
};

/* The model a fit of a GEMM precision starts from: its properties' model
 * (gv_mma_model_from_props), keeping the measured extra bits where the block
 * is unknown; *bound when extra_bits is only a lower bound (">=N"). -1 for
 * formats the model lacks. */
int gv_probe_fit_base(const json_t *props, enum gv_dtype in, enum gv_dtype compute,
                      enum gv_dtype out, struct gv_mma_model *base, int *bound);

/* --fit-k's text (NULL: the default grid, 1 to 4096) as a list; GV_E_USAGE
 * naming what is wrong. */
int gv_probe_fit_parse(const char *s, struct gv_probe_fit_ks *out, struct gv_err *err);

/* Probes every route and precision: the fingerprint document (new reference).
 * A route that cannot be opened is recorded with the reason and the others
 * still run; GV_E_USAGE for a bad --device or an unknown --route. */
int gv_probe_run(const struct gv_probe_opts *o, json_t **doc, struct gv_err *err);

/* One opened route, every precision (or those matching dtype): the "precisions"
 * array of the document (new reference). sums: 0 leaves out the row sums (the
 * route does not run them). */
json_t *gv_probe_device(const struct gv_backend *be, struct gv_device *dev, enum gv_call call,
                        const char *dtype, int sums, const struct gv_probe_fit_ks *fit);

/* ---------- accumulation order (FPRev, docs/facts/numerics-methods.md §3) ---------- */

/* Answers queries L(i, j) for pairs of leaves among n: the number of leaves in
 * the smallest subtree of the summation tree holding both. len is the
 * number of pairs; L[q] receives the answer for (qi[q], qj[q]), or -1 when the
 * output could not be read as a count. */
typedef int (*gv_swamp_fn)(void *ctx, int n, int len, const int *qi, const int *qj, int *L,
                           struct gv_err *err);

struct gv_tree_node {
    int leaf;      /* leaf index, or -1 for an inner node */
    int nchild;
    int *child;    /* node indices, sorted by their smallest leaf */
    int size;      /* leaves below */
    int lo;        /* smallest leaf below */
};

struct gv_tree {
    int n;                      /* leaves; nodes 0..n-1 are the leaves */
    int nnodes, cap;
    struct gv_tree_node *nodes;
    int root;
    int queries, rounds;        /* pairs asked, batches of pairs */
    char bad[256];              /* why the answers were not a tree; "" when they were */
};

/* Recovers the tree (FPRev's pivot recursion, one batch of queries per level).
 * Returns 0 with t->bad set when the answers are inconsistent; an error only
 * when fn fails. */
int gv_tree_recover(int n, gv_swamp_fn fn, void *ctx, struct gv_tree *t, struct gv_err *err);
void gv_tree_free(struct gv_tree *t);
/* "sequential", "pairwise", "chunks of 256 (sequential), then sequential" ... */
void gv_tree_summary(const struct gv_tree *t, char *out, size_t n);
/* Canonical nested form, "((0 1) 2)"; truncated with "..." past n bytes. */
void gv_tree_canon(const struct gv_tree *t, char *out, size_t n);
/* The most products one rounding adds (the block of a block FMA; 1 for
 * binary additions): the leaves of a node that joins them to a partial sum,
 * or all the leaves of a first node of more than two (a block that started
 * from zero: ((0 1 .. 15) 16 .. 31) and (0 1 .. 15) are both 16). */
int gv_tree_max_fused(const struct gv_tree *t);
/* sha256 of the canonical form (full, never truncated). */
void gv_tree_hash(const struct gv_tree *t, char hex[65]);

/* ---------- reading fingerprints ---------- */

struct gv_fp_prop {
    char name[40];
    char value[160];
    int runs, differing; /* "deterministic": runs made, runs unlike the first; -1: not given */
};

struct gv_fp_entry {
    char route[32];
    char op[8];
    char precision[24];
    char status[16];   /* "probed", "unsupported", "error" */
    size_t nprops;
    struct gv_fp_prop *props;
};

struct gv_fingerprint {
    char device[200];
    size_t n;
    struct gv_fp_entry *e;
};

/* Validates a fingerprint document (schema, version, every field read);
 * errors name what (the file) and the field. */
int gv_fp_from_json(const json_t *doc, const char *what, struct gv_fingerprint *fp,
                    struct gv_err *err);
int gv_fp_parse(const char *data, size_t len, const char *what, struct gv_fingerprint *fp,
                struct gv_err *err);
void gv_fp_free(struct gv_fingerprint *fp);
const char *gv_fp_value(const struct gv_fp_entry *e, const char *prop);

/* A property that differs between two fingerprints, for one route and precision. */
struct gv_fp_change {
    char route[32];
    char op[8];
    char precision[24];
    char prop[40];
    char before[160], after[160];
    char text[400]; /* "fp32 GEMM on cublas: inputs now rounded to 10 mantissa bits (was 23)" */
};

/* Every property of the same route, op and precision whose value differs.
 * *out is malloc'ed (free it); returns the count. */
/* Fisher's exact test (two-sided) of k1 differing of n1 against k2 of n2: a
 * "deterministic" that changes is reported only below GV_FP_DET_ALPHA. */
#define GV_FP_DET_ALPHA 0.01
double gv_fp_det_p(int n1, int k1, int n2, int k2);

size_t gv_fp_diff(const struct gv_fingerprint *a, const struct gv_fingerprint *b,
                  struct gv_fp_change **out);

#endif
