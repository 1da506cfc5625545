/* Doctor rules: each area's file (rules_gpu.c, rules_torch.c, rules_rocm.c,
 * rules_env.c, rules_image.c) holds its checks and the table of its rules (id, severity,
 * title, check, reference); docs/doctor.md documents every id (a unit test
 * holds the two together). Each check
 * reads a snapshot (docs/snapshot-schema.md) and appends findings. Findings are
 * JSON objects (docs/doctor.md):
 *   {"rule", "severity": "error"|"warning"|"info", "title",
 *    "evidence": [{"path": "gpus.devices[0].kfd.gfx_target", "value": ...}],
 *    "fix": ["command or step", ...], "reference": "...", "checked": false?}
 * "checked": false marks "cannot check: X not collected" notes (info only).
 * Nothing here prints. */
#ifndef GV_KB_RULES_H
#define GV_KB_RULES_H

#include <jansson.h>
#include <stddef.h>

enum gv_severity { GV_SEV_INFO = 0, GV_SEV_WARNING = 1, GV_SEV_ERROR = 2 };
const char *gv_severity_name(enum gv_severity s);

struct gv_rule_ctx;
struct gv_rule {
    const char *id;
    enum gv_severity severity; /* the most severe finding it can report */
    const char *title;
    void (*check)(struct gv_rule_ctx *c);
    const char *reference;
    const char *issue_rule;    /* "4.1" ... the numbered rule of issue 4, or the origin */
};

/* The rules of every area, in report order: rule i (NULL past the last). */
size_t gv_rule_count(void);
const struct gv_rule *gv_rule_at(size_t i);
const struct gv_rule *gv_rule_find(const char *id);

/* Runs every rule over snapshot and returns a new array of findings, most
 * severe first (rule table order within one severity). Never NULL. */
json_t *gv_doctor_run(const json_t *snapshot);
/* Runs one rule (tests). */
json_t *gv_doctor_run_rule(const json_t *snapshot, const struct gv_rule *rule);
/* The two above with a host snapshot for the image rules (NULL: none). */
json_t *gv_doctor_run_host(const json_t *snapshot, const json_t *host);
json_t *gv_doctor_run_rule_host(const json_t *snapshot, const json_t *host,
                                const struct gv_rule *rule);

/* The gpuvet.doctor document: schema, version, summary, findings. */
#define GV_DOCTOR_SCHEMA "gpuvet.doctor"
#define GV_DOCTOR_SCHEMA_VERSION 1
json_t *gv_doctor_report(const json_t *snapshot, const char *snapshot_source);
/* The same for an image's snapshot against the host it is to run on (doctor
 * --image --host): the image rules that need a host (rules_image.c) read host,
 * a host snapshot; the report names it under "host_snapshot". host NULL: as
 * gv_doctor_report. */
json_t *gv_doctor_report_host(const json_t *snapshot, const char *snapshot_source,
                              const json_t *host, const char *host_source);

#endif
