/* The MPI gather (docs/fleet.md): MPI opened at run time like a vendor
 * library (dlopen, the symbols of syms_mpi.h; never linked), every rank's
 * node document gathered to rank 0 with MPI_Gather (the lengths) and
 * MPI_Gatherv (the bytes). Rank 0 waits for the others only inside
 * MPI_Gatherv. A build and a machine without MPI fall back to the directory. */
#include <dlfcn.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fleet/fleet_run.h"
#include "fleet/syms_mpi.h"
#include "kb/mpi_abi.h"

#ifndef REQ
#define REQ 1
#define OPT 0
#endif

#define GV_SYM_FIELD(req, field, ret, params, name) ret(*field) params;
struct gv_api_mpi { GV_SYMS_MPI(GV_SYM_FIELD) };
#undef GV_SYM_FIELD

struct mpi_sym {
    int required;
    size_t offset;
    const char *name;
};
#define GV_SYM_ROW(req, field, ret, params, name) {req, offsetof(struct gv_api_mpi, field), name},
static const struct mpi_sym mpi_syms[] = {GV_SYMS_MPI(GV_SYM_ROW)};
#undef GV_SYM_ROW

#define DOC_MAX ((size_t)64 << 20) /* one node document, bytes */

static struct {
    struct gv_api_mpi f;
    void *h;
    gv_mpi_comm world;
    gv_mpi_datatype byte, integer;
    int rank, size, inited;
} mpi;

static int load_handles(const struct kb_mpi_abi *abi, const char *file, struct gv_err *err)
{
    const char *names[3] = {abi->comm_world, abi->byte_type, abi->int_type};
    void *addr[3];
    for (int i = 0; i < 3; i++)
        if (!(addr[i] = dlsym(mpi.h, names[i])))
            return gv_err_set(err, GV_E_LIB, "%s lacks the object %s (not %s's ABI, %s)", file,
                              names[i], abi->implementation, abi->source);
    mpi.world = addr[0], mpi.byte = addr[1], mpi.integer = addr[2];
    return GV_OK;
}

/* $GPUVET_LIBMPI names another file (tests: a missing library). */
static int load(struct gv_err *err)
{
    int n;
    const struct kb_mpi_abi *abi = kb_mpi_abis(&n);
    const char *file = getenv("GPUVET_LIBMPI");
    if (!file || !*file)
        file = abi->library;
    /* RTLD_GLOBAL: Open MPI's own components, which it dlopens, need its symbols */
    mpi.h = dlopen(file, RTLD_NOW | RTLD_GLOBAL);
    if (!mpi.h) {
        const char *e = dlerror();
        return gv_err_set(err, GV_E_LIB, "cannot load %s (Open MPI's library; Debian/Ubuntu: "
                          "libopenmpi3): %s", file, e ? e : "?");
    }
    for (size_t i = 0; i < sizeof mpi_syms / sizeof mpi_syms[0]; i++) {
        void *f = dlsym(mpi.h, mpi_syms[i].name);
        if (!f && mpi_syms[i].required)
            return gv_err_set(err, GV_E_LIB, "%s lacks the symbol %s", file, mpi_syms[i].name);
        memcpy((char *)&mpi.f + mpi_syms[i].offset, &f, sizeof f);
    }
    return load_handles(abi, file, err);
}

static int mpi_fail(const char *call, int code, struct gv_err *err)
{
    char msg[512] = "";
    int len = 0;
    if (mpi.f.Error_string && mpi.f.Error_string(code, msg, &len) != GV_MPI_SUCCESS)
        msg[0] = '\0';
    return gv_err_set(err, GV_E_LIB, "%s: error %d%s%s", call, code, msg[0] ? ": " : "", msg);
}

