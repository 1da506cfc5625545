/* Verification that a machine is back at a baseline: the GPU-stack part of
 * the difference between the two snapshots must be empty; leftovers (GPU
 * library files no package owns) are listed. The numerics half (rerun the
 * suite, compare with the baseline results) is driven by src/cli/cmd_verify.c. */
#ifndef GV_PLAN_VERIFY_H
#define GV_PLAN_VERIFY_H

#include <jansson.h>

#include "base/err.h"

#define GV_VERIFY_SCHEMA "gpuvet.verify"
#define GV_VERIFY_SCHEMA_VERSION 1

/* *report: {schema, schema_version, baseline, stack_matches, differences[],
 * leftovers[], not_comparable[], other_changes} (docs/rollback.md). */
int gv_verify_stack(const json_t *baseline, const json_t *current, const char *baseline_name,
                    json_t **report, struct gv_err *err);

#endif
