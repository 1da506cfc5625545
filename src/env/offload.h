/* GPU device code embedded in host ELF files, listed without executing it:
 * AMD clang offload bundles in .hip_fatbin (plain "__CLANG_OFFLOAD_BUNDLE__"
 * and compressed "CCOB" v1/v2/v3, zlib or zstd) and NVIDIA fatbins in
 * .nv_fatbin (rocm-facts.md section 7). */
#ifndef GV_ENV_OFFLOAD_H
#define GV_ENV_OFFLOAD_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"

struct gv_offload_targets {
    char **targets;      /* sorted, unique: "gfx90a", "gfx942", "sm_90", "compute_90" */
    size_t n_targets;
    size_t n_entries;    /* code objects seen (AMD) or fatbin entries (NVIDIA) */
    size_t n_skipped;    /* entries that could not be read (reported, not fatal) */
};

/* Scan a section's bytes. kind: "hip" for .hip_fatbin, "cuda" for .nv_fatbin. */
int gv_offload_scan_hip(const uint8_t *data, size_t size, struct gv_offload_targets *out,
                        struct gv_err *err);
int gv_offload_scan_cuda(const uint8_t *data, size_t size, struct gv_offload_targets *out,
                         struct gv_err *err);
/* Open an ELF file, find .hip_fatbin or .nv_fatbin and scan it.
 * GV_E_NOTFOUND when the file has neither section. *kind is set to "hip" or "cuda". */
int gv_offload_scan_file(const char *path, struct gv_offload_targets *out, const char **kind,
                         struct gv_err *err);
void gv_offload_free(struct gv_offload_targets *t);

/* gfx name of an AMDGPU EF_AMDGPU_MACH value ("gfx90a"), NULL when unknown. */
const char *gv_amdgpu_mach_name(unsigned mach);
/* KFD gfx_target_version (e.g. 90010) to its gfx name ("gfx90a"). */
void gv_gfx_name_from_target_version(unsigned v, char *out, size_t outsz);

#endif
