/* Judging change between two result files (before A, after B), case by case,
 * and finding likely causes in their embedded snapshots.
 *
 * Per case (present in both files, inputs proven identical by digest):
 *   identical       same output digest: bit-identical outputs
 *   noise           different bits, metrics within noise
 *   degraded        effective bits fell by more than GV_NOISE_BITS, or
 *                   err_over_bound grew by more than GV_NOISE_EOB (in units of
 *                   the bound) AND to more than GV_NOISE_RATIO times its old
 *                   value, or NaN/Inf appeared
 *   improved        the mirror image of degraded
 *   newly_failing   pass -> fail, or ran -> error
 *   newly_passing   fail -> pass, or error -> ran and passed
 *   still_failing   fail -> fail without further degradation
 *   not_run         error/skipped in both
 *   missing_before / missing_after: the case is in one file only
 * Cases whose input digests differ are a mismatch: the comparison would not
 * be like with like (the caller treats it as an error naming the case). */
#ifndef GV_NUM_COMPARE_H
#define GV_NUM_COMPARE_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "check/results.h"
#include "store/safetensors.h"
#include "kb/impl_class.h"
#include "kb/numsig.h"
#include "probe/probe.h"

#define GV_NOISE_BITS 1.0
#define GV_NOISE_EOB 0.25
#define GV_NOISE_RATIO 2.0

enum gv_change {
    GV_CH_IDENTICAL = 0,
    GV_CH_NOISE,
    GV_CH_IMPROVED,
    GV_CH_DEGRADED,
    GV_CH_NEWLY_FAILING,
    GV_CH_NEWLY_PASSING,
    GV_CH_STILL_FAILING,
    GV_CH_NOT_RUN,
    GV_CH_MISSING_BEFORE,
    GV_CH_MISSING_AFTER,
    GV_CH_INPUTS_DIFFER,
    GV_CH_COUNT
};
const char *gv_change_name(enum gv_change c); /* "identical", "noise", ... */
/* Flagged changes make `gpuvet compare` exit 1: degraded, newly_failing. */
int gv_change_flagged(enum gv_change c);

struct gv_cmp_case {
    const char *id;
    enum gv_change status;
    const struct gv_result_case *a, *b; /* NULL when missing */
    double dbits;                       /* effective bits after - before */
    int has_elem;                       /* element-wise comparison available */
    uint64_t max_ulp;                   /* max ULP difference in the output format */
    uint64_t ndiff;                     /* elements whose bits differ */
    uint64_t count;
    const struct kb_numsig *sig[3];     /* error signatures of a flagged case (kb/numsig.h) */
    int nsig;
    int group; /* explain.c: flagged cases with the same signatures and causes share a
                * group, numbered from 1 (gv_compare.ngroups of them); 0: none */
};

struct gv_cmp_cause {
    char kind[16];     /* "environment", "library", "device", "driver" */
    char name[128];
    char before[512];  /* "" when absent */
    char after[512];
    char note[256];    /* known numerics effect, or "" */
    /* evidence (gpuvet probe): 0 touches every flagged case, 1 some, 2 a known
     * numerics effect but no flagged case, 3 nothing known; causes are sorted by it */
    int rank;
    int touched;       /* flagged cases it touches */
    char touches[512]; /* their ids, ", "-separated ("..." when too many) */
    char change[64];   /* libraries: "same version, different file", "version changed" */
    int found;         /* the order in which it was found (the sort is stable on it) */
    /* explain.c: a route group (kind "route", name "FROM -> TO") holds every flagged
     * case whose impl changed from class `from` to class `to` (kb/impl_class.h);
     * NULL in a route cause of one case (name: its id) */
    const struct kb_impl_class *from, *to;
    /* explain.c: a library change a loader variable made (LD_LIBRARY_PATH ...): the
     * variable, its values before and after ("" when unset); "" when none */
    char mechanism[64];
    char mech_before[256];
    char mech_after[256];
};

