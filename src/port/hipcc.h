/* The compile check's reader of compiler diagnostics (hipcc.c), exposed for
 * its fuzz target (tests/fuzz/fuzz_hipccdiag.c). The compiler's output quotes
 * the user's source text, so it is read as hostile input. */
#ifndef GV_PORT_HIPCC_H
#define GV_PORT_HIPCC_H

struct gv_port_diag {
    char *file;           /* non-empty, inside the line */
    long line, column;    /* both > 0 */
    const char *severity; /* "error" (also for "fatal error"), "warning" or "note" */
    char *message;        /* the rest of the line */
};

/* Splits one line of clang's output, "FILE:LINE:COL: error: MSG" (or
 * "fatal error", "warning", "note"), in place (NULs written into line). 0
 * when the line is such a diagnostic, -1 when not ("In file included from",
 * source lines, anything else). */
int gv_port_split_diagnostic(char *line, struct gv_port_diag *d);

#endif