int gv_fleet_mpi_init(const struct gv_fleet_rank *r, struct gv_err *err)
{
    if (!mpi.h && load(err))
        return err->code;
    int flag = 0, rc = mpi.f.Initialized(&flag);
    if (rc == GV_MPI_SUCCESS && !flag)
        rc = mpi.f.Init(NULL, NULL);
    if (rc != GV_MPI_SUCCESS)
        return mpi_fail("MPI_Init", rc, err);
    mpi.inited = 1;
    if ((rc = mpi.f.Comm_rank(mpi.world, &mpi.rank)) != GV_MPI_SUCCESS)
        return mpi_fail("MPI_Comm_rank", rc, err);
    if ((rc = mpi.f.Comm_size(mpi.world, &mpi.size)) != GV_MPI_SUCCESS)
        return mpi_fail("MPI_Comm_size", rc, err);
    if (mpi.rank != r->rank || mpi.size != r->size)
        return gv_err_set(err, GV_E_FORMAT, "MPI says rank %d of %d, the launcher's variables "
                          "rank %d of %d", mpi.rank, mpi.size, r->rank, r->size);
    return GV_OK;
}

/* Rank 0: the received bytes as an array of strings, in rank order. */
static int split(const char *buf, const int *lens, const int *offs, json_t **all,
                 struct gv_err *err)
{
    json_t *a = json_array();
    for (int i = 0; a && i < mpi.size; i++) {
        json_t *s = json_stringn_nocheck(buf + offs[i], (size_t)lens[i]);
        if (!s || json_array_append_new(a, s)) {
            json_decref(a);
            a = NULL;
        }
    }
    if (!a)
        return gv_err_set(err, GV_E_NOMEM, "MPI gather: out of memory");
    *all = a;
    return GV_OK;
}

int gv_fleet_mpi_gather(const char *bytes, size_t len, json_t **all, struct gv_err *err)
{
    *all = NULL;
    if (!mpi.inited)
        return gv_err_set(err, GV_E_USAGE, "MPI gather before MPI_Init");
    /* a document too large is sent as nothing: rank 0 names the rank missing */
    int mine = len <= DOC_MAX ? (int)len : 0;
    int *lens = mpi.rank == 0 ? calloc((size_t)mpi.size, sizeof *lens) : NULL;
    int *offs = mpi.rank == 0 ? calloc((size_t)mpi.size, sizeof *offs) : NULL;
    char *buf = NULL;
    int rc = GV_OK, mrc;
    if (mpi.rank == 0 && (!lens || !offs))
        rc = gv_err_set(err, GV_E_NOMEM, "MPI gather: out of memory");
    /* every rank must take part in both collectives, whatever happened here */
    mrc = mpi.f.Gather(&mine, 1, mpi.integer, lens, 1, mpi.integer, 0, mpi.world);
    if (mrc != GV_MPI_SUCCESS && !rc)
        rc = mpi_fail("MPI_Gather", mrc, err);
    if (mpi.rank == 0 && lens && offs) {
        size_t total = 0;
        for (int i = 0; i < mpi.size; i++) {
            offs[i] = total <= INT_MAX ? (int)total : 0;
            total += (size_t)(lens[i] > 0 ? lens[i] : 0);
        }
        /* MPI counts are ints: above 2 GiB in all, rank 0 takes nothing and
         * Open MPI ends the job on the truncation (use GPUVET_FLEET_GATHER=dir) */
        if (total > INT_MAX) {
            memset(lens, 0, (size_t)mpi.size * sizeof *lens);
            memset(offs, 0, (size_t)mpi.size * sizeof *offs);
            rc = gv_err_set(err, GV_E_UNSUPPORTED, "MPI gather: %zu bytes of node documents "
                            "exceed 2 GiB; gather through the directory", total);
            total = 0;
        }
        buf = malloc(total ? total : 1);
        if (!buf && !rc)
            rc = gv_err_set(err, GV_E_NOMEM, "MPI gather: out of memory for %zu bytes", total);
    }
    mrc = mpi.f.Gatherv(bytes, mine, mpi.byte, buf, lens, offs, mpi.byte, 0, mpi.world);
    if (mrc != GV_MPI_SUCCESS && !rc)
        rc = mpi_fail("MPI_Gatherv", mrc, err);
    if (mpi.rank == 0 && !rc)
        rc = split(buf, lens, offs, all, err);
    free(buf);
    free(lens);
    free(offs);
    return rc;
}

void gv_fleet_mpi_finalize(void)
{
    if (mpi.inited)
        mpi.f.Finalize();
    mpi.inited = 0;
}
