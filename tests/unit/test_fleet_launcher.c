/* Which rank a process is (src/fleet/launcher.c): each launcher's variables
 * (docs/fleet.md, "Launchers"), their precedence, bad values named, and node
 * names mapped to valid ones deterministically. Expected values are written
 * here from the table in docs/fleet.md. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fleet/fleet_run.h"
#include "t.h"

static const char *const all_vars[] = {
    "SLURM_PROCID", "SLURM_NTASKS", "SLURMD_NODENAME", "SLURM_JOB_ID", "SLURM_STEP_ID",
    "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_MCA_orte_ess_jobid",
    "PMIX_RANK", "PMIX_NAMESPACE", "GPUVET_FLEET_NODE", NULL};

static void clear_env(void)
{
    for (size_t i = 0; all_vars[i]; i++)
        unsetenv(all_vars[i]);
}

static int find(struct gv_fleet_rank *r, struct gv_err *err)
{
    memset(err, 0, sizeof *err);
    return gv_fleet_rank_find(r, err);
}

static void none(void)
{
    clear_env();
    struct gv_fleet_rank r;
    struct gv_err err;
    T_EQ_INT(find(&r, &err), GV_OK);
    T_EQ_INT(r.launcher, GV_LAUNCH_NONE);
    T_EQ_STR(gv_fleet_launcher_name(r.launcher), "none");
    T_EQ_INT(r.rank, 0);
    T_EQ_INT(r.size, 1);
    T_EQ_STR(r.job, "");
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    if (gv_fleet_node_name_ok(host))
        T_EQ_STR(r.node, host);
}

static void slurm(void)
{
    clear_env();
    setenv("SLURM_PROCID", "3", 1);
    setenv("SLURM_NTASKS", "64", 1);
    setenv("SLURMD_NODENAME", "gpu-a017", 1);
    setenv("SLURM_JOB_ID", "81234", 1);
    setenv("SLURM_STEP_ID", "0", 1);
    setenv("PMIX_RANK", "9", 1); /* srun --mpi=pmix sets both: Slurm's are read */
    struct gv_fleet_rank r;
    struct gv_err err;
    T_EQ_INT(find(&r, &err), GV_OK);
    T_EQ_STR(gv_fleet_launcher_name(r.launcher), "slurm");
    T_EQ_INT(r.rank, 3);
    T_EQ_INT(r.size, 64);
    T_EQ_STR(r.node, "gpu-a017");
    T_EQ_STR(r.job, "81234.0");
    T_EQ_STR(r.note, "");
    setenv("GPUVET_FLEET_NODE", "n7", 1);
    T_EQ_INT(find(&r, &err), GV_OK);
    T_EQ_STR(r.node, "n7");
}

static void openmpi(void)
{
    clear_env();
    setenv("OMPI_COMM_WORLD_RANK", "5", 1);
    setenv("OMPI_COMM_WORLD_SIZE", "8", 1);
    setenv("OMPI_MCA_orte_ess_jobid", "1906442241", 1);
    setenv("SLURM_PROCID", "0", 1); /* mpirun inside an allocation: its daemon's */
    setenv("SLURM_NTASKS", "2", 1);
    setenv("GPUVET_FLEET_NODE", "rank5", 1);
    struct gv_fleet_rank r;
    struct gv_err err;
    T_EQ_INT(find(&r, &err), GV_OK);
    T_EQ_STR(gv_fleet_launcher_name(r.launcher), "openmpi");
    T_EQ_INT(r.rank, 5);
    T_EQ_INT(r.size, 8);
    T_EQ_STR(r.job, "1906442241");
    T_EQ_STR(r.node, "rank5");
    unsetenv("OMPI_MCA_orte_ess_jobid");
    setenv("PMIX_NAMESPACE", "prterun-vm-1234@1", 1);
    T_EQ_INT(find(&r, &err), GV_OK);
    T_EQ_STR(r.job, "prterun-vm-1234@1");
}

