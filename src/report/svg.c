/* Figures as inline SVG (page.h). Every figure has a <title> and a <desc>
 * (the values in words), role="img" and aria-labelledby; series differ by
 * shape and pattern as well as colour. Values are drawn on a log scale of
 * 1 + v, so that zero counts and zero errors have a place. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "report/page.h"

#define W 720.0
#define H 260.0
#define ML 64.0 /* margins: left, right, top, bottom */
#define MR 16.0
#define MT 28.0
#define MB 56.0

/* An x position we can place: finite and of a size op indexes have. */
static int placeable(double x)
{
    return isfinite(x) && fabs(x) <= 1e12;
}

static double lg(double v)
{
    if (isnan(v) || v <= 0)
        return 0;
    if (isinf(v))
        return 20;
    return log10(1 + v);
}

static void open_svg(struct gv_page *p, const char *title, const char *desc, double w, double h)
{
    char id[32];
    gv_page_id(p, id, sizeof id);
    gv_buf_printf(p->b,
                  "<figure class=\"fig\"><svg xmlns=\"http://www.w3.org/2000/svg\" role=\"img\" "
                  "viewBox=\"0 0 %.0f %.0f\" width=\"100%%\" preserveAspectRatio=\"xMinYMin meet\" "
                  "aria-labelledby=\"%s-t %s-d\"><title id=\"%s-t\">",
                  w, h, id, id, id);
    gv_html_esc(p->b, title);
    gv_buf_printf(p->b, "</title><desc id=\"%s-d\">", id);
    gv_html_esc(p->b, desc);
    gv_buf_add(p->b, "</desc>");
}

static void close_svg(struct gv_page *p, const char *title)
{
    gv_buf_add(p->b, "</svg><figcaption>");
    gv_html_esc(p->b, title);
    gv_buf_add(p->b, "</figcaption></figure>\n");
}

/* Horizontal grid lines and labels at v = 0, 1, 10, 100, ... up to top. */
static void log_axis(struct gv_page *p, double top, const char *ylabel, double h)
{
    double ph = h - MT - MB;
    for (int k = -1; k <= 20; k++) {
        double v = k < 0 ? 0 : pow(10, k);
        if (lg(v) > top * 1.0001)
            break;
        double y = MT + ph - lg(v) / top * ph;
        char t[32];
        gv_fmt_num(t, sizeof t, v, 3);
        gv_buf_printf(p->b,
                      "<line class=\"grid\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>"
                      "<text class=\"tick\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%s</text>",
                      ML, W - MR, y, y, ML - 4, y + 4, k <= 5 ? t : "");
        if (k > 5)
            gv_buf_printf(p->b, "<text class=\"tick\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">1e%d</text>",
                          ML - 4, y + 4, k);
    }
    gv_buf_printf(p->b,
                  "<text class=\"axis\" transform=\"translate(14 %.1f) rotate(-90)\" "
                  "text-anchor=\"middle\">",
                  MT + ph / 2);
    gv_html_esc(p->b, ylabel);
    gv_buf_add(p->b, " (log scale)</text>");
}

static double top_of(const struct gv_series *s, size_t ns, size_t n)
{
    double top = lg(1);
    for (size_t j = 0; j < ns; j++)
        for (size_t i = 0; i < n; i++)
            if (lg(s[j].v[i]) > top)
                top = lg(s[j].v[i]);
    return ceil(top * 1.05 * 10) / 10;
}

static void legend(struct gv_page *p, const struct gv_series *s, size_t ns, int points)
{
    double x = ML;
    for (size_t j = 0; j < ns; j++) {
        if (points)
            gv_buf_printf(p->b, "<use href=\"#gv-m%zu\" class=\"s%zu\" x=\"%.1f\" y=\"14\"/>", j, j,
                          x + 5);
        else
            gv_buf_printf(p->b, "<rect class=\"s%zu\" x=\"%.1f\" y=\"8\" width=\"12\" height=\"12\"/>",
                          j, x);
        gv_buf_printf(p->b, "<text class=\"leg\" x=\"%.1f\" y=\"18\">", x + 16);
        gv_html_esc(p->b, s[j].label);
        gv_buf_add(p->b, "</text>");
        x += 30 + 7.0 * (double)strlen(s[j].label ? s[j].label : "");
    }
}

/* Marker shapes (circle, square, triangle) and the hatching of series 1,
 * defined once per page (report.c writes them first). */
const char gv_svg_defs[] =
    "<svg class=\"defs\" aria-hidden=\"true\" width=\"0\" height=\"0\" "
    "xmlns=\"http://www.w3.org/2000/svg\"><defs><pattern id=\"gv-hatch\" width=\"6\" height=\"6\" "
    "patternUnits=\"userSpaceOnUse\" patternTransform=\"rotate(45)\"><rect width=\"6\" height=\"6\" "
    "class=\"hatch-bg\"/><line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"6\" class=\"hatch\"/></pattern>"
    "<circle id=\"gv-m0\" r=\"3.5\"/><rect id=\"gv-m1\" x=\"-3.5\" y=\"-3.5\" width=\"7\" "
    "height=\"7\"/><path id=\"gv-m2\" d=\"M0 -4.5 L4.5 3.5 L-4.5 3.5 Z\"/></defs></svg>\n";

