/* Placeholder probe: replaced by the real one. */
#include "env/probe.h"
#include "base/json.h"

json_t *gv_probe_libraries(const struct gv_probe_ctx *ctx, const json_t *stacks,
                           const json_t *packages, const json_t *python)
{
    (void)ctx;
    (void)stacks;
    (void)packages;
    (void)python;
    return gv_section_missing(NULL, "probe not implemented yet");
}
