/* The run half of the fleet (docs/fleet.md): this node's document from a tier
 * of the suite, the gather (MPI opened at run time, or the shared directory)
 * and the gate's decision for one node. fleet.h holds the shared contract;
 * this is what src/cli/cmd_fleet.c calls. Nothing here prints. */
#ifndef GV_FLEET_FLEET_RUN_H
#define GV_FLEET_FLEET_RUN_H

#include <jansson.h>
#include <stddef.h>

#include "base/err.h"
#include "check/runner.h"
#include "fleet/fleet.h"
#include "store/safetensors.h"

/* ---- launcher.c ---- */

/* name mapped to a valid node name (fleet.h, gv_fleet_node_name_ok): kept when
 * it is one; else every byte outside [A-Za-z0-9._-] becomes '_', the result is
 * cut to 55 bytes and "-" plus the first 8 hex digits of SHA-256(name) is
 * appended, so two different invalid names stay different. 1 when it mapped. */
int gv_fleet_node_name_map(const char *name, char out[GV_FLEET_NODE_NAME_MAX + 1]);

/* ---- run.c ---- */

enum gv_fleet_tier { GV_TIER_STANDARD, GV_TIER_PROLOG, GV_TIER_DRAIN, GV_TIER_BURNIN };

/* -1 when name is no tier. */
int gv_fleet_tier_from_name(const char *name);
const char *gv_fleet_tier_name(enum gv_fleet_tier t);
/* The tier's budget in seconds (docs/fleet.md, "Tiers and budgets"); 0: none. */
double gv_fleet_tier_budget(enum gv_fleet_tier t);

/* The bench of one run (--bench), filled in by src/cli (the fleet room does not
 * reach src/bench): a short GEMM bench on device (a --device spec, NULL: as
 * the check chose), sized for budget seconds (0: no budget). *figures is
 * [{"id", "unit", "median", "spread"}] (docs/fleet.md, the node document).
 * GV_OK with an empty array when nothing could be measured; a status and err
 * when it could not run at all. */
typedef int (*gv_fleet_bench_fn)(const char *device, double budget, json_t **figures,
                                 struct gv_err *err);

struct gv_fleet_run_opts {
    enum gv_fleet_tier tier;
    const char *device;  /* --device (NULL: the first GPU found, else the CPU) */
    const char *only;    /* --only PATTERN within the tier's suite (NULL: all of it) */
    int repeat;          /* --repeat K (0: the tier's: 3 for drain, else 1) */
    double hot_seconds;  /* --hot: the suite's GEMMs back to back this long first */
    int bench;           /* --bench: GEMM bench figures per run */
    double budget;       /* seconds (0: the tier's budget); a tier that would
                          * overrun stops with status could_not_run, reason budget */
    int keep_outputs;    /* keep the last run's output tensors (for --dir) */
    gv_progress_fn progress; /* the runner's progress callback (NULL: none) */
    void *progress_ud;
    gv_fleet_bench_fn bench_fn; /* what --bench runs (NULL: bench_error says so) */
};

/* What a run leaves beside its document: the last run's outputs. */
struct gv_fleet_outputs {
    size_t n;
    struct gv_st_tensor *t; /* names are the catalog's case ids; data owned */
};
void gv_fleet_outputs_free(struct gv_fleet_outputs *o);

/* This node's document (docs/fleet.md, "The node document"): always one,
 * with status could_not_run and its reason when the device could not be
 * opened, no case could run or the budget ran out. GV_OK unless it could not
 * be built at all (out of memory). outs may be NULL. */
int gv_fleet_run_node(const struct gv_fleet_run_opts *o, const struct gv_fleet_rank *r,
                      json_t **node, struct gv_fleet_outputs *outs, struct gv_err *err);

/* The stack summary of a snapshot document: the libraries (name, soname,
 * version, sha256, path), the packages (count and digests, the GPU ones by
 * name and version), the Python environments with torch, the loader's search
 * directories and resolutions, the allowlisted environment. Nothing of the
 * host name, times or process ids. New reference. */
json_t *gv_fleet_stack_summary(const json_t *snapshot);

/* ---- gather.c ---- */

/* DIR/nodes and DIR/outputs, made when absent. */
int gv_fleet_dir_prepare(const char *dir, struct gv_err *err);
/* DIR/nodes/NODE.rRANK.json, atomically; the name from the validated node
 * name and rank of r, never from the document. */
int gv_fleet_dir_write_node(const char *dir, const char *node, int rank, const json_t *doc,
                            struct gv_err *err);
/* DIR/outputs/NODE.rRANK.safetensors, atomically. */
int gv_fleet_dir_write_outputs(const char *dir, const char *node, int rank,
                               const struct gv_fleet_outputs *o, struct gv_err *err);

/* How the documents travel: GV_GATHER_MPI when the launcher is Open MPI and
 * GPUVET_FLEET_GATHER is not "dir", else GV_GATHER_DIR. */
enum gv_fleet_gather { GV_GATHER_DIR, GV_GATHER_MPI };
enum gv_fleet_gather gv_fleet_gather_mode(const struct gv_fleet_rank *r);

/* ---- mpi.c ---- */

/* MPI opened at run time ($GPUVET_LIBMPI, else libmpi.so.40: Open MPI),
 * MPI_Init, and the rank and size MPI gives, which must equal r's. */
int gv_fleet_mpi_init(const struct gv_fleet_rank *r, struct gv_err *err);
/* Every rank's bytes to rank 0: on rank 0 *all is an array of size strings
 * (rank order; a rank that sent nothing: ""), elsewhere NULL. Collective. */
int gv_fleet_mpi_gather(const char *bytes, size_t len, json_t **all, struct gv_err *err);
void gv_fleet_mpi_finalize(void);

/* ---- gate.c ---- */

struct gv_fleet_gate_in {
    const json_t *node;      /* this node's document (gv_fleet_run_node) */
    const json_t *reference; /* --reference (NULL: none) */
    const json_t *good;      /* --history: this machine's last passing run (NULL: none) */
    const char *good_what;   /* how to name it: "run 12 of 2026-12-01T..." */
};

/* {"decision": "keep"|"drain"|"cannot_assess", "reason": "...", "findings": [...]}:
 * the node's own verdicts (a failing case drains), the reference (gv_fleet_judge),
 * the last good run (a case's output digest changed on the same stack drains);
 * reason at most 200 bytes, no newline, no quote. */
int gv_fleet_gate(const struct gv_fleet_gate_in *in, json_t **verdict, struct gv_err *err);
/* Exit status of a decision: keep 0, drain 1, cannot_assess 2. */
int gv_fleet_gate_exit(const json_t *verdict);

#endif
