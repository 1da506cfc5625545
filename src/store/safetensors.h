/* safetensors files (https://github.com/huggingface/safetensors, format
 * section): an 8-byte little-endian header length N, N bytes of JSON header
 * (padded with spaces so the data starts at a multiple of 8), then the data
 * buffer. Header: {"__metadata__": {string: string}, NAME: {"dtype": "F32",
 * "shape": [..], "data_offsets": [begin, end]}, ...}; offsets are relative to
 * the data buffer, which the tensors cover without holes or overlaps. */
#ifndef GV_STORE_SAFETENSORS_H
#define GV_STORE_SAFETENSORS_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "num/types.h"

#define GV_ST_MAX_DIMS 8
#define GV_ST_MAX_HEADER ((uint64_t)100 << 20)

struct gv_st_tensor {
    const char *name;
    enum gv_dtype dtype;
    int ndim;
    long long dims[GV_ST_MAX_DIMS];
    const void *data;
    size_t nbytes;
};

/* "F64", "F32", "F16", "BF16", "F8_E4M3", "F8_E5M2"; NULL for TF32. */
const char *gv_st_dtype_name(enum gv_dtype t);
int gv_st_dtype_from_name(const char *name); /* -1 if unknown or unsupported */

/* Writes tensors t[0..n) atomically. metadata: an object of string values
 * (borrowed, may be NULL). Tensors are laid out by decreasing element size so
 * every tensor is aligned to its element size. */
int gv_safetensors_write(const char *path, const struct gv_st_tensor *t, size_t n,
                         const json_t *metadata, struct gv_err *err);

struct gv_st_file {
    uint8_t *buf;     /* the whole file, owned */
    size_t len;
    json_t *header;
    const json_t *metadata; /* __metadata__ or NULL */
    size_t n;
    struct gv_st_tensor *t; /* names point into header */
};

/* Reads and validates a file (at most max bytes); errors name the file, the
 * tensor and the field. */
int gv_safetensors_read(const char *path, size_t max, struct gv_st_file *f, struct gv_err *err);
/* The same over a buffer the function takes ownership of (freed on error). */
int gv_safetensors_parse(uint8_t *buf, size_t len, const char *what, struct gv_st_file *f,
                         struct gv_err *err);
void gv_safetensors_free(struct gv_st_file *f);
const struct gv_st_tensor *gv_safetensors_find(const struct gv_st_file *f, const char *name);

#endif
