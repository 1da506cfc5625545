/* Differences between two snapshots (docs/snapshot-schema.md), grouped by
 * layer and ranked by consequence. The result is a gpuvet.diff document
 * (docs/diff-schema.md); src/cli/diff_out.c prints it. */
#ifndef GV_ENV_DIFF_H
#define GV_ENV_DIFF_H

#include <jansson.h>

#include "base/err.h"

#define GV_DIFF_SCHEMA "gpuvet.diff"
#define GV_DIFF_SCHEMA_VERSION 1

/* Layers, most consequential first; the value is the change's "rank". */
enum gv_diff_layer {
    GV_LAYER_DRIVER = 1,    /* kernel modules, dkms packages */
    GV_LAYER_RUNTIME = 2,   /* HIP/HSA/comgr/hiprtc, CUDA driver/runtime; installs; mixed sets */
    GV_LAYER_MATH = 3,      /* BLAS, DNN, FFT, ... and RCCL/NCCL */
    GV_LAYER_FRAMEWORK = 4, /* Python environments, torch builds and their pip packages */
    GV_LAYER_LOADER = 5,    /* loader paths and resolution, environment, /opt/rocm link */
    GV_LAYER_PACKAGES = 6,  /* every package (GPU ones first) and GPU tool libraries */
};

/* The layer's name in the document ("driver", "runtime", ...); NULL if out of range. */
const char *gv_diff_layer_name(int layer);
/* A heading for people ("kernel driver", ...). */
const char *gv_diff_layer_title(int layer);

/* Compare Debian package versions (epoch:upstream-revision) like dpkg does:
 * <0, 0, >0. Also orders rpm-style strings sensibly. */
int gv_deb_vercmp(const char *a, const char *b);

/* Compare snapshot a (before) with b (after), both already validated by
 * gv_snapshot_load. *out receives a gpuvet.diff document:
 *   {schema, schema_version, before:{file,created,root}, after:{...},
 *    changes:[{layer, rank, kind, subject, before, after, detail?}],
 *    not_comparable:[{section, before, after, reason}], summary:{...}}
 * a_name/b_name are the file names recorded in before/after.file. */
int gv_diff_snapshots(const json_t *a, const json_t *b, const char *a_name, const char *b_name,
                      json_t **out, struct gv_err *err);

#endif
