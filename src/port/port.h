/* Porting CUDA code to ROCm (issue 37, docs/port.md): what will break before
 * it runs. Two halves, built side by side:
 *  - the source scan (scan.c, lex.c, rules_*.c here; facts in src/kb/port_*.c):
 *    the user's CUDA/HIP/C++ and Python files, each finding with file, line,
 *    column, rule id, what goes wrong on AMD GPUs and why, and the change;
 *  - compiled extensions and the compile check (ext.c, hipcc.c): extension
 *    modules in Python environments of a root with the GPU code they carry,
 *    against the targets; the user's HIP sources compiled by a real hipcc.
 * Nothing here prints; every function fills a struct gv_err. Findings are
 * JSON objects of one shape (gv_port_finding below), so both halves report
 * through the same output code in src/cli. */
#ifndef GV_PORT_PORT_H
#define GV_PORT_PORT_H

#include <jansson.h>
#include <stddef.h>

#include "base/err.h"

/* The GPU targets a scan judges against ("gfx942", "gfx1100", "sm_90"):
 * from --target, else the GPUs present, else every wavefront size. */
struct gv_port_targets {
    char (*names)[32];
    size_t n;
    int any_wave64; /* some target runs 64-lane wavefronts (CDNA, GCN) */
    int any_wave32; /* some target runs 32-lane wavefronts (RDNA) or warps */
};

/* The targets of a scan or check: spec ("gfx942,gfx1100", from --target),
 * else the AMD GPUs of root ("/": this machine) by their KFD gfx target,
 * else one target of each wavefront size (gfx942 and gfx1100); *how says
 * which ("--target", "GPUs present", "no AMD GPU found: both wavefront
 * sizes"). An unknown name is GV_E_USAGE naming it. Free with
 * gv_port_targets_free. */
int gv_port_targets_resolve(const char *spec, const char *root, struct gv_port_targets *t,
                            const char **how, struct gv_err *err);
void gv_port_targets_free(struct gv_port_targets *t);
/* The targets of t with 64-lane wavefronts (wave64 1) or AMD targets of any
 * wavefront size (wave64 0), as a new JSON array of strings. */
json_t *gv_port_targets_json(const struct gv_port_targets *t, int wave64);

/* One finding: {"file", "line", "column", "rule", "severity": "error"|"warning"|"note",
 * "message" (what goes wrong on AMD GPUs), "why" (the fact, with "source"),
 * "fix" (the concrete change), "targets" (the targets it applies to, when not all),
 * "snippet" (the source line, trimmed, at most 200 bytes)}. */
json_t *gv_port_finding(const char *file, long line, long column, const char *rule,
                        const char *severity, const char *message, const char *why,
                        const char *source, const char *fix);

/* Source scan: the files under each path (a directory is walked without
 * following links; only source files by extension: .cu .cuh .hip .cpp .cc .cxx .c .h .hpp
 * .py), findings appended to *findings (an array), counts in *stats
 * ({"files", "bytes", "lines", "findings", "skipped_count", "skipped": [{"path",
 * "reason"}] for links, files over 8 MiB, binary and unreadable files (at most
 * 1000 listed), "paths": every file scanned}). */
int gv_port_scan(const char *const *paths, size_t n, const struct gv_port_targets *t,
                 json_t *findings, json_t *stats, struct gv_err *err);

/* Compiled extensions: every Python extension module (*.so under site-packages /
 * dist-packages) in root ("/" for this machine) with the GPU code it carries
 * (CUDA fatbins, HIP offload bundles and their targets), judged against t;
 * findings appended as for gv_port_scan. */
int gv_port_extensions(const char *root, const struct gv_port_targets *t, json_t *findings,
                       json_t *stats, struct gv_err *err);

/* The compile check: each HIP source under paths compiled by the hipcc found in
 * root (never a compiler named by a scanned file) for each target, with
 * --offload-arch and -fsyntax-only or -c into a private temp dir; each compiler
 * error a finding (rule "compile"), next to the scan rule that explains it
 * when one matches the same line. */
int gv_port_compile(const char *root, const char *const *paths, size_t n,
                    const struct gv_port_targets *t, json_t *findings, json_t *stats,
                    struct gv_err *err);

#endif
