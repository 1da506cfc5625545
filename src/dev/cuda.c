/* Placeholder backend: replaced by the real one. */
#include "dev/backend.h"

static int open_dev(const char *spec, struct gv_device **dev, struct gv_err *err)
{
    (void)spec;
    *dev = NULL;
    return gv_err_set(err, GV_E_UNSUPPORTED, "the cuda backend is not implemented yet");
}

static void close_dev(struct gv_device *dev) { (void)dev; }

static json_t *describe(struct gv_device *dev)
{
    (void)dev;
    return json_object();
}

static int supports(struct gv_device *dev, const struct gv_case *c, struct gv_err *why)
{
    (void)dev;
    (void)c;
    return gv_err_set(why, GV_E_UNSUPPORTED, "not implemented");
}

static int run(struct gv_device *dev, const struct gv_case *c, const struct gv_buffer *in, int nin,
               struct gv_buffer *out, struct gv_run_info *info, struct gv_err *err)
{
    (void)dev; (void)c; (void)in; (void)nin; (void)out; (void)info;
    return gv_err_set(err, GV_E_UNSUPPORTED, "not implemented");
}

const struct gv_backend gv_backend_cuda = {"cuda", open_dev, close_dev, describe, supports, run};
