/* GPU device code embedded in host ELF files, listed without executing it:
 * AMD clang offload bundles in .hip_fatbin (plain "__CLANG_OFFLOAD_BUNDLE__"
 * and compressed "CCOB" v1/v2/v3, zlib or zstd) and NVIDIA fatbins in
 * .nv_fatbin (docs/facts/rocm-facts.md §7). */
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
    /* Extensions (env-binary): */
    char **target_ids;   /* sorted, unique full IDs: "gfx90a:xnack-", "gfx1100"; NVIDIA: as targets */
    size_t n_target_ids;
    size_t n_bundles;    /* AMD offload bundles / NVIDIA fatbin containers found */
    size_t n_compressed; /* AMD compressed (CCOB) bundles among them */
    size_t n_mismatch;   /* AMD entries whose ID names another gfx than the code object's
                            e_flags; the e_flags value is reported */
};

/* Limits: beyond them the input is treated as corrupt (GV_E_FORMAT). */
#define GV_OFFLOAD_MAX_DECOMPRESSED (UINT64_C(1) << 30) /* per compressed bundle */
#define GV_OFFLOAD_MAX_ENTRIES 65536                   /* per bundle */
#define GV_OFFLOAD_MAX_ID 4096                         /* bytes of one entry ID */
#define GV_OFFLOAD_MAX_TARGETS 65536                   /* distinct names per scan */
#define GV_OFFLOAD_MAX_RATIO 2048 /* decompressed / compressed bytes of one bundle */

/* Flags for the _ex variants.
 * GV_OFFLOAD_QUICK: for compressed bundles, decompress only the bundle header
 * (entry IDs) instead of the whole bundle: targets come from the IDs, the
 * code objects' e_flags and the decompressed size are not checked. Costs
 * about one compression block (<= 128 KiB of output) per bundle instead of
 * the bundle's full size. */
#define GV_OFFLOAD_QUICK 1u
/* GV_OFFLOAD_MAPPED: data is a read-only file mapping; pages the scan has gone
 * past are dropped from the process's resident set as it goes (never set it
 * for data in ordinary memory: dropped anonymous pages read back as zeros). */
#define GV_OFFLOAD_MAPPED 2u

/* Scan a section's bytes: .hip_fatbin (hip) or .nv_fatbin (cuda). Bundles and
 * containers are found by their magic at 8-byte aligned offsets from the
 * start of data. A malformed bundle/container gives GV_E_FORMAT naming its
 * offset; an empty section gives no targets; bytes without any bundle give
 * GV_E_FORMAT. On error *out is left empty. */
int gv_offload_scan_hip(const uint8_t *data, size_t size, struct gv_offload_targets *out,
                        struct gv_err *err);
int gv_offload_scan_cuda(const uint8_t *data, size_t size, struct gv_offload_targets *out,
                         struct gv_err *err);
/* The device code objects of one plain offload bundle, for a reader that sees
 * a file once, in order (src/image keeps only what a scan reads): head[0..have)
 * are the bundle's first bytes (the magic first, the whole entry table within),
 * room the bytes from the bundle's start to the end of its file. *spans (n of
 * them, host entries left out; free()) are offsets and sizes from the bundle's
 * start; *table_len is where the entry table ends. GV_E_FORMAT when head holds
 * no valid table (a stray magic, or a table longer than have). */
struct gv_offload_span {
    uint64_t offset, size;
};
int gv_offload_bundle_spans(const uint8_t *head, size_t have, uint64_t room,
                            struct gv_offload_span **spans, size_t *n, uint64_t *table_len,
                            struct gv_err *err);

/* Open an ELF file, find .hip_fatbin or .nv_fatbin and scan it.
 * GV_E_NOTFOUND when the file has neither section. *kind is set to "hip" or "cuda".
 * This is the snapshot path and runs in GV_OFFLOAD_QUICK mode: compressed
 * bundles are listed from their entry IDs (tens of ms for a 500 MB library)
 * instead of being decompressed whole (seconds); plain bundles and fatbins
 * are checked fully either way. Use gv_offload_scan_file_ex(path, 0, ...) to
 * verify everything. */
int gv_offload_scan_file(const char *path, struct gv_offload_targets *out, const char **kind,
                         struct gv_err *err);
/* As above with explicit flags: 0 = full check, GV_OFFLOAD_QUICK. A file
 * with both sections gets both scanned, targets merged, and *kind = "hip+cuda". */
int gv_offload_scan_hip_ex(const uint8_t *data, size_t size, unsigned flags,
                           struct gv_offload_targets *out, struct gv_err *err);
int gv_offload_scan_file_ex(const char *path, unsigned flags, struct gv_offload_targets *out,
                            const char **kind, struct gv_err *err);
/* The same for path inside root (gv_root_open: links resolve inside root). */
int gv_offload_scan_rooted(const char *root, const char *path, unsigned flags,
                           struct gv_offload_targets *out, const char **kind, struct gv_err *err);
void gv_offload_free(struct gv_offload_targets *t);

/* gfx name of an AMDGPU EF_AMDGPU_MACH value ("gfx90a"), NULL when unknown. */
const char *gv_amdgpu_mach_name(unsigned mach);
/* KFD gfx_target_version (e.g. 90010) to its gfx name ("gfx90a"). */
void gv_gfx_name_from_target_version(unsigned v, char *out, size_t outsz);

#endif
