/* The PMIx half of the launcher (docs/fleet.md, "Launchers"): a rank started
 * by a PMIx launcher alone learns the job size, and its host name, from the
 * PMIx runtime (pmix.c, the library opened at run time). Inside the fleet
 * room; nothing here prints. */
#ifndef GV_FLEET_PMIX_H
#define GV_FLEET_PMIX_H

#include "base/err.h"
#include "fleet/fleet.h"
#include "kb/pmix_abi.h"

/* The most ranks any launcher's size may say (launcher.c and PMIx alike). */
#define GV_FLEET_LAUNCH_RANKS (1 << 24)

/* What the runtime answered, before anything of it is believed. */
struct gv_fleet_pmix_reply {
    int init;                         /* PMIx_Init's status */
    struct kb_pmix_proc me;           /* what PMIx_Init gave (init successful) */
    int size_rc;                      /* PMIx_Get of the job size */
    const struct kb_pmix_value *size; /* its value, NULL when none */
    int host_rc;                      /* PMIx_Get of the host name (when asked) */
    const struct kb_pmix_value *host; /* its value, NULL when none or not asked */
};

/* What of p r takes (r: the launcher's rank, launcher PMIx, size 0): the
 * size from a PMIX_UINT32 job size; when want_host, the node name from a
 * non-empty PMIX_STRING host name, mapped like any node name (*named 1).
 * Whatever cannot be used leaves the size 0 and says why in r->note.
 * GV_E_FORMAT naming PMIx where it contradicts the launcher's variables
 * (another namespace or rank, a rank not below the size, a size above the
 * ranks gpuvet takes). ns: $PMIX_NAMESPACE. */
int gv_fleet_pmix_apply(const struct gv_fleet_pmix_reply *p, const char *ns, int want_host,
                        struct gv_fleet_rank *r, int *named, struct gv_err *err);

/* Asks the runtime ($GPUVET_LIBPMIX, else libpmix.so.2: opened, never
 * linked) once per process: PMIx_Init, the job size of the rank's
 * namespace, the host name when want_host, PMIx_Finalize; then
 * gv_fleet_pmix_apply. A library that will not load or an Init that fails
 * (not under a PMIx server) is a note, not an error. */
int gv_fleet_pmix_ask(struct gv_fleet_rank *r, int want_host, int *named, struct gv_err *err);

/* (launcher.c) Appends one note to r->note, "; " between notes. */
void gv_fleet_rank_note(struct gv_fleet_rank *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif
