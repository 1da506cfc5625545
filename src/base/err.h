/* Error records: deep code fills one and returns a status; only src/cli prints. */
#ifndef GV_BASE_ERR_H
#define GV_BASE_ERR_H

#include <stddef.h>

/* Status codes returned by library functions (0 = success). */
enum gv_status {
    GV_OK = 0,
    GV_E_IO = -1,       /* a file could not be read or written */
    GV_E_FORMAT = -2,   /* input is malformed, truncated or of the wrong kind */
    GV_E_SCHEMA = -3,   /* a file of another schema or schema version */
    GV_E_NOTFOUND = -4, /* something looked for is absent */
    GV_E_NOMEM = -5,
    GV_E_LIB = -6,      /* a vendor library is missing or lacks a symbol */
    GV_E_DEVICE = -7,   /* the device reported an error */
    GV_E_TIMEOUT = -8,
    GV_E_USAGE = -9,    /* invalid argument from the caller */
    GV_E_UNSUPPORTED = -10,
};

struct gv_err {
    int code;        /* enum gv_status, 0 when no error was recorded */
    char msg[1024];  /* "what failed: why", names the file/field/call */
};

/* Record an error (overwrites any earlier one). Returns code, so callers can
 * write `return gv_err_set(err, GV_E_IO, "...")`. err may be NULL. */
int gv_err_set(struct gv_err *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Prefix the recorded message with context: "reading X: <old message>". */
int gv_err_prefix(struct gv_err *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void gv_err_clear(struct gv_err *err);
/* Copies text to out with every secret it can recognise written as ***: the
 * password of a URL's user:password@ part ("postgresql://u:***@h/db") and the
 * value of a password=... parameter or key=value pair. gv_err_set and
 * gv_err_prefix pass every message through it; src/cli its other messages and
 * its own argv. */
void gv_redact(const char *text, char *out, size_t outsz);
const char *gv_status_name(int code);

#endif
