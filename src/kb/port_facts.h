/* Facts for porting CUDA code to ROCm (gpuvet port, docs/port.md): the
 * wavefront size of each GPU target, the CUDA API names and libraries with
 * their HIP counterparts (or none), and the fact behind each scan rule, each
 * with its source. Nothing here prints. */
#ifndef GV_KB_PORT_FACTS_H
#define GV_KB_PORT_FACTS_H

#include <stddef.h>

/* Lanes per wavefront (warp) the target runs HIP code with by default: 64 for
 * GCN and CDNA (gfx9: gfx900 ... gfx950), 32 for RDNA (gfx10, gfx11, gfx12)
 * and for NVIDIA (sm_XY, compute_XY); 0 when the name is no known target.
 * A "gfx9..." or "gfx1..." name the GPU table lacks is judged by its family. */
int gv_port_wave_size(const char *target);
/* The source of gv_port_wave_size's answer. */
extern const char gv_port_wave_source[];

/* One CUDA name (a function, type or header) with its HIP counterpart. */
struct gv_port_api {
    const char *cuda;   /* "cudaMalloc", "cublas" (prefix), "cublas_v2.h" (header) */
    int prefix;         /* 1: every identifier starting with cuda matches */
    int header;         /* 1: an #include name */
    const char *hip;    /* the HIP name or library; NULL: no counterpart */
    const char *note;   /* what changes besides the name */
    const char *source;
};
/* The entry for an identifier or header name (exact entries before prefixes,
 * the longest prefix first); NULL when the table has none. */
const struct gv_port_api *gv_port_api_find(const char *name, size_t n, int header);
const struct gv_port_api *gv_port_apis(size_t *n);

/* The fact behind a scan rule: why it goes wrong on AMD GPUs, and where
 * that is written. */
struct gv_port_fact {
    const char *rule;
    const char *why;
    const char *source;
};
const struct gv_port_fact *gv_port_fact_find(const char *rule);
const struct gv_port_fact *gv_port_facts(size_t *n);

#endif
