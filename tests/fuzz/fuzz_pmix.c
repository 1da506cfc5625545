/* Fuzz target: what the PMIx runtime answers a rank (src/fleet/pmix.c,
 * gv_fleet_pmix_apply), all of it hostile: Init's status, namespace (up to
 * 256 bytes, maybe without its NUL) and rank, the job size's status, type and
 * bytes, the host name's status, type and bytes. The input: byte 0 flags
 * (1 want the host name, 2 Init fails, 4 the size Get fails, 8 the host Get
 * fails, 16 the launcher's namespace differs), byte 1 PMIX_RANK, bytes 2-5
 * Init's rank, 6-7 the size's type, 8-15 its bytes, 16-17 the host's type,
 * then the namespace to the first NUL, then the host name.
 * Promises checked: an error is GV_E_FORMAT and names PMIx; otherwise the size
 * is 0 or above the rank and at most 2^24, a node name PMIx gave is a valid
 * one, the note is a NUL-terminated string of its buffer. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fleet/fleet.h"
#include "fleet/pmix.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint64_t le(const uint8_t *p, int n)
{
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    enum { HEAD = 18 };
    if (size < HEAD)
        return 0;
    unsigned flags = data[0];
    struct gv_fleet_pmix_reply p = {0};
    p.init = flags & 2 ? -25 : KB_PMIX_SUCCESS;
    p.me.rank = (uint32_t)le(data + 2, 4);
    struct kb_pmix_value sz = {.type = (uint16_t)le(data + 6, 2)};
    sz.data.uint64 = le(data + 8, 8);
    size_t rest = size - HEAD, nl = strnlen((const char *)data + HEAD, rest);
    memcpy(p.me.nspace, data + HEAD, nl < sizeof p.me.nspace ? nl : sizeof p.me.nspace);
    char *host = malloc(rest + 1);
    if (!host)
        return 0;
    size_t hl = nl < rest ? rest - nl - 1 : 0;
    memcpy(host, data + HEAD + nl + (nl < rest), hl);
    host[hl] = '\0';
    struct kb_pmix_value hv = {.type = (uint16_t)le(data + 16, 2)};
    if (hv.type == KB_PMIX_STRING)
        hv.data.string = host;
    else
        hv.data.uint64 = sz.data.uint64;
    p.size_rc = flags & 4 ? -46 : KB_PMIX_SUCCESS;
    p.size = flags & 4 ? NULL : &sz;
    p.host_rc = flags & 8 ? -46 : KB_PMIX_SUCCESS;
    p.host = flags & 8 ? NULL : &hv;
    char ns[KB_PMIX_MAX_NSLEN + 2];
    memcpy(ns, p.me.nspace, sizeof p.me.nspace);
    ns[sizeof p.me.nspace] = '\0';
    if (flags & 16)
        strcpy(ns, "other");

    struct gv_fleet_rank r = {.launcher = GV_LAUNCH_PMIX, .rank = data[1]};
    strcpy(r.node, "launcher");
    struct gv_err err = {0};
    int named = 0;
    int rc = gv_fleet_pmix_apply(&p, ns, flags & 1, &r, &named, &err);
    if (rc && (rc != GV_E_FORMAT || !strstr(err.msg, "PMIx")))
        abort();
    if (!rc && r.size && (r.rank >= r.size || r.size > GV_FLEET_LAUNCH_RANKS))
        abort();
    if (!rc && named && !gv_fleet_node_name_ok(r.node))
        abort();
    if (!memchr(r.note, '\0', sizeof r.note))
        abort();
    free(host);
    return 0;
}
