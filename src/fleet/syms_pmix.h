/* The PMIx client calls the fleet's launcher makes, opened at run time by
 * pmix.c (never linked). Signatures from the PMIx Standard (v4.1/v5.0,
 * "Initialization and Finalization": PMIx_Init, PMIx_Finalize; "Key/Value
 * Management": PMIx_Get) and OpenPMIx's pmix.h: pmix_status_t
 * PMIx_Init(pmix_proc_t *proc, pmix_info_t info[], size_t ninfo);
 * pmix_status_t PMIx_Get(const pmix_proc_t *proc, const char key[],
 * const pmix_info_t info[], size_t ninfo, pmix_value_t **val);
 * pmix_status_t PMIx_Finalize(const pmix_info_t info[], size_t ninfo);
 * void PMIx_Value_destruct(pmix_value_t *val) (what PMIX_VALUE_RELEASE
 * calls before free()). gpuvet passes no pmix_info_t (NULL, 0). The
 * structures and codes: src/kb/pmix_abi.h. */
#ifndef GV_FLEET_SYMS_PMIX_H
#define GV_FLEET_SYMS_PMIX_H

#include <stddef.h>

#include "kb/pmix_abi.h"

/* X(REQ|OPT, field, return type, (parameters), "exported name") */
#define GV_SYMS_PMIX(X)                                                                       \
    X(REQ, Init, int, (struct kb_pmix_proc *, void *, size_t), "PMIx_Init")                  \
    X(REQ, Get, int,                                                                          \
      (const struct kb_pmix_proc *, const char *, const void *, size_t,                      \
       struct kb_pmix_value **),                                                              \
      "PMIx_Get")                                                                             \
    X(REQ, Finalize, int, (const void *, size_t), "PMIx_Finalize")                           \
    X(REQ, Value_destruct, void, (struct kb_pmix_value *), "PMIx_Value_destruct")

#endif
