/* The job size from the PMIx runtime (docs/fleet.md, "Launchers"): the
 * client library opened at run time like a vendor library (dlopen, the
 * symbols of syms_pmix.h; never linked), PMIx_Init once, PMIx_Get of
 * PMIX_JOB_SIZE for the namespace's wildcard rank (and PMIX_HOSTNAME for
 * this process when the launcher's variables name no node), PMIx_Finalize.
 * What PMIx answers is hostile input: checked, never trusted. Only for the
 * PMIx launcher: under Open MPI, MPI itself initialises PMIx. */
#include <dlfcn.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fleet/fleet_run.h"
#include "fleet/pmix.h"
#include "fleet/syms_pmix.h"

#ifndef REQ
#define REQ 1
#define OPT 0
#endif

#define GV_SYM_FIELD(req, field, ret, params, name) ret(*field) params;
struct gv_api_pmix { GV_SYMS_PMIX(GV_SYM_FIELD) };
#undef GV_SYM_FIELD

struct pmix_sym {
    int required;
    size_t offset;
    const char *name;
};
#define GV_SYM_ROW(req, field, ret, params, name) {req, offsetof(struct gv_api_pmix, field), name},
static const struct pmix_sym pmix_syms[] = {GV_SYMS_PMIX(GV_SYM_ROW)};
#undef GV_SYM_ROW

/* "PMIX_ERR_UNREACH (-25)", "PMIX_STRING (3)"; unnamed: "status -3", "type 77". */
static const char *code_text(const char *name, const char *unnamed, long code, char *buf,
                             size_t sz)
{
    if (name)
        snprintf(buf, sz, "%s (%ld)", name, code);
    else
        snprintf(buf, sz, "%s %ld", unnamed, code);
    return buf;
}

static const char *status_text(int status, char *buf, size_t sz)
{
    return code_text(kb_pmix_status_name(status), "status", status, buf, sz);
}

static const char *type_text(unsigned type, char *buf, size_t sz)
{
    return code_text(kb_pmix_type_name(type), "type", type, buf, sz);
}

/* At most 64 bytes of s (n bytes at most, no NUL needed) fit for a message. */
static const char *printable(const char *s, size_t n, char out[65])
{
    size_t k = 0;
    for (; k < n && k < 64 && s[k]; k++)
        out[k] = (unsigned char)s[k] < 0x20 || (unsigned char)s[k] >= 0x7f ? '?' : s[k];
    out[k] = '\0';
    return out;
}

/* The namespace PMIx_Init gave is the launcher's (both bounded). */
static int same_nspace(const struct kb_pmix_proc *me, const char *ns)
{
    size_t n = strnlen(me->nspace, sizeof me->nspace);
    return n < sizeof me->nspace && strlen(ns) == n && memcmp(me->nspace, ns, n) == 0;
}

static int apply_size(const struct gv_fleet_pmix_reply *p, struct gv_fleet_rank *r,
                      struct gv_err *err)
{
    char t[64];
    if (p->size_rc != KB_PMIX_SUCCESS || !p->size) {
        gv_fleet_rank_note(r, "size unknown: PMIx_Get(%s) failed: %s",
                           kb_pmix_abi()->key_job_size, status_text(p->size_rc, t, sizeof t));
        return GV_OK;
    }
    if (p->size->type != KB_PMIX_UINT32) {
        gv_fleet_rank_note(r, "size unknown: PMIx gives %s as %s, not PMIX_UINT32",
                           kb_pmix_abi()->key_job_size, type_text(p->size->type, t, sizeof t));
        return GV_OK;
    }
    uint32_t size = p->size->data.uint32;
    if (size > GV_FLEET_LAUNCH_RANKS)
        return gv_err_set(err, GV_E_FORMAT, "PMIx gives the job size %u (%s), above the %d "
                          "ranks gpuvet takes", size, kb_pmix_abi()->key_job_size,
                          GV_FLEET_LAUNCH_RANKS);
    if ((uint32_t)r->rank >= size)
        return gv_err_set(err, GV_E_FORMAT, "PMIx gives the job size %u (%s): rank %d "
                          "(PMIX_RANK) is not below it", size, kb_pmix_abi()->key_job_size,
                          r->rank);
    r->size = (int)size;
    return GV_OK;
}

