/* Capture, comparison and bisection of a user's model (docs/capture.md).
 *
 *   gv_capture_run     the model run once in a PyTorch worker, every ATen op
 *                      streamed into a .gvcap file
 *   gv_capture_compare two captures aligned op by op, the difference of B from
 *                      A per op in units of the op's format
 *   gv_capture_bisect  A's ops replayed one by one in environment B on A's
 *                      recorded inputs, with a float64 referee; the model run in
 *                      B too; culprits told apart from ops that only inherited */
#ifndef GV_CAPTURE_CAPTURE_H
#define GV_CAPTURE_CAPTURE_H

#include <jansson.h>
#include <stdint.h>

#include "base/err.h"
#include "capture/gvcap.h"
#include "dev/backend.h"

struct gv_capture_opts {
    const char *model;      /* path/to/file.py:function, or a .pt2 program */
    int seed;
    uint64_t max_bytes;     /* 0: keep every tensor */
    const char *out;        /* the .gvcap to write */
    json_t *snapshot;       /* embedded (borrowed), may be NULL */
    const char *file;       /* the model file's contents, sent to the worker (so */
    size_t file_len;        /* it need not see the file: a root filesystem) */
    const char *file_sha256;
    const struct gv_cap *load; /* NULL, or a capture whose parameters, buffers and
                                  inputs the model takes (bisect's run in B) */
};

/* Captures with an opened torch device. *summary (owned) is the index's header:
 * ops, tensors, budget, timing, memory, CPU fallback, non-deterministic ops and
 * RNG use. A model that fails gives GV_E_FORMAT naming its file and line; the
 * output file is then not written (nor touched). */
int gv_capture_run(const struct gv_backend *be, struct gv_device *dev,
                   const struct gv_capture_opts *o, json_t **summary, struct gv_err *err);

/* Units of roundoff beyond which B's output of an op "differs beyond noise"
 * from A's: the normwise relative difference over 2^-(p-3) for a format of p
 * significand bits (8 u). */
#define GV_CAP_NOISE_UNITS 8.0

/* The comparison document (schema gpuvet.capture-compare). Fails when the two
 * captures are not of the same model and inputs (parameter and input digests). */
int gv_capture_compare(const struct gv_cap *a, const struct gv_cap *b, json_t **doc,
                       struct gv_err *err);

/* The alignment of B's ops to A's: m[i] is the op of b that op i of a
 * corresponds to (same operator, module and input shapes and dtypes, in
 * order: a longest common subsequence), or -1. malloc'ed; NULL when out of
 * memory. */
long *gv_capture_align(const struct gv_cap *a, const struct gv_cap *b);

/* Beyond this many ops, bisect walks the module tree first (by_module < 0). */
#define GV_CAP_BISECT_MODULES_ABOVE 2000

/* Replays A's ops in the environment of dev (a torch device opened there),
 * and (when b is not NULL) uses that environment's own capture of the model to
 * find calls that changed above ATen. by_module: 0 every op on its own; 1 each
 * module's stretch of ops first, as one chain judged at its boundary, opened
 * into its children (down to single ops) only when it is not identical or
 * equally accurate; -1 the second beyond GV_CAP_BISECT_MODULES_ABOVE ops. The
 * document: schema gpuvet.bisect. */
int gv_capture_bisect(const struct gv_cap *a, const struct gv_cap *b, struct gv_device *dev,
                      int by_module, json_t **doc, struct gv_err *err);

#endif
