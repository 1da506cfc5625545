/* Which rank this process is: the launcher's variables (docs/fleet.md,
 * "Launchers"). Open MPI first (mpirun inside a Slurm allocation also passes
 * the Slurm variables of its daemons on), then Slurm (srun --mpi=pmix also
 * sets PMIX_RANK), then PMIx alone (the size and host name from its runtime:
 * pmix.c), else one rank on its own. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/sha256.h"
#include "fleet/fleet.h"
#include "fleet/fleet_run.h"
#include "fleet/pmix.h"

#define RANK_MAX GV_FLEET_LAUNCH_RANKS

const char *gv_fleet_launcher_name(enum gv_fleet_launcher l)
{
    switch (l) {
    case GV_LAUNCH_SLURM: return "slurm";
    case GV_LAUNCH_OPENMPI: return "openmpi";
    case GV_LAUNCH_PMIX: return "pmix";
    default: return "none";
    }
}

static int valid_char(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '.' || c == '_' || c == '-';
}

int gv_fleet_node_name_map(const char *name, char out[GV_FLEET_NODE_NAME_MAX + 1])
{
    if (gv_fleet_node_name_ok(name)) {
        snprintf(out, GV_FLEET_NODE_NAME_MAX + 1, "%s", name);
        return 0;
    }
    size_t n = strlen(name), k = 0;
    for (size_t i = 0; i < n && k < 55; i++)
        out[k++] = valid_char((unsigned char)name[i]) ? name[i] : '_';
    char hex[65];
    gv_sha256_buf_hex(name, n, hex);
    snprintf(out + k, GV_FLEET_NODE_NAME_MAX + 1 - k, "%s%.8s", k ? "-" : "node-", hex);
    return 1;
}

/* A variable holding an integer in [lo, hi]: 1 and *v; 0 when unset;
 * GV_E_FORMAT naming it when set but not such a number. */
static int int_var(const char *name, long lo, long hi, int *v, struct gv_err *err)
{
    const char *s = getenv(name);
    if (!s)
        return 0;
    char *end;
    errno = 0;
    long x = strtol(s, &end, 10);
    if (!*s || *end || errno || x < lo || x > hi)
        return gv_err_set(err, GV_E_FORMAT, "launcher variable %s=%.40s is not a number in "
                          "%ld..%ld", name, s, lo, hi);
    *v = (int)x;
    return 1;
}

static enum gv_fleet_launcher which_launcher(void)
{
    if (getenv("OMPI_COMM_WORLD_RANK"))
        return GV_LAUNCH_OPENMPI;
    if (getenv("SLURM_PROCID"))
        return GV_LAUNCH_SLURM;
    if (getenv("PMIX_RANK"))
        return GV_LAUNCH_PMIX;
    return GV_LAUNCH_NONE;
}

static const char *var_or(const char *name, const char *dflt)
{
    const char *s = getenv(name);
    return s && *s ? s : dflt;
}

/* The rank and size variables of launcher l (size: NULL when the launcher
 * gives none in the environment). */
static void rank_vars(enum gv_fleet_launcher l, const char **rank, const char **size)
{
    static const char *const vars[][2] = {
        [GV_LAUNCH_NONE] = {NULL, NULL},
        [GV_LAUNCH_SLURM] = {"SLURM_PROCID", "SLURM_NTASKS"},
        [GV_LAUNCH_OPENMPI] = {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"},
        [GV_LAUNCH_PMIX] = {"PMIX_RANK", NULL},
    };
    *rank = vars[l][0];
    *size = vars[l][1];
}

static void job_of(struct gv_fleet_rank *r)
{
    const char *job = "";
    if (r->launcher == GV_LAUNCH_SLURM) {
        const char *step = getenv("SLURM_STEP_ID");
        snprintf(r->job, sizeof r->job, "%.60s%s%.60s", var_or("SLURM_JOB_ID", ""),
                 step && *step ? "." : "", step ? step : "");
        return;
    }
    if (r->launcher == GV_LAUNCH_OPENMPI)
        job = var_or("OMPI_MCA_orte_ess_jobid", var_or("PMIX_NAMESPACE", ""));
    else if (r->launcher == GV_LAUNCH_PMIX)
        job = var_or("PMIX_NAMESPACE", "");
    snprintf(r->job, sizeof r->job, "%s", job);
}

void gv_fleet_rank_note(struct gv_fleet_rank *r, const char *fmt, ...)
{
    size_t n = strlen(r->note);
    if (n && n + 2 < sizeof r->note)
        n += (size_t)snprintf(r->note + n, sizeof r->note - n, "; ");
    if (n + 1 >= sizeof r->note)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->note + n, sizeof r->note - n, fmt, ap);
    va_end(ap);
}

/* named: the node name is already set (by PMIx) unless GPUVET_FLEET_NODE
 * overrides it. */
static int node_of(struct gv_fleet_rank *r, int named, struct gv_err *err)
{
    char host[256] = "";
    const char *name = getenv("GPUVET_FLEET_NODE");
    const char *from = "GPUVET_FLEET_NODE";
    if (!name && named)
        return GV_OK;
    if (!name && r->launcher == GV_LAUNCH_SLURM && getenv("SLURMD_NODENAME"))
        name = getenv("SLURMD_NODENAME"), from = "SLURMD_NODENAME";
    if (!name) {
        if (gethostname(host, sizeof host - 1))
            return gv_err_set(err, GV_E_IO, "gethostname: %s", strerror(errno));
        name = host, from = "the host name";
    }
    if (!*name)
        return gv_err_set(err, GV_E_FORMAT, "%s is empty: no node name", from);
    if (gv_fleet_node_name_map(name, r->node))
        gv_fleet_rank_note(r, "node name from %s is not [A-Za-z0-9._-]{1,64}: named %s", from,
                           r->node);
    return GV_OK;
}

int gv_fleet_rank_find(struct gv_fleet_rank *r, struct gv_err *err)
{
    memset(r, 0, sizeof *r);
    r->launcher = which_launcher();
    r->size = 1;
    const char *rv, *sv;
    rank_vars(r->launcher, &rv, &sv);
    int rc;
    if (rv && (rc = int_var(rv, 0, RANK_MAX - 1, &r->rank, err)) < 0)
        return rc;
    if (sv) {
        if ((rc = int_var(sv, 1, RANK_MAX, &r->size, err)) < 0)
            return rc;
        if (rc == 0)
            return gv_err_set(err, GV_E_FORMAT, "%s is set but %s is not", rv, sv);
    }
    int named = 0;
    if (r->launcher == GV_LAUNCH_PMIX) { /* its runtime alone knows the size (0: unknown) */
        r->size = 0;
        if ((rc = gv_fleet_pmix_ask(r, !getenv("GPUVET_FLEET_NODE"), &named, err)))
            return rc;
    }
    if (r->size && r->rank >= r->size)
        return gv_err_set(err, GV_E_FORMAT, "launcher variables: rank %d is not below the "
                          "size %d (%s, %s)", r->rank, r->size, rv, sv ? sv : "PMIx");
    job_of(r);
    return node_of(r, named, err);
}
