/* The shared directory (docs/fleet.md, "The directory"): DIR/nodes/NODE.rRANK.json
 * and DIR/outputs/NODE.rRANK.safetensors, each written atomically, each name
 * built here from a validated node name and rank, never from a document.
 *
 * In directory mode nobody waits: every rank writes its own files and ends;
 * `gpuvet fleet compare DIR` runs afterwards (under srun: after the step).
 * Only the MPI gather (mpi.c) makes rank 0 wait for the others, inside
 * MPI_Gatherv; no rank ever polls the directory. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/fs.h"
#include "base/json.h"
#include "fleet/fleet_run.h"

enum gv_fleet_gather gv_fleet_gather_mode(const struct gv_fleet_rank *r)
{
    const char *g = getenv("GPUVET_FLEET_GATHER");
    if (r->launcher != GV_LAUNCH_OPENMPI || (g && !strcmp(g, "dir")))
        return GV_GATHER_DIR;
    return GV_GATHER_MPI;
}

static int sub_dir(const char *dir, const char *sub, struct gv_err *err)
{
    char p[4096];
    if (snprintf(p, sizeof p, "%s/%s", dir, sub) >= (int)sizeof p)
        return gv_err_set(err, GV_E_USAGE, "--dir %s: path too long", dir);
    if (gv_mkdirs(p, 0755) && !gv_is_dir(p))
        return gv_err_set(err, GV_E_IO, "cannot make %s: %s", p, strerror(errno));
    return GV_OK;
}

int gv_fleet_dir_prepare(const char *dir, struct gv_err *err)
{
    int rc = sub_dir(dir, "nodes", err);
    return rc ? rc : sub_dir(dir, "outputs", err);
}

static int file_name(char *out, size_t outsz, const char *dir, const char *sub, const char *node,
                     int rank, const char *ext, struct gv_err *err)
{
    if (!gv_fleet_node_name_ok(node) || rank < 0)
        return gv_err_set(err, GV_E_FORMAT, "node name '%.80s' or rank %d is not valid for a "
                          "file name", node, rank);
    if (snprintf(out, outsz, "%s/%s/%s.r%d.%s", dir, sub, node, rank, ext) >= (int)outsz)
        return gv_err_set(err, GV_E_USAGE, "--dir %s: path too long", dir);
    return GV_OK;
}

int gv_fleet_dir_write_node(const char *dir, const char *node, int rank, const json_t *doc,
                            struct gv_err *err)
{
    char path[4096];
    int rc = file_name(path, sizeof path, dir, "nodes", node, rank, "json", err);
    if (rc)
        return rc;
    char *s = gv_json_dumps(doc, JSON_INDENT(1));
    if (!s)
        return gv_err_set(err, GV_E_NOMEM, "%s: out of memory", path);
    rc = gv_write_atomic(path, s, strlen(s), 0644, err);
    free(s);
    return rc;
}

int gv_fleet_dir_write_outputs(const char *dir, const char *node, int rank,
                               const struct gv_fleet_outputs *o, struct gv_err *err)
{
    char path[4096];
    int rc = file_name(path, sizeof path, dir, "outputs", node, rank, "safetensors", err);
    if (rc)
        return rc;
    json_t *meta = json_object();
    json_object_set_new(meta, "format", json_string("gpuvet.outputs"));
    json_object_set_new(meta, "gpuvet_version", json_string(GPUVET_VERSION));
    rc = gv_safetensors_write(path, o->t, o->n, meta, err);
    json_decref(meta);
    return rc;
}
