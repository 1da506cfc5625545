/* The PMIx client ABI gpuvet relies on (src/kb/pmix_abi.h), from the PMIx
 * Standard (v4.1 and v5.0: "Data Structures and Types" for pmix_proc_t,
 * pmix_value_t, pmix_data_type_t and pmix_status_t; "Reserved attributes"
 * for PMIX_JOB_SIZE "pmix.job.size" (uint32_t, job-level: asked with the
 * rank PMIX_RANK_WILDCARD) and PMIX_HOSTNAME "pmix.hname" (char*)), checked
 * against pmix_common.h of OpenPMIx 4.2.2 (Debian 12, libpmix-dev):
 * PMIX_MAX_NSLEN 255, typedef char pmix_nspace_t[PMIX_MAX_NSLEN+1],
 * typedef uint32_t pmix_rank_t, PMIX_RANK_WILDCARD UINT32_MAX-1,
 * struct pmix_proc {pmix_nspace_t nspace; pmix_rank_t rank;},
 * struct pmix_value {pmix_data_type_t type; union {...} data;} with
 * pmix_data_type_t uint16_t (offsetof data 8, sizeof 32 on x86_64),
 * PMIX_STRING 3, PMIX_UINT32 14, the status codes below, and
 * PMIX_VALUE_RELEASE(m) = PMIX_VALUE_DESTRUCT(m) (PMIx_Value_destruct) then
 * free(m). OpenPMIx 5 and later define PMIX_VALUE_RELEASE as
 * PMIx_Value_free(m, 1), which destructs and frees, and still export
 * PMIx_Value_destruct; PMIx_Value_free did not free the struct itself in
 * every release, so gpuvet calls PMIx_Value_destruct and free() on all.
 * The soname: libpmix.so.2 (Debian 12 ships OpenPMIx 4.2.2 as libpmix2 with
 * /usr/lib/x86_64-linux-gnu/libpmix.so.2; Open MPI 4.1's libopenmpi3
 * depends on it). */
#include "kb/pmix_abi.h"

#include <stddef.h>

static const struct kb_pmix_abi abi = {
    "OpenPMIx", "3.x to 5.x", "libpmix.so.2", "pmix.job.size", "pmix.hname",
    "PMIx Standard v4.1/v5.0 (pmix_proc_t, pmix_value_t, PMIX_JOB_SIZE, PMIX_HOSTNAME); "
    "OpenPMIx 4.2.2 include/pmix_common.h",
};

const struct kb_pmix_abi *kb_pmix_abi(void)
{
    return &abi;
}

const char *kb_pmix_type_name(unsigned type)
{
    switch (type) {
    case KB_PMIX_STRING: return "PMIX_STRING";
    case 4: return "PMIX_SIZE";
    case 6: return "PMIX_INT";
    case 9: return "PMIX_INT32";
    case 11: return "PMIX_UINT";
    case 13: return "PMIX_UINT16";
    case KB_PMIX_UINT32: return "PMIX_UINT32";
    case 15: return "PMIX_UINT64";
    default: return NULL;
    }
}

const char *kb_pmix_status_name(int status)
{
    static const struct {
        int code;
        const char *name;
    } names[] = {
        {KB_PMIX_SUCCESS, "PMIX_SUCCESS"},     {-1, "PMIX_ERROR"},
        {-24, "PMIX_ERR_TIMEOUT"},             {-25, "PMIX_ERR_UNREACH"},
        {-27, "PMIX_ERR_BAD_PARAM"},           {-31, "PMIX_ERR_INIT"},
        {-46, "PMIX_ERR_NOT_FOUND"},
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (names[i].code == status)
            return names[i].name;
    return NULL;
}
