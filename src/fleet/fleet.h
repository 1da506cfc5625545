/* The fleet (docs/fleet.md): one run per node under a launcher, the node
 * documents gathered, the nodes compared within groups of like hardware, the
 * odd node named with its class and evidence; the gate for one node.
 *
 * Two halves, built side by side:
 *  - the documents and their judgement (node.c, compare.c, reference.c):
 *    reading and validating node documents, grouping, majorities,
 *    classification, the fleet and reference documents;
 *  - the run (launcher.c, mpi.c, gather.c, run.c, gate.c): which rank this is,
 *    building this node's document from a suite run, gathering the documents,
 *    the gate's verdict.
 * Nothing here prints; every function fills a struct gv_err. */
#ifndef GV_FLEET_FLEET_H
#define GV_FLEET_FLEET_H

#include <jansson.h>
#include <stddef.h>

#include "base/err.h"

#define GV_FLEET_NODE_SCHEMA "gpuvet.fleet.node"
#define GV_FLEET_SCHEMA "gpuvet.fleet"
#define GV_FLEET_REFERENCE_SCHEMA "gpuvet.fleet.reference"
#define GV_FLEET_SCHEMA_VERSION 1
#define GV_FLEET_NODE_NAME_MAX 64

/* ---- the documents and their judgement ---- */

/* Whether name is a valid node name: 1..GV_FLEET_NODE_NAME_MAX bytes of
 * [A-Za-z0-9._-], not "." or "..". */
int gv_fleet_node_name_ok(const char *name);

/* Validates a node document (every field docs/fleet.md names: types, ranges,
 * schema and version; stack_digest equal to the digest of "stack"). what names
 * the document in messages (its file name). GV_OK or GV_E_FORMAT/GV_E_SCHEMA. */
int gv_fleet_node_check(const json_t *node, const char *what, struct gv_err *err);

/* Reads one node document from a file (size-limited), validated. */
int gv_fleet_node_read(const char *path, json_t **node, struct gv_err *err);

/* SHA-256 of the canonical JSON of a stack summary, "sha256:HEX" (72 bytes). */
int gv_fleet_stack_digest(const json_t *stack, char out[72], struct gv_err *err);

/* The node documents of a gathered directory (DIR/nodes/\*.json, opened
 * relative to DIR without following links) or of the named files; *nodes is
 * an array in rank order. Outputs of DIR/outputs are found by compare itself.
 * Equal stacks and equal case results of different nodes are one shared
 * object (memory for 10,000 nodes): treat *nodes as read-only. dir gets DIR
 * when paths is one directory, else "". Duplicate ranks, mixed sizes or jobs
 * are GV_E_FORMAT (docs/fleet.md, "The directory"). */
int gv_fleet_load(const char *const *paths, size_t n, json_t **nodes, char *dir, size_t dirsz,
                  struct gv_err *err);

/* The fleet document of nodes (docs/fleet.md): groups, odd nodes, summary.
 * dir ("" when none) is where DIR/outputs/NODE.rRANK.safetensors may be read
 * to count differing elements and bits. */
int gv_fleet_compare(const json_t *nodes, const char *dir, json_t **fleet, struct gv_err *err);

/* The reference document (gpuvet.fleet.reference) of a fleet document. */
int gv_fleet_reference(const json_t *fleet, const json_t *nodes, json_t **ref,
                       struct gv_err *err);

/* One node against a reference: *verdict is {"decision": "keep"|"drain"|
 * "cannot_assess", "reason": "…", "findings": [...]} */
int gv_fleet_judge(const json_t *ref, const json_t *node, json_t **verdict, struct gv_err *err);

/* ---- the run ---- */

enum gv_fleet_launcher { GV_LAUNCH_NONE, GV_LAUNCH_SLURM, GV_LAUNCH_OPENMPI, GV_LAUNCH_PMIX };

struct gv_fleet_rank {
    enum gv_fleet_launcher launcher;
    int rank, size;
    char node[GV_FLEET_NODE_NAME_MAX + 1];
    char job[128];
    char note[320]; /* "" or how an invalid node name was mapped to a valid one */
};

/* Which rank this process is, from the launcher's variables (docs/fleet.md,
 * "Launchers"); GPUVET_FLEET_NODE overrides the node name. */
int gv_fleet_rank_find(struct gv_fleet_rank *r, struct gv_err *err);
const char *gv_fleet_launcher_name(enum gv_fleet_launcher l);

#endif
