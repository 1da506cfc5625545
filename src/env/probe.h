/* The environment room: facts about a machine, each read by one probe through
 * a root prefix (so --root DIR inspects an image or chroot offline). Probes
 * never print; each returns one snapshot section (docs/snapshot-schema.md),
 * marked not collected with a reason when its source is missing. */
#ifndef GV_ENV_PROBE_H
#define GV_ENV_PROBE_H

#include <jansson.h>

#include "base/err.h"

struct gv_probe_ctx {
    const char *root;   /* "/" for the live system */
    int live;           /* root is "/" : /proc and /sys describe this machine */
    int pid;            /* --pid, 0 when not given */
    char *const *envp;  /* the environment to record (tests pass their own) */
    int envp_of_root;   /* envp is the root's own (an image's config Env): its PATH,
                         * VIRTUAL_ENV and CONDA_PREFIX say where its Python is */
    int hash_files;     /* compute sha256 of library files (default on) */
    /* Digests already known (an image's files, hashed while its layers were
     * streamed: src/image): 1 and hex filled for a path inside root, 0 when
     * unknown. When set, the persistent digest cache is neither read nor
     * written (the root is a temporary tree). NULL: hash the files. */
    int (*known_digest)(const void *arg, const char *path, char hex[65]);
    const void *known_digest_arg;
};

/* Each returns a new section object (never NULL). */
json_t *gv_probe_host(const struct gv_probe_ctx *ctx);
json_t *gv_probe_gpus(const struct gv_probe_ctx *ctx);
json_t *gv_probe_packages(const struct gv_probe_ctx *ctx);
json_t *gv_probe_drivers(const struct gv_probe_ctx *ctx, const json_t *packages);
json_t *gv_probe_stacks(const struct gv_probe_ctx *ctx, const json_t *packages);
json_t *gv_probe_libraries(const struct gv_probe_ctx *ctx, const json_t *stacks,
                           const json_t *packages, const json_t *python);
json_t *gv_probe_python(const struct gv_probe_ctx *ctx);
json_t *gv_probe_loader(const struct gv_probe_ctx *ctx, const json_t *libraries);
json_t *gv_probe_environment(const struct gv_probe_ctx *ctx);
json_t *gv_probe_permissions(const struct gv_probe_ctx *ctx);
json_t *gv_probe_process(const struct gv_probe_ctx *ctx); /* only when pid != 0 */

/* The whole document (schema gpuvet.snapshot, version GV_SNAPSHOT_SCHEMA_VERSION). */
#define GV_SNAPSHOT_SCHEMA "gpuvet.snapshot"
#define GV_SNAPSHOT_SCHEMA_VERSION 1
int gv_snapshot_collect(const struct gv_probe_ctx *ctx, json_t **doc, struct gv_err *err);
/* Read and validate a snapshot file (schema, version, required sections). */
int gv_snapshot_load(const char *path, json_t **doc, struct gv_err *err);

#endif
