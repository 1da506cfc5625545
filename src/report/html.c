/* HTML/SVG writing helpers (html.h). */
#include "base/utf8.h"
#include "report/html.h"
#include "base/json.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void gv_html_escn(struct gv_buf *b, const char *str, size_t n)
{
    if (!str)
        return;
    const unsigned char *s = (const unsigned char *)str;
    size_t i = 0, run = 0; /* bytes [i - run, i) are plain and not yet added */
    while (i < n) {
        const char *rep = NULL;
        size_t step = 1;
        unsigned c = s[i];
        switch (c) {
        case '&': rep = "&amp;"; break;
        case '<': rep = "&lt;"; break;
        case '>': rep = "&gt;"; break;
        case '"': rep = "&quot;"; break;
        case '\'': rep = "&#39;"; break;
        default:
            if ((c < 0x20 && c != '\t' && c != '\n') || c == 0x7f) {
                rep = "\xef\xbf\xbd";
            } else if (c >= 0x80) {
                step = gv_utf8_len(s + i, n - i);
                if (!step)
                    rep = "\xef\xbf\xbd", step = 1;
            }
        }
        if (rep) {
            gv_buf_addn(b, (const char *)s + i - run, run);
            gv_buf_add(b, rep);
            run = 0;
        } else {
            run += step;
        }
        i += step;
    }
    gv_buf_addn(b, (const char *)s + i - run, run);
}

void gv_html_esc(struct gv_buf *b, const char *s)
{
    if (s)
        gv_html_escn(b, s, strlen(s));
}

void gv_html_escf(struct gv_buf *b, const char *fmt, ...)
{
    char small[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n < sizeof small) {
        gv_html_escn(b, small, (size_t)n);
        return;
    }
    char *big = malloc((size_t)n + 1);
    if (!big) {
        b->failed = 1;
        return;
    }
    va_start(ap, fmt);
    vsnprintf(big, (size_t)n + 1, fmt, ap);
    va_end(ap);
    gv_html_escn(b, big, (size_t)n);
    free(big);
}

const char *gv_jstr(const json_t *o, const char *key)
{
    return json_string_value(json_object_get(o, key));
}

int gv_jnumv(const json_t *v, double *out)
{
    if (json_is_number(v)) {
        *out = json_number_value(v);
        return 1;
    }
    const char *s = json_string_value(v);
    if (!s)
        return 0;
    if (!strcmp(s, "inf"))
        *out = INFINITY;
    else if (!strcmp(s, "-inf"))
        *out = -INFINITY;
    else if (!strcmp(s, "nan"))
        *out = NAN;
    else
        return 0;
    return 1;
}

int gv_jnum(const json_t *o, const char *key, double *v)
{
    return gv_jnumv(json_object_get(o, key), v);
}

const json_t *gv_jobj(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    return json_is_object(v) ? v : NULL;
}

const json_t *gv_jarr(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    return json_is_array(v) ? v : NULL;
}

const char *gv_jpstr(const json_t *o, const char *path)
{
    char key[128];
    const json_t *cur = o;
    while (cur && *path) {
        const char *dot = strchr(path, '.');
        size_t n = dot ? (size_t)(dot - path) : strlen(path);
        if (n >= sizeof key)
            return NULL;
        memcpy(key, path, n);
        key[n] = '\0';
        cur = json_is_object(cur) ? json_object_get(cur, key) : NULL;
        path += n + (dot ? 1 : 0);
    }
    return json_string_value(cur);
}

void gv_fmt_num(char *out, size_t n, double v, int sig)
{
    if (isnan(v))
        snprintf(out, n, "nan");
    else if (isinf(v))
        snprintf(out, n, v > 0 ? "inf" : "-inf");
    else if (v == floor(v) && fabs(v) < 1e15)
        snprintf(out, n, "%.0f", v);
    else
        snprintf(out, n, "%.*g", sig, v);
}

/* The value as the document has it: integers exactly, reals round-tripping. */
static void raw_num(char *out, size_t n, const json_t *v)
{
    if (json_is_integer(v))
        snprintf(out, n, "%lld", (long long)json_integer_value(v));
    else if (json_is_real(v))
        snprintf(out, n, "%.17g", json_real_value(v));
    else
        snprintf(out, n, "%s", json_string_value(v) ? json_string_value(v) : "");
}

void gv_html_td_num(struct gv_buf *b, const json_t *o, const char *key, int sig)
{
    const json_t *jv = json_object_get(o, key);
    double v;
    if (!gv_jnumv(jv, &v)) {
        gv_buf_add(b, "<td class=\"num na\" data-v=\"\">—</td>");
        return;
    }
    char raw[64], txt[64];
    raw_num(raw, sizeof raw, jv);
    gv_fmt_num(txt, sizeof txt, v, sig);
    gv_buf_add(b, "<td class=\"num\" data-v=\"");
    gv_html_esc(b, raw);
    gv_buf_add(b, "\">");
    gv_html_esc(b, txt);
    gv_buf_add(b, "</td>");
}

void gv_html_td_str(struct gv_buf *b, const char *s, const char *cls)
{
    gv_buf_add(b, "<td");
    if (cls || !s) {
        gv_buf_add(b, " class=\"");
        gv_html_esc(b, cls ? cls : "na");
        gv_buf_add(b, "\"");
    }
    gv_buf_add(b, ">");
    if (s)
        gv_html_esc(b, s);
    else
        gv_buf_add(b, "—");
    gv_buf_add(b, "</td>");
}

void gv_html_json(struct gv_buf *b, const json_t *v)
{
    if (json_is_string(v)) {
        gv_html_esc(b, json_string_value(v));
        return;
    }
    char *s = gv_json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
    if (!s) {
        gv_buf_add(b, "—");
        return;
    }
    gv_html_esc(b, s);
    free(s);
}
