#include "base/err.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int gv_err_set(struct gv_err *err, int code, const char *fmt, ...)
{
    if (!err)
        return code;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
    err->code = code;
    return code;
}

int gv_err_prefix(struct gv_err *err, const char *fmt, ...)
{
    if (!err)
        return GV_OK;
    char old[sizeof err->msg];
    memcpy(old, err->msg, sizeof old);
    char head[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(head, sizeof head, fmt, ap);
    va_end(ap);
    snprintf(err->msg, sizeof err->msg, "%s: %s", head, old);
    return err->code;
}

void gv_err_clear(struct gv_err *err)
{
    if (err) {
        err->code = 0;
        err->msg[0] = '\0';
    }
}

const char *gv_status_name(int code)
{
    switch (code) {
    case GV_OK: return "ok";
    case GV_E_IO: return "io";
    case GV_E_FORMAT: return "format";
    case GV_E_SCHEMA: return "schema";
    case GV_E_NOTFOUND: return "not-found";
    case GV_E_NOMEM: return "out-of-memory";
    case GV_E_LIB: return "library";
    case GV_E_DEVICE: return "device";
    case GV_E_TIMEOUT: return "timeout";
    case GV_E_USAGE: return "usage";
    case GV_E_UNSUPPORTED: return "unsupported";
    default: return "unknown";
    }
}
