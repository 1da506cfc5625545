/* Writing HTML and inline SVG into a buffer: escaping of every string that
 * comes from a document (and so from the inspected machine), typed lookups
 * that tolerate wrong field types, and number formatting. The report room
 * computes nothing: it formats what documents hold. */
#ifndef GV_REPORT_HTML_H
#define GV_REPORT_HTML_H

#include <jansson.h>
#include <stddef.h>

#include "base/buf.h"

/* Appends s escaped for HTML text, double- or single-quoted attribute values
 * and SVG/XML text alike: & < > " ' are replaced by entities, control
 * characters (except tab and newline) and invalid UTF-8 by U+FFFD. NULL
 * appends nothing. */
void gv_html_esc(struct gv_buf *b, const char *s);
void gv_html_escn(struct gv_buf *b, const char *s, size_t n);
/* printf-style, the formatted result escaped. */
void gv_html_escf(struct gv_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Typed lookups: NULL / 0 when the key is absent or of another type. */
const char *gv_jstr(const json_t *o, const char *key);
/* A number, or one of the strings "inf", "-inf", "nan" (documents write
 * non-finite numbers so). Returns 1 and sets *v when there is one. */
int gv_jnum(const json_t *o, const char *key, double *v);
int gv_jnumv(const json_t *v, double *out);
const json_t *gv_jobj(const json_t *o, const char *key);
const json_t *gv_jarr(const json_t *o, const char *key);
/* The same along a dotted path "a.b.c". */
const char *gv_jpstr(const json_t *o, const char *path);

/* Number formatting for display: up to sig significant digits, "inf",
 * "nan"; integers without a fraction. */
void gv_fmt_num(char *out, size_t n, double v, int sig);

/* <td> of a number: data-v holds the value as the document has it (for the
 * sorting script and for tests), the text is it formatted. Absent: "—". */
void gv_html_td_num(struct gv_buf *b, const json_t *o, const char *key, int sig);
/* <td> of a string (escaped), "—" when absent; cls may be NULL. */
void gv_html_td_str(struct gv_buf *b, const char *s, const char *cls);
/* Any JSON value as compact text (for evidence values and unknown fields). */
void gv_html_json(struct gv_buf *b, const json_t *v);

#endif
