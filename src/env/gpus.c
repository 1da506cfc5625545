/* Placeholder probe: replaced by the real one. */
#include "env/probe.h"
#include "base/json.h"

json_t *gv_probe_gpus(const struct gv_probe_ctx *ctx)
{
    (void)ctx;
    return gv_section_missing(NULL, "probe not implemented yet");
}
