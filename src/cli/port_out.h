/* The output of gpuvet port (port_out.c): the text form, grouped by file with
 * the verdict first, and the JUnit report (one testcase per file). */
#ifndef GV_CLI_PORT_OUT_H
#define GV_CLI_PORT_OUT_H

#include <jansson.h>

#include "base/err.h"

/* Counts of a findings array by severity. */
struct cli_port_counts {
    size_t findings, files, errors, warnings, notes;
};
void cli_port_count(const json_t *findings, struct cli_port_counts *c);
/* The gpuvet.port document's text form on stdout. */
void cli_port_print(const json_t *doc);
/* The skipped files (stats.skipped) as notes on stderr. */
void cli_port_print_skipped(const char *cmd, const json_t *stats);
/* JUnit: one testcase per file in files (every file scanned) and per file
 * with findings; a failure for each file with error findings. */
int cli_port_junit(const char *path, const json_t *doc, const json_t *files, struct gv_err *err);

#endif
