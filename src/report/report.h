/* gpuvet report: one self-contained HTML page for gpuvet documents
 * (docs/report.md). The page is a view: every number on it is one that a
 * document holds, formatted; the only things derived are histogram bins of
 * saved output tensors. No network, no external resources; figures are
 * inline SVG; a small inline script only sorts tables. */
#ifndef GV_REPORT_REPORT_H
#define GV_REPORT_REPORT_H

#include <jansson.h>
#include <stddef.h>

#include "base/buf.h"
#include "base/err.h"

#define GV_REPORT_MAX_JSON ((size_t)512 << 20)

struct gv_report_input {
    const char *path; /* as given on the command line (shown, and used to find
                         files a document names relative to itself) */
    const json_t *doc;
};

/* Whether this build renders doc: its "schema" is in the renderer table and
 * its "schema_version" is the one the table names. Otherwise GV_E_SCHEMA with
 * a message naming path, the schema and the version. */
int gv_report_check(const char *path, const json_t *doc, struct gv_err *err);

/* Reads one input: a JSON document, or a capture (.gvcap, by its magic) whose
 * index is the document. SQLite databases are the caller's (cli) to turn into
 * a gpuvet.matrix document. */
int gv_report_load(const char *path, json_t **doc, struct gv_err *err);

/* Whether the file starts with the 16-byte SQLite header "SQLite format 3\0". */
int gv_report_is_sqlite(const char *path);

/* The page for in[0..n) into out. title NULL: made from the inputs. */
int gv_report_render(const struct gv_report_input *in, size_t n, const char *title,
                     struct gv_buf *out, struct gv_err *err);

/* The schemas the table knows, "name v1, name v1, ..." (for --help). */
void gv_report_schemas(struct gv_buf *out);

#endif
