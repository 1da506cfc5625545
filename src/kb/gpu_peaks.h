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
    double llc_mb;       /* a last-level cache beyond the L2 the runtime reports (AMD's
                          * Infinity Cache), MB (1e6 bytes); 0: none known */
    const char *source;
};

/* The entry for a device name, or NULL. */
const struct kb_gpu_peak *kb_gpu_peak_find(const char *device_name);
/* Bytes of cache a benchmark's operands must outgrow on this device: the
 * larger of the runtime's L2 figure (l2_bytes, 0 when not reported: 64 MiB
 * assumed) and the entry's last-level cache; on an AMD device without an
 * entry, the largest Infinity Cache known here (an unknown Instinct may have
 * one). */
double kb_gpu_cache_bytes(const struct kb_gpu_peak *p, double l2_bytes, int amd);
/* tflops for dtype, NaN when unknown. */
double kb_gpu_peak_tflops(const struct kb_gpu_peak *p, enum gv_dtype t);

#endif
