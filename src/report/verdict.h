/* The verdict of a gpuvet document in words: what the command that wrote it
 * says last and the exit status it gave (README, "Exit codes"). One place, so
 * that the report page and the command say the same thing: `gpuvet report`
 * opens every page with it, and the commands that print a document's verdict
 * (torch bisect, compare of captures and of check results, fleet compare)
 * print it from here. */
#ifndef GV_REPORT_VERDICT_H
#define GV_REPORT_VERDICT_H

#include <jansson.h>

struct gv_doc_verdict {
    int status;     /* 0 nothing wrong, 1 found something (the command exits 1), -1 no verdict:
                       the document records (a snapshot, a capture, a fingerprint) */
    char head[240]; /* "a call changed above ATen", "5 cases: 4 passed, 1 failed, ..." */
    char why[1400]; /* what made it so, "" when head says it all */
};

/* Fills v from doc (any gpuvet document; fields of the wrong type read as absent). */
void gv_verdict_of(const json_t *doc, struct gv_doc_verdict *v);
/* A fleet node's class in words: "numerics_outlier" -> "numerics outlier". */
const char *gv_fleet_class_words(const char *cls);

#endif