/* Appends a cause to *causes (*n of them); NULL texts are "". Out of memory:
 * nothing is added. */
void gv_cmp_cause_add(struct gv_cmp_cause **causes, size_t *n, const char *kind, const char *name,
                      const char *before, const char *after, const char *change,
                      const char *note);
/* Counts a flagged case as touched by k and appends its id to k->touches. */
void gv_cmp_cause_touch(struct gv_cmp_cause *k, const char *id);

struct gv_compare {
    size_t n;
    struct gv_cmp_case *cases;
    size_t ncauses;
    struct gv_cmp_cause *causes;
    size_t count[GV_CH_COUNT];
    int flagged;                 /* any degraded / newly failing */
    int mismatches;              /* cases with different input digests */
    char outputs_note[512];      /* why element-wise comparison was not done, or "" */
    char routes_note[512];       /* which library the flagged cases ran through, or "" */
    size_t nfp;                  /* fingerprint properties that changed (check --probe) */
    struct gv_fp_change *fp;
    char fp_note[256];           /* why fingerprints were not compared, or "" */
    int ngroups;                 /* groups of flagged cases (gv_cmp_case.group) */
};

/* A comparison, judged and explained (explain.c). oa/ob: the saved outputs of
 * A and B, or NULL. Fails (GV_E_FORMAT) when an outputs file does not belong
 * to its results (digest of a tensor differs). The explanation: signatures of
 * flagged cases, causes ranked by evidence with the cases they touch, the
 * library the flagged cases ran through, and the fingerprint changes when both
 * files embed one. */
int gv_compare_results(const struct gv_results *a, const struct gv_results *b,
                       const struct gv_st_file *oa, const struct gv_st_file *ob,
                       struct gv_compare *out, struct gv_err *err);
/* The judgement alone (compare.c): each case's change and the unranked
 * causes, without the explanation. */
int gv_compare_judge(const struct gv_results *a, const struct gv_results *b,
                     const struct gv_st_file *oa, const struct gv_st_file *ob,
                     struct gv_compare *out, struct gv_err *err);
void gv_compare_free(struct gv_compare *c);
/* What differs between two stacks, unranked: the leaves of two device
 * descriptions (either may be NULL), the environment variables, GPU libraries
 * and driver modules of two embedded snapshots (NULL: not compared). *causes
 * is malloc'ed (free it); used by gpuvet's bench comparison (bench/compare.h). */
void gv_compare_stack_causes(const json_t *dev_a, const json_t *dev_b, const json_t *snap_a,
                             const json_t *snap_b, struct gv_cmp_cause **causes, size_t *n);
/* Whether cause k touches case x (a flagged case): a route cause, the cases of
 * its route; a library, the cases whose impl goes through it (or that its
 * loader variable touches); a variable with a known effect, the cases of the
 * op and format it acts on. */
int gv_cmp_cause_touches(const struct gv_cmp_cause *k, const struct gv_cmp_case *x);
/* The ids of the flagged cases that cause k touches (k != NULL), else of group
 * g (gv_cmp_case.group), in the order of the comparison: malloc'ed (free it,
 * not the ids), *n of them; NULL when none or out of memory. */
const char **gv_cmp_ids(const struct gv_compare *c, const struct gv_cmp_cause *k, int g,
                        size_t *n);
/* Ids named readably, without their count: "P*" when they are every case of
 * the comparison whose id starts with P (P ending at a '.'), else all of them
 * when all is set or there are at most 4, else the first three and "and N
 * more". malloc'ed; NULL when out of memory. */
char *gv_cmp_ids_text(const struct gv_compare *c, const char *const *ids, size_t n, int all);

/* The display name of a library ("cuBLAS" for "cublas"), or name itself. */
const char *gv_lib_display(const char *name);

/* Known numerics-affecting environment variables: a note, or NULL. */
const char *gv_numerics_env_note(const char *name);

#endif
