/* Package-manager adapters of the planner (apt, dnf): steps 2, 3 and 6. */
#ifndef GV_PLAN_PKG_H
#define GV_PLAN_PKG_H

#include <jansson.h>

#include "base/err.h"
#include "plan/plan.h"

/* Steps 2 (one transaction back to the baseline versions, removing what the
 * baseline did not have) and 3 (hold them), with availability checks. */
int gv_plan_packages(json_t *plan, json_t *steps, const json_t *baseline, const json_t *current,
                     const struct gv_plan_opts *opts, struct gv_err *err);
/* Every package difference between the two snapshots that the plan does not
 * roll back (added, removed or at another version, outside the GPU stack, the
 * kernel driver and the distribution's PyTorch), each with why: the plan's
 * "not_rolled_back" array. */
void gv_plan_not_rolled_back(json_t *plan, const json_t *baseline, const json_t *current);
/* Step 6: the kernel driver package, only if it changed. */
int gv_plan_driver(json_t *plan, json_t *steps, const json_t *baseline, const json_t *current,
                   const struct gv_plan_opts *opts, struct gv_err *err);

/* Plan document builders (steps.c). */
json_t *gv_plan_argv(const char *first, ...); /* {"argv": [...]}; NULL-terminated */
json_t *gv_plan_step(json_t *steps, int phase, const char *title, const char *why);
void gv_plan_cmd(json_t *step, json_t *cmd);
void gv_plan_note(json_t *step, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Marks the plan incomplete. */
void gv_plan_problem(json_t *plan, const char *subject, const char *message, const char *how);
/* The same with a formatted message (values in it escaped with gv_escape, base/utf8.h). */
void gv_plan_problemf(json_t *plan, const char *subject, const char *how, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));


/* Does a path or loader configuration belong to a GPU stack (rocm, cuda,
 * hip, nvidia, amdgpu, /opt/ ...)? The C library's own ld.so.conf.d file
 * does not. */
int gv_gpu_path_hint(const char *s);
int gv_loader_conf_is_gpu(const json_t *conf);

/* Is version v of package name installable in root? Sets *local to the
 * in-root path of a cached .deb when only the local cache has it. */
int gv_apt_available(const char *root, const char *name, const char *version, const char *arch,
                     char *local, size_t localsz);

#endif
