#include "base/err.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <strings.h>

/* Appends n bytes of s to out[*len] (size outsz), always NUL-terminated. */
static void put(char *out, size_t outsz, size_t *len, const char *s, size_t n)
{
    if (*len + 1 >= outsz)
        return;
    if (n > outsz - 1 - *len)
        n = outsz - 1 - *len;
    memcpy(out + *len, s, n);
    *len += n;
    out[*len] = '\0';
}

/* The length of the userinfo password at s (just after "://"), and where it
 * starts; 0 when the authority has no user:password@. */
static size_t url_password(const char *s, size_t *start)
{
    size_t end = strcspn(s, "/?# \t\n\"'<>");
    const char *at = NULL;
    for (const char *p = s; p < s + end; p++) /* the last '@' ends the user part */
        if (*p == '@')
            at = p;
    const char *colon = at ? memchr(s, ':', (size_t)(at - s)) : NULL;
    if (!colon)
        return 0;
    *start = (size_t)(colon + 1 - s);
    return (size_t)(at - colon - 1);
}

static int password_key(const char *text, const char *p)
{
    return !strncasecmp(p, "password=", 9) && (p == text || strchr("?&; \t\"'", p[-1]));
}

void gv_redact(const char *text, char *out, size_t outsz)
{
    if (!outsz)
        return;
    size_t len = 0;
    out[0] = '\0';
    const char *p = text ? text : "";
    while (*p) {
        size_t start, n;
        if (!strncmp(p, "://", 3) && (n = url_password(p + 3, &start)) > 0) {
            put(out, outsz, &len, p, 3 + start);
            put(out, outsz, &len, "***", 3);
            p += 3 + start + n;
        } else if (password_key(text, p)) {
            put(out, outsz, &len, p, 9);
            put(out, outsz, &len, "***", 3);
            p += 9;
            p += strcspn(p, "&; \t\n\"'");
        } else {
            put(out, outsz, &len, p, 1);
            p++;
        }
    }
}

int gv_err_set(struct gv_err *err, int code, const char *fmt, ...)
{
    if (!err)
        return code;
    char msg[sizeof err->msg];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    gv_redact(msg, err->msg, sizeof err->msg);
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
    char msg[sizeof err->msg];
    snprintf(msg, sizeof msg, "%s: %s", head, old);
    gv_redact(msg, err->msg, sizeof err->msg);
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
