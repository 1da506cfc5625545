/* gv_backend_cuda and gv_backend_hip: the in-process backends behind a
 * worker process (worker.h explains why). */
#include <stdlib.h>

#include "dev/worker.h"

struct gv_device {
    struct gv_worker *w;
};

static int open_as(const char *name, const char *spec, struct gv_device **dev,
                   struct gv_err *err)
{
    *dev = NULL;
    struct gv_worker *w = NULL;
    int rc = gv_worker_open(name, spec, &w, err);
    if (rc)
        return rc;
    struct gv_device *d = malloc(sizeof *d);
    if (!d) {
        gv_worker_close(w);
        return gv_err_set(err, GV_E_NOMEM, "%s backend", name);
    }
    d->w = w;
    *dev = d;
    return GV_OK;
}

static int open_cuda(const char *spec, struct gv_device **dev, struct gv_err *err)
{
    return open_as("cuda", spec, dev, err);
}

static int open_hip(const char *spec, struct gv_device **dev, struct gv_err *err)
{
    return open_as("hip", spec, dev, err);
}

static void close_dev(struct gv_device *d)
{
    if (d) {
        gv_worker_close(d->w);
        free(d);
    }
}

static json_t *describe(struct gv_device *d) { return gv_worker_describe(d->w); }

static int supports(struct gv_device *d, const struct gv_case *c, struct gv_err *why)
{
    return gv_worker_supports(d->w, c, why);
}

static int run(struct gv_device *d, const struct gv_case *c, const struct gv_buffer *in, int nin,
               struct gv_buffer *out, struct gv_run_info *info, struct gv_err *err)
{
    return gv_worker_run(d->w, c, in, nin, out, info, err);
}

const struct gv_backend gv_backend_cuda = {"cuda", open_cuda, close_dev, describe, supports, run};
const struct gv_backend gv_backend_hip = {"hip", open_hip, close_dev, describe, supports, run};
