/* The capture file (.gvcap): every ATen operation of one forward pass of a
 * user's model, with its inputs' and outputs' tensors, streamed to disk as the
 * model runs (docs/capture.md).
 *
 * Layout (little-endian):
 *   "GVCAP01\n"                      8 bytes
 *   tensor data, back to back        each tensor's raw bytes (C-contiguous), at
 *                                    8-byte aligned offsets
 *   the index                        one JSON document (schema gpuvet.capture)
 *   u64 offset of the index, u64 its length, "GVCAPEND"   24-byte trailer
 * The index describes the run (header), every tensor {id, dtype, shape, nbytes,
 * sha256, offset or null when the byte budget was spent, stats, role} and every
 * op {i, name, module, args (tensors as {"$t": id}), outputs, device, seconds}.
 * A file is written to a temporary name and renamed when complete, so a crash
 * never leaves a truncated capture under the name asked for, and a file
 * without the trailer is refused as incomplete. */
#ifndef GV_CAPTURE_GVCAP_H
#define GV_CAPTURE_GVCAP_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "num/types.h"

#define GV_CAP_SCHEMA "gpuvet.capture"
#define GV_CAP_SCHEMA_VERSION 1
#define GV_CAP_MAX_DIMS 8
#define GV_CAP_MAX_INDEX ((uint64_t)1 << 30)

/* Element size of a torch dtype name ("float32", "int64", "bool", ...); 0 if
 * unknown. *num: the gv format its values decode with, -1 when not floating. */
size_t gv_cap_dtype_size(const char *dtype, int *num);

/* Whether name is an operator a capture can record and a replay may look up:
 * NAMESPACE.NAME.OVERLOAD (str() of a torch OpOverload: "aten.convolution.default"),
 * each part [A-Za-z_][A-Za-z0-9_]* of at most 128 bytes, no part of the form __x__
 * except the NAME of ATen's operator methods (__and__, __lshift__, ...). Anything else
 * in a capture is "not an operator" and never replayed; python/gpuvet_capture_load.py
 * (op_of) applies the same grammar before it looks anything up. */
int gv_cap_op_name_ok(const char *name);

/* ---------- writing ---------- */

struct gv_cap_writer {
    char path[4096], tmp[4200];
    int fd;
    uint64_t off;          /* next write offset */
    uint64_t budget;       /* bytes of tensor data to keep; UINT64_MAX: all */
    uint64_t stored, seen; /* tensor bytes written / received */
    int64_t over_budget_at; /* first tensor id not stored, -1 */
    json_t *tensors, *ops;
};

/* Creates PATH.tmp.XXXXXX next to path. max_bytes 0: no limit. */
int gv_cap_create(struct gv_cap_writer *w, const char *path, uint64_t max_bytes,
                  struct gv_err *err);
/* Adds a tensor: computes its sha256 and (floating dtypes) stats, writes the
 * bytes while the budget lasts. meta (role, device ...) is merged into its
 * entry (borrowed). *id receives its id (0, 1, ... in order). */
int gv_cap_add_tensor(struct gv_cap_writer *w, const char *dtype, const int64_t *shape, int ndim,
                      const void *data, size_t nbytes, const json_t *meta, int64_t *id,
                      struct gv_err *err);
/* Adds an op record (the writer takes the reference). */
void gv_cap_add_op(struct gv_cap_writer *w, json_t *op);
/* Writes the index (header borrowed: everything about the run), the trailer,
 * fsyncs and renames to the final path. */
int gv_cap_finish(struct gv_cap_writer *w, const json_t *header, struct gv_err *err);
/* Removes the temporary file (after an error). */
void gv_cap_abort(struct gv_cap_writer *w);

/* ---------- reading ---------- */

struct gv_cap {
    char path[4096];
    int fd;
    uint64_t size;
    json_t *index;        /* the whole index */
    const json_t *header, *tensors, *ops; /* borrowed from index */
};

/* Validates an index document against a file of file_size bytes whose data
 * ends at data_end: schema and version, every tensor's dtype, shape, nbytes,
 * offset within the data, every op's name and tensor references. The fuzzed
 * part of the reader. */
int gv_cap_check_index(const json_t *index, uint64_t data_end, const char *what,
                       struct gv_err *err);
/* Parses the trailer of the last 24 bytes of a file of size bytes: the
 * index's offset and length (checked against size). */
int gv_cap_parse_trailer(const uint8_t trailer[24], uint64_t size, uint64_t *index_off,
                         uint64_t *index_len, const char *what, struct gv_err *err);
int gv_cap_open(const char *path, struct gv_cap *c, struct gv_err *err);
void gv_cap_close(struct gv_cap *c);
/* Whether path is a regular file that starts with the capture magic. */
int gv_cap_is_capture(const char *path);
/* A gpuvet document from path: a capture's index (the whole file verified as
 * gv_cap_open does), else the JSON document (at most json_max bytes). */
int gv_cap_load_document(const char *path, size_t json_max, json_t **doc, struct gv_err *err);
/* The tensor entry of id, or NULL. */
const json_t *gv_cap_tensor(const struct gv_cap *c, int64_t id);
/* Reads every stored tensor and checks its sha256 (a corrupt capture is refused
 * with the tensor and the op that made it named). */
int gv_cap_verify(const struct gv_cap *c, struct gv_err *err);
/* Reads a stored tensor's bytes (malloc'ed, *n bytes) and verifies its sha256.
 * GV_E_NOTFOUND when it was not stored (the byte budget). */
int gv_cap_read(const struct gv_cap *c, int64_t id, void **data, size_t *n, struct gv_err *err);

#endif
