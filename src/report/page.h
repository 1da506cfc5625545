/* Inside the report room: the page being written, the figures (inline SVG),
 * and one renderer per document schema (report.c holds the table). */
#ifndef GV_REPORT_PAGE_H
#define GV_REPORT_PAGE_H

#include <jansson.h>
#include <stddef.h>

#include "base/buf.h"
#include "base/err.h"
#include "report/html.h"

struct gv_page {
    struct gv_buf *b;
    int ids;          /* counter for element ids (figures, sections) */
    const char *path; /* the input being rendered, as given */
};

/* A fresh element id "gvN" into out. */
void gv_page_id(struct gv_page *p, char *out, size_t n);
/* <section> with heading and id; close with gv_page_end_section. */
void gv_page_section(struct gv_page *p, const char *kind, const char *title);
void gv_page_end_section(struct gv_page *p);
/* A verdict/change word with its symbol and class (colour is never the only
 * signal: the symbol and the word are text): <span class="v v-WORD">✓ pass</span>. */
void gv_page_verdict(struct gv_page *p, const char *word);
/* The class of such a word: "good", "bad", "warn" or "na". */
const char *gv_page_word_class(const char *word);
/* A document's key as a label for a reader, escaped: "equally_accurate" -> "equally accurate". */
void gv_page_label(struct gv_page *p, const char *key);
/* A key/value row of a definition table, the value escaped; NULL value: "—". */
void gv_page_kv(struct gv_page *p, const char *key, const char *value);
/* A note paragraph (escaped). */
void gv_page_note(struct gv_page *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Start a sortable table: <table class="sortable"> with the given headers;
 * a header starting with '#' is numeric (the '#' is not shown). */
void gv_page_table(struct gv_page *p, const char *caption, const char *const *heads, size_t n);
void gv_page_table_end(struct gv_page *p);

/* A history database's URL with any password replaced by *** (r_matrix.c): a
 * page is a file people pass around. */
void gv_page_db_name(const char *db, char *out, size_t n);

/* ---------- figures (svg.c) ---------- */

extern const char gv_svg_defs[]; /* shared markers and patterns, once per page */

struct gv_series {
    const char *label; /* legend text */
    const double *v;   /* one value per category / point (NaN: none) */
};

/* Grouped bars, one group per category, one bar per series (at most 3),
 * heights on a log scale of 1+v, each bar labelled with its value. */
void gv_svg_bars(struct gv_page *p, const char *title, const char *desc, const char *const *cats,
                 size_t ncat, const struct gv_series *s, size_t ns, const char *ylabel);

struct gv_mark {
    double x;
    const char *label; /* shown beside the line */
    int kind;          /* 0 culprit (solid), 1 other (dashed) */
};
/* Points along x (op index) for up to 3 series, log scale of 1+v, with
 * vertical marks (the culprit, a call change, the first difference). */
void gv_svg_curve(struct gv_page *p, const char *title, const char *desc, const double *x, size_t n,
                  const struct gv_series *s, size_t ns, const struct gv_mark *marks, size_t nm,
                  const char *xlabel, const char *ylabel);

struct gv_cell {
    int pass;          /* 1 pass, 0 fail, -1 unknown */
    const char *label; /* tooltip text */
};
/* A strip of cells in time order: pass a filled square, fail a crossed one. */
void gv_svg_strip(struct gv_page *p, const char *title, const char *desc, const struct gv_cell *c,
                  size_t n);

/* ---------- renderers (one per schema) ---------- */

typedef int (*gv_render_fn)(struct gv_page *p, const json_t *doc, struct gv_err *err);

int gv_render_snapshot(struct gv_page *p, const json_t *doc, struct gv_err *err);
int gv_render_results(struct gv_page *p, const json_t *doc, struct gv_err *err);
int gv_render_compare(struct gv_page *p, const json_t *doc, struct gv_err *err);
int gv_render_diff(struct gv_page *p, const json_t *doc, struct gv_err *err);
int gv_render_doctor(struct gv_page *p, const json_t *doc, struct gv_err *err);
int gv_render_probe(struct gv_page *p, const json_t *doc, struct gv_err *err);
int gv_render_capture(struct gv_page *p, const json_t *doc, struct gv_err *err);
int gv_render_capture_compare(struct gv_page *p, const json_t *doc, struct gv_err *err);
int gv_render_bisect(struct gv_page *p, const json_t *doc, struct gv_err *err);
int gv_render_matrix(struct gv_page *p, const json_t *doc, struct gv_err *err);
int gv_render_bench(struct gv_page *p, const json_t *doc, struct gv_err *err);
int gv_render_verify(struct gv_page *p, const json_t *doc, struct gv_err *err);
int gv_render_bench_compare(struct gv_page *p, const json_t *doc, struct gv_err *err);
int gv_render_fleet(struct gv_page *p, const json_t *doc, struct gv_err *err);
int gv_render_fleet_history(struct gv_page *p, const json_t *doc, struct gv_err *err);

/* Parts shared by renderers: the stack at a glance of a snapshot document
 * (a results file's embedded one too), and a device description. */
void gv_render_stack(struct gv_page *p, const char *title, const json_t *snap);
void gv_render_device(struct gv_page *p, const char *title, const json_t *desc);

#endif
