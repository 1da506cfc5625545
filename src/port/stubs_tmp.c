/* TEMPORARY (deleted at merge): weak stand-ins for the other half of issue 37
 * (ext.c, hipcc.c), so 'gpuvet port scan --extensions' and 'gpuvet port check'
 * build and say plainly that they are not built yet. The real definitions
 * replace these at link time. */
#include "port/port.h"

__attribute__((weak)) int gv_port_extensions(const char *root, const struct gv_port_targets *t,
                                             json_t *findings, json_t *stats,
                                             struct gv_err *err)
{
    (void)root, (void)t, (void)findings, (void)stats;
    return gv_err_set(err, GV_E_UNSUPPORTED,
                      "port scan --extensions: the extension scan is not built yet");
}

__attribute__((weak)) int gv_port_compile(const char *root, const char *const *paths, size_t n,
                                          const struct gv_port_targets *t, json_t *findings,
                                          json_t *stats, struct gv_err *err)
{
    (void)root, (void)paths, (void)n, (void)t, (void)findings, (void)stats;
    return gv_err_set(err, GV_E_UNSUPPORTED, "port check: the compile check is not built yet");
}
