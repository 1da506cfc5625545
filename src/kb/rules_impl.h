/* Internal helpers shared by the rule files (rules_*.c). */
#ifndef GV_KB_RULES_IMPL_H
#define GV_KB_RULES_IMPL_H

#include <jansson.h>

#include "kb/kb.h"
#include "kb/rules.h"

struct gv_rule_ctx {
    const json_t *snap;
    const json_t *host;         /* the host the image runs on (doctor --host), else NULL */
    json_t *out;                /* findings array */
    const struct gv_rule *rule;
    int noted_missing;          /* a "cannot check" note was already added */
};

/* A new finding of the current rule, appended to c->out; title is printf-like. */
json_t *finding(struct gv_rule_ctx *c, enum gv_severity sev, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Evidence: path and a JSON value (borrowed: it is copied). */
void evidence(json_t *f, const char *path, const json_t *value);
void evidence_str(json_t *f, const char *path, const char *value);
void evidencef(json_t *f, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* One fix line (a command or a step). */
void fix(json_t *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Replace the rule's reference for this finding. */
void reference(json_t *f, const char *ref);

/* The section if it was collected; otherwise NULL, and (once per rule) an info
 * finding "cannot check: NAME not collected (reason)". */
const json_t *need(struct gv_rule_ctx *c, const char *name);
/* The section if collected, NULL otherwise, silently. */
const json_t *section(const json_t *snap, const char *name);

/* Snapshot accessors (NULL/0 when absent or of the wrong type). */
const char *jstr(const json_t *o, const char *key);
int jbool(const json_t *o, const char *key);            /* 1 only for JSON true */
int jhas_false(const json_t *o, const char *key);       /* 1 only for JSON false */
const json_t *jarr(const json_t *o, const char *key);   /* array or NULL */
const json_t *jobj(const json_t *o, const char *key);   /* object or NULL */

/* GPUs: the device's vendor ("amd"/"nvidia") and its real gfx target (from
 * kfd.gfx_target, else kfd.gfx_target_version), written to buf. */
int is_vendor(const json_t *dev, const char *vendor);
const char *dev_gfx(const json_t *dev, char *buf, size_t size);
/* Number of GPUs of vendor in a collected gpus section (-1 when not collected). */
int count_gpus(const json_t *snap, const char *vendor);
/* Is any software of kind ("rocm"/"cuda") installed: a stack of that kind,
 * or a torch built for it? */
int uses_stack(const json_t *snap, const char *kind);
/* AMD GPUs meant for compute: all of them, except that next to an NVIDIA GPU,
 * on a machine without any ROCm software, an AMD integrated GPU (an APU, or
 * one without KFD data) is only the CPU's display (a Ryzen iGPU in a CUDA
 * workstation). -1 when not collected. */
int amd_compute_gpus(const json_t *snap);

/* Environment variable from environment.variables, else from a profile.d
 * file's "sets"; path receives the evidence path. NULL when unset. */
const char *env_get(const json_t *snap, const char *name, char *path, size_t size);
/* The profile file named in an env_get/env_each evidence path, or NULL when
 * the value came from the process environment. */
const char *profile_file(const char *path, char *buf, size_t size);
/* Iterate over every variable (process first, then profile.d files);
 * fn returns nonzero to stop. */
void env_each(const json_t *snap,
              int (*fn)(const char *name, const char *value, const char *path, void *arg),
              void *arg);

/* ROCm: the install /opt/rocm resolves to (is_default), else the only ROCm
 * install; NULL when none or ambiguous. idx receives its index. */
const json_t *default_rocm(const json_t *snap, int *idx);
/* The ROCm release of a library file path, from libraries.items (rocm_release,
 * else the owning install's version); NULL when unknown. */
const char *release_of_path(const json_t *snap, const char *path);
/* The ROCm install whose prefix contains path; NULL if none. */
const json_t *install_of_path(const json_t *snap, const char *path);

/* torch in a Python environment: build ("rocm"/"cuda"/"cpu"), and the ROCm
 * line it was built for ("6.0", from +rocmX.Y or torch.version.hip) into buf. */
const char *torch_rocm(const json_t *torch, char *buf, size_t size);
/* "python -m pip" for this environment (interpreter when known) into buf. */
const char *pip_cmd(const json_t *env, char *buf, size_t size);
/* The gfx targets torch was compiled for: from the snapshot (collected
 * gpu_targets), else the kb's PYTORCH_ROCM_ARCH row. *from_kb tells which. */
const char *torch_targets(const json_t *torch, char *buf, size_t size, int *from_kb);

/* Each area's rule table (rules_<area>.c), joined by rules.c. A new rule is
 * one entry in its area's table, beside its check, and one docs/doctor.md row. */
#define GV_RULE_AREA(area)                                                                   \
    extern const struct gv_rule gv_rules_##area[];                                           \
    extern const size_t gv_rules_##area##_n;
GV_RULE_AREA(gpu)
GV_RULE_AREA(torch)
GV_RULE_AREA(rocm)
GV_RULE_AREA(env)
GV_RULE_AREA(image)
#undef GV_RULE_AREA

#endif
