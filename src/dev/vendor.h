/* Vendor GPU libraries opened at run time (docs/architecture.md, src/dev).
 *
 * Each library has one symbol list, an X-macro in src/dev/syms/syms_<lib>.h:
 *
 *   X(REQ|OPT, field, return type, (parameters), "exported name", "older alias", ...)
 *
 * The list expands to a struct of function pointers (struct gv_api_<lib>) and to
 * a table read by one generic loader (vendor.c), which tries every candidate
 * file newest first, resolves the names in order (the first exported one wins)
 * and records which file was loaded, what was tried and why each try failed.
 * No SDK header is needed: the types and enum values used are declared in the
 * syms_*.h files with a note saying where each value comes from. */
#ifndef GV_DEV_VENDOR_H
#define GV_DEV_VENDOR_H

#include <jansson.h>
#include <stddef.h>

#include "base/err.h"

#define REQ 1
#define OPT 0

#include "dev/syms/syms_cublas.h"
#include "dev/syms/syms_cublaslt.h"
#include "dev/syms/syms_cuda.h"
#include "dev/syms/syms_cudnn.h"
#include "dev/syms/syms_hip.h"
#include "dev/syms/syms_hipblaslt.h"
#include "dev/syms/syms_hiprtc.h"
#include "dev/syms/syms_miopen.h"
#include "dev/syms/syms_nccl.h"
#include "dev/syms/syms_nvml.h"
#include "dev/syms/syms_nvrtc.h"
#include "dev/syms/syms_rccl.h"
#include "dev/syms/syms_rocblas.h"

#define GV_SYM_FIELD(req, field, ret, params, ...) ret(*field) params;
struct gv_api_cuda { GV_SYMS_CUDA(GV_SYM_FIELD) };
struct gv_api_nvrtc { GV_SYMS_NVRTC(GV_SYM_FIELD) };
struct gv_api_cublas { GV_SYMS_CUBLAS(GV_SYM_FIELD) };
struct gv_api_cublaslt { GV_SYMS_CUBLASLT(GV_SYM_FIELD) };
struct gv_api_cudnn { GV_SYMS_CUDNN(GV_SYM_FIELD) };
struct gv_api_hip { GV_SYMS_HIP(GV_SYM_FIELD) };
struct gv_api_hiprtc { GV_SYMS_HIPRTC(GV_SYM_FIELD) };
struct gv_api_rocblas { GV_SYMS_ROCBLAS(GV_SYM_FIELD) };
struct gv_api_hipblaslt { GV_SYMS_HIPBLASLT(GV_SYM_FIELD) };
struct gv_api_miopen { GV_SYMS_MIOPEN(GV_SYM_FIELD) };
/* NCCL's and RCCL's lists (syms_nccl.h, syms_rccl.h) fill one struct: the same C API */
struct gv_api_nccl { GV_SYMS_NCCL(GV_SYM_FIELD) };
struct gv_api_nvml { GV_SYMS_NVML(GV_SYM_FIELD) };
#undef GV_SYM_FIELD

enum gv_lib_id {
    GV_LIB_CUDA = 0,
    GV_LIB_NVRTC,
    GV_LIB_CUBLAS,
    GV_LIB_CUBLASLT,
    GV_LIB_CUDNN,
    GV_LIB_HIP,
    GV_LIB_HIPRTC,
    GV_LIB_ROCBLAS,
    GV_LIB_HIPBLASLT,
    GV_LIB_MIOPEN,
    GV_LIB_NCCL,
    GV_LIB_RCCL, /* table: struct gv_api_nccl */
    GV_LIB_NVML,
    GV_LIB_COUNT
};

/* One opened library. table points at the matching struct gv_api_<lib>. */
struct gv_vlib {
    enum gv_lib_id id;
    void *handle;
    void *table;
    char path[4096];    /* the file actually mapped (from the link map, symlinks resolved) */
    char how[32];       /* "lib-path", "system", "toolkit", "wheel", "dependency" */
    char tried[4096];   /* "candidate: dlerror; ..." for every failed try */
    char version[128];  /* filled by the backend from the library's own API */
    int stub;           /* the CUDA toolkit's link-time stub libcuda (see cuda.c) */
};

/* Where to look. NULL / 0 fields take the defaults:
 *   lib_path: --lib-path (gv_vendor_set_lib_path) else $GPUVET_LIB_PATH, colon-separated;
 *   GPUVET_LIB_NO_SYSTEM=1 (meant for tests) turns the system loader, toolkit
 *   directories and wheel copies off, so only lib_path is searched. */
void gv_vendor_set_lib_path(const char *dirs);
const char *gv_vendor_lib_path(void);

const char *gv_vendor_lib_name(enum gv_lib_id id); /* "libcuda", "nvrtc", ... */

/* Opens library id (all candidates, newest first, in search order) and resolves
 * its symbol list into table (a struct gv_api_<lib>, zeroed first). GV_E_LIB with
 * a message naming every file tried, or the missing required symbol and file. */
int gv_vlib_open(enum gv_lib_id id, struct gv_vlib *lib, void *table, struct gv_err *err);
/* Same, but only the given file (used for a library that lives inside another
 * one, e.g. hipRTC inside libamdhip64.so.5). */
int gv_vlib_open_file(enum gv_lib_id id, const char *file, struct gv_vlib *lib, void *table,
                      struct gv_err *err);
void gv_vlib_close(struct gv_vlib *lib);

/* {"name", "path", "found_by", "version", "tried"} or {"name", "error"}. */
json_t *gv_vlib_describe(const struct gv_vlib *lib, const char *error);

#endif
