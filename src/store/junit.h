/* JUnit XML reports (the format CI systems read: testsuites/testsuite/
 * testcase with failure/error/skipped children), every string XML-escaped. */
#ifndef GV_STORE_JUNIT_H
#define GV_STORE_JUNIT_H

#include <stddef.h>

#include "base/err.h"

enum gv_junit_status { GV_JUNIT_PASS = 0, GV_JUNIT_FAILURE, GV_JUNIT_ERROR, GV_JUNIT_SKIPPED };

struct gv_junit_case {
    const char *classname; /* e.g. "gpuvet.check.gemm" */
    const char *name;      /* case id */
    double seconds;
    enum gv_junit_status status;
    const char *message;   /* one line, for the failure/error/skipped element */
    const char *text;      /* details (element body), may be NULL */
};

/* Appends s to out (malloc'ed, grown as needed) with &<>"' and control
 * characters escaped; invalid bytes become U+FFFD. Returns 0 or GV_E_NOMEM. */
int gv_xml_escape_append(char **out, size_t *len, size_t *cap, const char *s);

/* Writes the report atomically. */
int gv_junit_write(const char *path, const char *suite, const struct gv_junit_case *c, size_t n,
                   struct gv_err *err);

/* The builder every command's --junit uses: begin a suite, add cases (their
 * strings are copied, so a caller's buffer can be reused at once), save, free.
 * Running out of memory anywhere is reported once, by gv_junit_save (a NULL
 * builder from gv_junit_begin included). */
struct gv_junit;
struct gv_junit *gv_junit_begin(const char *suite);
void gv_junit_add(struct gv_junit *j, const char *classname, const char *name, double seconds,
                  enum gv_junit_status status, const char *message, const char *text);
int gv_junit_save(const struct gv_junit *j, const char *path, struct gv_err *err);
void gv_junit_free(struct gv_junit *j);

#endif
