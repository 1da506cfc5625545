/* The PMIx client ABI as the fleet's launcher reads the job size
 * (src/fleet/pmix.c): the library file, the two structures it passes, the
 * data type and status codes, the keys. Facts with their source
 * (src/kb/pmix_abi.c); nothing here prints. Only what gpuvet uses is
 * declared, never PMIx's own headers. */
#ifndef GV_KB_PMIX_ABI_H
#define GV_KB_PMIX_ABI_H

#include <stdint.h>

/* PMIX_MAX_NSLEN: a namespace is char[PMIX_MAX_NSLEN + 1] */
enum { KB_PMIX_MAX_NSLEN = 255 };
/* PMIX_RANK_WILDCARD: the rank that asks for the job's own values */
#define KB_PMIX_RANK_WILDCARD (UINT32_MAX - 1)
/* pmix_data_type_t (uint16_t) codes */
enum { KB_PMIX_STRING = 3, KB_PMIX_UINT32 = 14 };
/* pmix_status_t (int) codes */
enum { KB_PMIX_SUCCESS = 0 };

/* pmix_proc_t: the namespace then the rank (260 bytes) */
struct kb_pmix_proc {
    char nspace[KB_PMIX_MAX_NSLEN + 1];
    uint32_t rank;
};

/* pmix_value_t: the type then the union. Only the members read here are
 * declared; the union's other members (pointers, uint64_t, double, struct
 * timeval) give it 8-byte alignment, as the uint64_t does here, so the
 * union starts at byte 8 in both. gpuvet never allocates or copies one:
 * PMIx_Get returns it and PMIx_Value_destruct plus free() releases it. */
struct kb_pmix_value {
    uint16_t type;
    union {
        char *string;
        uint32_t uint32;
        uint64_t uint64;
    } data;
};

struct kb_pmix_abi {
    const char *implementation; /* "OpenPMIx" */
    const char *versions;       /* the releases the row holds for */
    const char *library;        /* the file dlopen opens */
    const char *key_job_size;   /* PMIX_JOB_SIZE: uint32, asked of the wildcard rank */
    const char *key_hostname;   /* PMIX_HOSTNAME: string, asked of the process itself */
    const char *source;
};

const struct kb_pmix_abi *kb_pmix_abi(void);
/* "PMIX_UINT32" for a data type code gpuvet knows, else NULL. */
const char *kb_pmix_type_name(unsigned type);
/* "PMIX_ERR_UNREACH" for a status code gpuvet knows, else NULL. */
const char *kb_pmix_status_name(int status);

#endif
