/* Dense peak throughput and memory bandwidth of known GPUs, with sources, for
 * gpuvet bench's "ratio to peak". Unknown parts and precisions are NaN, never
 * guessed (and never derived from bus width times clock). */
#ifndef GV_KB_GPU_PEAKS_H
#define GV_KB_GPU_PEAKS_H

#include "num/types.h"

struct kb_gpu_peak {
    const char *match;   /* substring of the device name, e.g. "H200" */
    const char *part;    /* "NVIDIA H200 SXM" */
    double tflops[GV_DTYPE_COUNT]; /* dense TFLOP/s by input precision; NaN unknown */
    double hbm_tbps;     /* TB/s (1e12 bytes/s) */
    const char *source;
};

/* The entry for a device name, or NULL. */
const struct kb_gpu_peak *kb_gpu_peak_find(const char *device_name);
/* tflops for dtype, NaN when unknown. */
double kb_gpu_peak_tflops(const struct kb_gpu_peak *p, enum gv_dtype t);

#endif
