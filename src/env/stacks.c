/* Placeholder probe: replaced by the real one. */
#include "env/probe.h"
#include "base/json.h"

json_t *gv_probe_stacks(const struct gv_probe_ctx *ctx, const json_t *packages)
{
    (void)ctx;
    (void)packages;
    return gv_section_missing(NULL, "probe not implemented yet");
}
