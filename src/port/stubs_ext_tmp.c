/* TEMPORARY (port-ext branch only; remove when the source scan merges):
 * weak stand-ins for P1's gv_port_finding and gv_port_scan (port.h), so
 * ext.c and hipcc.c build and are tested before scan.c exists. P1's strong
 * definitions replace these at link time; the file can then be deleted. */
#include "port/port.h"

#include "base/json.h"

__attribute__((weak)) json_t *gv_port_finding(const char *file, long line, long column,
                                              const char *rule, const char *severity,
                                              const char *message, const char *why,
                                              const char *source, const char *fix)
{
    json_t *f = json_object();
    if (!f)
        return NULL;
    gv_json_set_str(f, "file", file);
    json_object_set_new(f, "line", json_integer(line));
    json_object_set_new(f, "column", json_integer(column));
    gv_json_set_str(f, "rule", rule);
    gv_json_set_str(f, "severity", severity);
    gv_json_set_str(f, "message", message);
    gv_json_set_str(f, "why", why);
    gv_json_set_str(f, "source", source);
    gv_json_set_str(f, "fix", fix);
    return f;
}

/* No findings: the compile check then links no compiler error to a scan rule. */
__attribute__((weak)) int gv_port_scan(const char *const *paths, size_t n,
                                       const struct gv_port_targets *t, json_t *findings,
                                       json_t *stats, struct gv_err *err)
{
    (void)paths, (void)n, (void)t, (void)findings, (void)stats, (void)err;
    return GV_OK;
}