static void apply_host(const struct gv_fleet_pmix_reply *p, struct gv_fleet_rank *r,
                       int *named)
{
    char t[64];
    if (p->host_rc != KB_PMIX_SUCCESS || !p->host)
        return; /* PMIx need not know it: the host name is used */
    if (p->host->type != KB_PMIX_STRING || !p->host->data.string) {
        gv_fleet_rank_note(r, "PMIx gives %s as %s, not PMIX_STRING: the host name is used",
                           kb_pmix_abi()->key_hostname, type_text(p->host->type, t, sizeof t));
        return;
    }
    const char *name = p->host->data.string;
    if (!*name)
        return;
    if (gv_fleet_node_name_map(name, r->node))
        gv_fleet_rank_note(r, "node name from PMIx (%s) is not [A-Za-z0-9._-]{1,64}: named %s",
                           kb_pmix_abi()->key_hostname, r->node);
    *named = 1;
}

int gv_fleet_pmix_apply(const struct gv_fleet_pmix_reply *p, const char *ns, int want_host,
                        struct gv_fleet_rank *r, int *named, struct gv_err *err)
{
    char t[64], a[65], b[65];
    *named = 0;
    if (p->init != KB_PMIX_SUCCESS) {
        gv_fleet_rank_note(r, "size unknown: PMIx_Init failed (not under a PMIx server?): %s",
                           status_text(p->init, t, sizeof t));
        return GV_OK;
    }
    if (!same_nspace(&p->me, ns) || p->me.rank != (uint32_t)r->rank)
        return gv_err_set(err, GV_E_FORMAT, "PMIx_Init says rank %u of namespace '%s', the "
                          "launcher's variables rank %d of '%s' (PMIX_RANK, PMIX_NAMESPACE)",
                          p->me.rank, printable(p->me.nspace, sizeof p->me.nspace, a), r->rank,
                          printable(ns, strlen(ns), b));
    int rc = apply_size(p, r, err);
    if (rc == GV_OK && want_host)
        apply_host(p, r, named);
    return rc;
}

/* ---------- the runtime ---------- */

static struct gv_api_pmix api;

/* LeakSanitizer's switch, present in a sanitized build only: OpenPMIx 4.2's
 * PMIx_Init keeps a few bytes for good (strdup in pmix_rte_init and
 * pmix_bfrops_base_value_load, when it fails too, and PMIx_Finalize after a
 * failed Init crashes), the library's and not gpuvet's to free. What the
 * calling thread allocates inside Init is not reported; the rest is. */
void __lsan_disable(void) __attribute__((weak));
void __lsan_enable(void) __attribute__((weak));

static int init(struct kb_pmix_proc *me)
{
    if (__lsan_disable)
        __lsan_disable();
    int rc = api.Init(me, NULL, 0);
    if (__lsan_enable)
        __lsan_enable();
    return rc;
}

/* $GPUVET_LIBPMIX names another file (tests: a missing or a fake library). */
static int load(char *why, size_t whysz)
{
    const char *file = getenv("GPUVET_LIBPMIX");
    if (!file || !*file)
        file = kb_pmix_abi()->library;
    /* RTLD_GLOBAL: the components OpenPMIx dlopens itself need its symbols */
    void *h = dlopen(file, RTLD_NOW | RTLD_GLOBAL);
    if (!h) {
        const char *e = dlerror();
        snprintf(why, whysz, "cannot load %s (the PMIx client library; Debian/Ubuntu: "
                 "libpmix2): %s", file, e ? e : "?");
        return -1;
    }
    for (size_t i = 0; i < sizeof pmix_syms / sizeof pmix_syms[0]; i++) {
        void *f = dlsym(h, pmix_syms[i].name);
        if (!f && pmix_syms[i].required) {
            snprintf(why, whysz, "%s lacks the symbol %s", file, pmix_syms[i].name);
            dlclose(h);
            return -1;
        }
        memcpy((char *)&api + pmix_syms[i].offset, &f, sizeof f);
    }
    return 0;
}