void gv_svg_bars(struct gv_page *p, const char *title, const char *desc, const char *const *cats,
                 size_t ncat, const struct gv_series *s, size_t ns, const char *ylabel)
{
    if (ns > 3)
        ns = 3;
    open_svg(p, title, desc, W, H);
    double top = top_of(s, ns, ncat), ph = H - MT - MB, pw = W - ML - MR;
    log_axis(p, top, ylabel, H);
    double gw = ncat ? pw / (double)ncat : pw, bw = (gw - 8) / (double)(ns ? ns : 1);
    for (size_t i = 0; i < ncat; i++) {
        double gx = ML + gw * (double)i + 4;
        for (size_t j = 0; j < ns; j++) {
            double v = s[j].v[i];
            if (isnan(v))
                continue;
            double bh = lg(v) / top * ph, x = gx + bw * (double)j, y = MT + ph - bh;
            char t[32];
            gv_fmt_num(t, sizeof t, v, 4);
            gv_buf_printf(p->b, "<g><title>");
            gv_html_esc(p->b, s[j].label);
            gv_buf_add(p->b, ", ");
            gv_html_esc(p->b, cats[i]);
            gv_buf_printf(p->b, ": %s</title><rect class=\"bar s%zu\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
                                "height=\"%.1f\"/>",
                          t, j, x, y, bw > 1 ? bw - 1 : bw, bh < 0.5 && v > 0 ? 0.5 : bh);
            gv_buf_printf(p->b, "<text class=\"val\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text></g>",
                          x + bw / 2, y - 3, t);
        }
        if (ncat > 8) /* long lists of categories: slanted so that they do not overlap */
            gv_buf_printf(p->b, "<text class=\"cat\" text-anchor=\"end\" transform=\"translate(%.1f %.1f) rotate(-25)\">",
                          gx + gw / 2, MT + ph + 12);
        else
            gv_buf_printf(p->b, "<text class=\"cat\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">",
                          gx + gw / 2 - 4, MT + ph + 16);
        gv_html_esc(p->b, cats[i]);
        gv_buf_add(p->b, "</text>");
    }
    gv_buf_printf(p->b, "<line class=\"axisline\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>", ML,
                  W - MR, MT + ph, MT + ph);
    legend(p, s, ns, 0);
    close_svg(p, title);
}

/* The labels of a curve's vertical marks, in rows from the top: a label goes into the
 * first row where it overlaps no label already there, so that marks close together
 * (culprits on neighbouring ops) never write over each other. */
#define LABEL_ROWS 8
#define LABEL_ROW_H 14.0
#define LABELS_PER_ROW 64
struct label_rows {
    double x0[LABEL_ROWS][LABELS_PER_ROW], x1[LABEL_ROWS][LABELS_PER_ROW];
    size_t n[LABEL_ROWS];
};

/* The width of a label in the 11 px figure font, generously (6.2 px a character, UTF-8
 * continuation bytes not counted). */
static double label_width(const char *s)
{
    double chars = 0;
    for (; s && *s; s++)
        chars += ((unsigned char)*s & 0xc0) != 0x80;
    return chars * 6.2;
}

/* The row for a label spanning [x0, x1], marked taken; -1 when every row is taken there. */
static int label_row(struct label_rows *r, double x0, double x1)
{
    for (int row = 0; row < LABEL_ROWS; row++) {
        int free = r->n[row] < LABELS_PER_ROW;
        for (size_t k = 0; free && k < r->n[row]; k++)
            free = x1 + 4 < r->x0[row][k] || x0 > r->x1[row][k] + 4;
        if (!free)
            continue;
        r->x0[row][r->n[row]] = x0;
        r->x1[row][r->n[row]++] = x1;
        return row;
    }
    return -1;
}