static void pmix(void)
{
    clear_env();
    setenv("PMIX_RANK", "2", 1);
    setenv("PMIX_NAMESPACE", "ns", 1);
    struct gv_fleet_rank r;
    struct gv_err err;
    T_EQ_INT(find(&r, &err), GV_OK);
    T_EQ_STR(gv_fleet_launcher_name(r.launcher), "pmix");
    T_EQ_INT(r.rank, 2);
    T_EQ_INT(r.size, 0); /* only the runtime knows */
    T_EQ_STR(r.job, "ns");
}

static void bad_values(void)
{
    static const char *const cases[][2] = {
        {"x", "8"}, {"-1", "8"}, {"8", "8"}, {"1", "0"}, {"1", "8x"}, {"", "8"},
        {"99999999999999999999", "8"}, {"1", "16777217"},
    };
    struct gv_fleet_rank r;
    struct gv_err err;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        clear_env();
        setenv("OMPI_COMM_WORLD_RANK", cases[i][0], 1);
        setenv("OMPI_COMM_WORLD_SIZE", cases[i][1], 1);
        T_EQ_INT(find(&r, &err), GV_E_FORMAT);
        T_CHECK(strstr(err.msg, "OMPI_COMM_WORLD_") != NULL);
    }
    clear_env();
    setenv("SLURM_PROCID", "1", 1); /* the size is missing */
    T_EQ_INT(find(&r, &err), GV_E_FORMAT);
    T_CHECK(strstr(err.msg, "SLURM_NTASKS") != NULL);
    clear_env();
    setenv("GPUVET_FLEET_NODE", "", 1);
    T_EQ_INT(find(&r, &err), GV_E_FORMAT);
}

static void node_names(void)
{
    char out[GV_FLEET_NODE_NAME_MAX + 1], again[GV_FLEET_NODE_NAME_MAX + 1];
    T_EQ_INT(gv_fleet_node_name_map("gpu-a017.cluster_1", out), 0);
    T_EQ_STR(out, "gpu-a017.cluster_1");
    /* invalid bytes become '_', a digest of the given name keeps two apart */
    T_EQ_INT(gv_fleet_node_name_map("a/b", out), 1);
    T_CHECK(!strncmp(out, "a_b-", 4) && strlen(out) == 12);
    T_EQ_INT(gv_fleet_node_name_map("a b", again), 1);
    T_CHECK(!strncmp(again, "a_b-", 4) && strcmp(out, again) != 0);
    T_EQ_INT(gv_fleet_node_name_map("a/b", again), 1);
    T_EQ_STR(out, again); /* deterministic */
    T_EQ_INT(gv_fleet_node_name_map("..", out), 1);
    T_CHECK(gv_fleet_node_name_ok(out));
    char longname[200];
    memset(longname, 'x', sizeof longname - 1);
    longname[sizeof longname - 1] = '\0';
    T_EQ_INT(gv_fleet_node_name_map(longname, out), 1);
    T_CHECK(gv_fleet_node_name_ok(out) && strlen(out) == 64);
    T_EQ_INT(gv_fleet_node_name_map("\xc3\xa9t\xc3\xa9\n", out), 1);
    T_CHECK(gv_fleet_node_name_ok(out));

    clear_env();
    setenv("GPUVET_FLEET_NODE", "../../etc", 1);
    struct gv_fleet_rank r;
    struct gv_err err;
    T_EQ_INT(find(&r, &err), GV_OK);
    T_CHECK(gv_fleet_node_name_ok(r.node) && !strchr(r.node, '/'));
    T_CHECK(strstr(r.note, "GPUVET_FLEET_NODE") != NULL);
}

int main(void)
{
    T_RUN(none);
    T_RUN(slurm);
    T_RUN(openmpi);
    T_RUN(pmix);
    T_RUN(bad_values);
    T_RUN(node_names);
    return t_done();
}