/* PMIX_VALUE_RELEASE as the library's own macro does it (src/kb/pmix_abi.c). */
static void release(struct kb_pmix_value *v)
{
    if (!v)
        return;
    api.Value_destruct(v);
    free(v);
}

/* Asks, believes, releases: between PMIx_Init and PMIx_Finalize. */
static int ask_inited(struct gv_fleet_pmix_reply *p, const char *ns, int want_host,
                      struct gv_fleet_rank *r, int *named, struct gv_err *err)
{
    struct kb_pmix_proc job = p->me;
    job.nspace[KB_PMIX_MAX_NSLEN] = '\0';
    job.rank = KB_PMIX_RANK_WILDCARD;
    struct kb_pmix_value *size = NULL, *host = NULL;
    p->size_rc = api.Get(&job, kb_pmix_abi()->key_job_size, NULL, 0, &size);
    p->size = p->size_rc == KB_PMIX_SUCCESS ? size : NULL;
    p->host_rc = -1;
    if (want_host) {
        struct kb_pmix_proc me = p->me;
        me.nspace[KB_PMIX_MAX_NSLEN] = '\0';
        p->host_rc = api.Get(&me, kb_pmix_abi()->key_hostname, NULL, 0, &host);
        p->host = p->host_rc == KB_PMIX_SUCCESS ? host : NULL;
    }
    int rc = gv_fleet_pmix_apply(p, ns, want_host, r, named, err);
    release(size);
    release(host);
    return rc;
}

/* What the one conversation gave, for a second call in the same process. */
static struct {
    int done, rc, size, named;
    char node[GV_FLEET_NODE_NAME_MAX + 1];
    char note[sizeof ((struct gv_fleet_rank *)0)->note];
    struct gv_err err;
} once;

static int ask(struct gv_fleet_rank *r, int want_host, int *named, struct gv_err *err)
{
    const char *ns = getenv("PMIX_NAMESPACE");
    char why[400];
    if (!ns || !*ns) { /* every PMIx launcher sets it; without it Init finds no job */
        gv_fleet_rank_note(r, "size unknown: PMIX_NAMESPACE is not set, PMIx not asked");
        return GV_OK;
    }
    if (load(why, sizeof why)) {
        gv_fleet_rank_note(r, "size unknown: %s", why);
        return GV_OK;
    }
    struct gv_fleet_pmix_reply p = {0};
    p.init = init(&p.me);
    if (p.init != KB_PMIX_SUCCESS)
        return gv_fleet_pmix_apply(&p, ns, want_host, r, named, err);
    int rc = ask_inited(&p, ns, want_host, r, named, err);
    api.Finalize(NULL, 0);
    return rc;
}

int gv_fleet_pmix_ask(struct gv_fleet_rank *r, int want_host, int *named, struct gv_err *err)
{
    if (!once.done) {
        struct gv_fleet_rank mine = *r;
        once.rc = ask(&mine, want_host, &once.named, &once.err);
        once.size = mine.size;
        snprintf(once.node, sizeof once.node, "%s", mine.node);
        snprintf(once.note, sizeof once.note, "%s", mine.note);
        once.done = 1;
    }
    *named = once.named;
    r->size = once.size;
    if (once.named)
        snprintf(r->node, sizeof r->node, "%s", once.node);
    snprintf(r->note, sizeof r->note, "%s", once.note);
    if (once.rc)
        *err = once.err;
    return once.rc;
}