void gv_svg_curve(struct gv_page *p, const char *title, const char *desc, const double *x, size_t n,
                  const struct gv_series *s, size_t ns, const struct gv_mark *marks, size_t nm,
                  const char *xlabel, const char *ylabel)
{
    if (ns > 3)
        ns = 3;
    open_svg(p, title, desc, W, H);
    double top = top_of(s, ns, n), ph = H - MT - MB, pw = W - ML - MR;
    double xmin = 0, xmax = 1;
    for (size_t i = 0; i < n; i++) {
        if (!placeable(x[i]))
            continue;
        if (x[i] < xmin)
            xmin = x[i];
        if (x[i] > xmax)
            xmax = x[i];
    }
    for (size_t i = 0; i < nm; i++)
        if (placeable(marks[i].x) && marks[i].x > xmax)
            xmax = marks[i].x;
#define XP(v) (ML + ((v) - xmin) / (xmax - xmin) * pw)
#define YP(v) (MT + ph - lg(v) / top * ph)
    log_axis(p, top, ylabel, H);
    gv_buf_printf(p->b, "<line class=\"axisline\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>", ML,
                  W - MR, MT + ph, MT + ph);
    double step = ceil((xmax - xmin) / 8);
    int ticks = 0; /* at most 10, whatever the values (huge, or too close for their magnitude) */
    for (double v = xmin; step > 0 && v <= xmax + 0.5 && ticks++ < 10; v += step)
        gv_buf_printf(p->b, "<text class=\"tick\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%.0f</text>",
                      XP(v), MT + ph + 14, v);
    gv_buf_printf(p->b, "<text class=\"axis\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">", ML + pw / 2,
                  H - 22);
    gv_html_esc(p->b, xlabel);
    gv_buf_add(p->b, "</text>");
    struct label_rows rows = {0};
    for (size_t i = 0; i < nm; i++) {
        if (!placeable(marks[i].x) || marks[i].x < xmin)
            continue;
        double mx = XP(marks[i].x);
        gv_buf_printf(p->b, "<g class=\"mark%s\"><title>", marks[i].kind ? " other" : " culprit");
        gv_html_esc(p->b, marks[i].label);
        gv_buf_printf(p->b, "</title><line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>", mx, mx, MT,
                      MT + ph);
        int right = mx > W / 2;
        double x0 = right ? mx - 3 : mx + 3, w = label_width(marks[i].label);
        int row = label_row(&rows, right ? x0 - w : x0, right ? x0 : x0 + w);
        if (row >= 0) { /* no free row: the line and its title (and the tables) still say it */
            gv_buf_printf(p->b, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\">", x0,
                          MT + 10 + LABEL_ROW_H * (double)row, right ? "end" : "start");
            gv_html_esc(p->b, marks[i].label);
            gv_buf_add(p->b, "</text>");
        }
        gv_buf_add(p->b, "</g>");
    }
    for (size_t j = 0; j < ns; j++) {
        gv_buf_printf(p->b, "<polyline class=\"line s%zu\" points=\"", j);
        for (size_t i = 0; i < n; i++)
            if (!isnan(s[j].v[i]) && placeable(x[i]))
                gv_buf_printf(p->b, "%.1f,%.1f ", XP(x[i]), YP(s[j].v[i]));
        gv_buf_add(p->b, "\"/>");
        for (size_t i = 0; i < n; i++) {
            if (isnan(s[j].v[i]) || !placeable(x[i]))
                continue;
            char t[32];
            gv_fmt_num(t, sizeof t, s[j].v[i], 4);
            gv_buf_printf(p->b, "<use href=\"#gv-m%zu\" class=\"s%zu\" x=\"%.1f\" y=\"%.1f\"><title>", j, j,
                          XP(x[i]), YP(s[j].v[i]));
            gv_html_esc(p->b, s[j].label);
            gv_buf_printf(p->b, ", at %.0f: %s</title></use>", x[i], t);
        }
    }
#undef XP
#undef YP
    legend(p, s, ns, 1);
    close_svg(p, title);
}

void gv_svg_strip(struct gv_page *p, const char *title, const char *desc, const struct gv_cell *c,
                  size_t n)
{
    /* rows of at most 20 cells, drawn at their own size (never scaled down) */
    const double cw = 7, gap = 1.5, ch = 12, rowh = 16;
    size_t per = n < 20 ? (n ? n : 1) : 20, rows = n ? (n + per - 1) / per : 1;
    double w = (double)per * (cw + gap), h = (double)rows * rowh;
    char id[32];
    gv_page_id(p, id, sizeof id);
    gv_buf_printf(p->b,
                  "<figure class=\"fig strip\"><svg xmlns=\"http://www.w3.org/2000/svg\" role=\"img\" "
                  "width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" aria-labelledby=\"%s-t %s-d\">"
                  "<title id=\"%s-t\">",
                  w, h, w, h, id, id, id);
    gv_html_esc(p->b, title);
    gv_buf_printf(p->b, "</title><desc id=\"%s-d\">", id);
    gv_html_esc(p->b, desc);
    gv_buf_add(p->b, "</desc>");
    for (size_t i = 0; i < n; i++) {
        double x = (double)(i % per) * (cw + gap), y = (double)(i / per) * rowh;
        const char *cls = c[i].pass == 1 ? "pass" : c[i].pass == 0 ? "fail" : "unknown";
        gv_buf_printf(p->b, "<g class=\"cell %s\"><title>", cls);
        gv_html_esc(p->b, c[i].label);
        if (c[i].pass == 1)
            gv_buf_printf(p->b, "</title><rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"/>", x, y + 1,
                          cw, ch);
        else
            gv_buf_printf(p->b, "</title><rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"/>", x,
                          y + 1 + ch / 3, cw, ch * 2 / 3);
        if (c[i].pass == 0)
            gv_buf_printf(p->b, "<path class=\"x\" d=\"M%.1f %.1f L%.1f %.1f M%.1f %.1f L%.1f %.1f\"/>", x + 0.5,
                          y + 1 + ch / 3, x + cw - 0.5, y + 1 + ch, x + cw - 0.5, y + 1 + ch / 3, x + 0.5, y + 1 + ch);
        gv_buf_add(p->b, "</g>");
    }
    gv_buf_add(p->b, "</svg></figure>\n");
}
