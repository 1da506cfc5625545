/* JUnit XML writer (see junit.h). */
#include "store/junit.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/fs.h"

struct sbuf {
    char *p;
    size_t len, cap;
    int oom;
};

static int grow(char **p, size_t *len, size_t *cap, size_t more)
{
    if (*len + more + 1 <= *cap)
        return 0;
    size_t nc = *cap ? *cap : 256;
    while (nc < *len + more + 1)
        nc *= 2;
    char *q = realloc(*p, nc);
    if (!q)
        return GV_E_NOMEM;
    *p = q;
    *cap = nc;
    return 0;
}

static int put(char **p, size_t *len, size_t *cap, const char *s, size_t n)
{
    if (grow(p, len, cap, n))
        return GV_E_NOMEM;
    memcpy(*p + *len, s, n);
    *len += n;
    (*p)[*len] = '\0';
    return 0;
}

/* Length of a valid UTF-8 sequence at s (1..4), or 0 if invalid. */
static size_t utf8_len(const unsigned char *s)
{
    unsigned char c = s[0];
    size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    if (n == 0 || (n == 2 && c < 0xc2))
        return 0;
    for (size_t i = 1; i < n; i++)
        if ((s[i] & 0xc0) != 0x80)
            return 0;
    return n;
}

int gv_xml_escape_append(char **out, size_t *len, size_t *cap, const char *s)
{
    const unsigned char *p = (const unsigned char *)(s ? s : "");
    int rc = 0;
    while (*p && !rc) {
        const char *rep = NULL;
        switch (*p) {
        case '&': rep = "&amp;"; break;
        case '<': rep = "&lt;"; break;
        case '>': rep = "&gt;"; break;
        case '"': rep = "&quot;"; break;
        case '\'': rep = "&apos;"; break;
        case '\t': rep = "&#9;"; break;
        case '\n': rep = "&#10;"; break;
        case '\r': rep = "&#13;"; break;
        default: break;
        }
        if (rep) {
            rc = put(out, len, cap, rep, strlen(rep));
            p++;
        } else if (*p < 0x20 || *p == 0x7f) {
            rc = put(out, len, cap, "?", 1); /* not allowed in XML 1.0 */
            p++;
        } else {
            size_t n = utf8_len(p);
            if (n == 0) {
                rc = put(out, len, cap, "\xef\xbf\xbd", 3);
                p++;
            } else {
                rc = put(out, len, cap, (const char *)p, n);
                p += n;
            }
        }
    }
    return rc;
}

static void sb_raw(struct sbuf *b, const char *s)
{
    if (!b->oom && put(&b->p, &b->len, &b->cap, s, strlen(s)))
        b->oom = 1;
}

static void sb_esc(struct sbuf *b, const char *s)
{
    if (!b->oom && gv_xml_escape_append(&b->p, &b->len, &b->cap, s))
        b->oom = 1;
}

static void sb_fmt(struct sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_fmt(struct sbuf *b, const char *fmt, ...)
{
    char tmp[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    sb_raw(b, tmp);
}

static const char *const elem[] = {NULL, "failure", "error", "skipped"};

static void one_case(struct sbuf *b, const struct gv_junit_case *c)
{
    sb_raw(b, "    <testcase classname=\"");
    sb_esc(b, c->classname);
    sb_raw(b, "\" name=\"");
    sb_esc(b, c->name);
    sb_fmt(b, "\" time=\"%.6f\"", c->seconds >= 0 ? c->seconds : 0.0);
    if (c->status == GV_JUNIT_PASS || (unsigned)c->status > GV_JUNIT_SKIPPED) {
        sb_raw(b, "/>\n");
        return;
    }
    sb_fmt(b, ">\n      <%s message=\"", elem[c->status]);
    sb_esc(b, c->message);
    if (c->status != GV_JUNIT_SKIPPED)
        sb_fmt(b, "\" type=\"%s\"", elem[c->status]);
    else
        sb_raw(b, "\"");
    if (c->text && c->text[0]) {
        sb_raw(b, ">");
        sb_esc(b, c->text);
        sb_fmt(b, "</%s>\n", elem[c->status]);
    } else {
        sb_raw(b, "/>\n");
    }
    sb_raw(b, "    </testcase>\n");
}

int gv_junit_write(const char *path, const char *suite, const struct gv_junit_case *c, size_t n,
                   struct gv_err *err)
{
    struct sbuf b = {0};
    size_t count[4] = {0};
    double total = 0;
    for (size_t i = 0; i < n; i++) {
        if ((unsigned)c[i].status <= GV_JUNIT_SKIPPED)
            count[c[i].status]++;
        total += c[i].seconds > 0 ? c[i].seconds : 0;
    }
    sb_raw(&b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n  <testsuite name=\"");
    sb_esc(&b, suite);
    sb_fmt(&b, "\" tests=\"%zu\" failures=\"%zu\" errors=\"%zu\" skipped=\"%zu\" time=\"%.6f\">\n",
           n, count[GV_JUNIT_FAILURE], count[GV_JUNIT_ERROR], count[GV_JUNIT_SKIPPED], total);
    for (size_t i = 0; i < n; i++)
        one_case(&b, &c[i]);
    sb_raw(&b, "  </testsuite>\n</testsuites>\n");
    if (b.oom) {
        free(b.p);
        return gv_err_set(err, GV_E_NOMEM, "%s: out of memory building the JUnit report", path);
    }
    int rc = gv_write_atomic(path, b.p, b.len, 0644, err);
    free(b.p);
    return rc;
}

/* ---- the builder ---- */

struct gv_junit {
    char *suite;
    struct gv_junit_case *c;
    size_t n, cap;
    int oom;
};

static char *copy(struct gv_junit *j, const char *s)
{
    char *d = s ? strdup(s) : NULL;
    j->oom |= s && !d;
    return d;
}

struct gv_junit *gv_junit_begin(const char *suite)
{
    struct gv_junit *j = calloc(1, sizeof *j);
    if (j && !(j->suite = strdup(suite ? suite : ""))) {
        free(j);
        j = NULL;
    }
    return j;
}

void gv_junit_add(struct gv_junit *j, const char *classname, const char *name, double seconds,
                  enum gv_junit_status status, const char *message, const char *text)
{
    if (!j || j->oom)
        return;
    if (j->n == j->cap) {
        size_t cap = j->cap ? 2 * j->cap : 16;
        struct gv_junit_case *c = realloc(j->c, cap * sizeof *c);
        if (!c) {
            j->oom = 1;
            return;
        }
        j->c = c;
        j->cap = cap;
    }
    struct gv_junit_case *c = &j->c[j->n++];
    *c = (struct gv_junit_case){.seconds = seconds, .status = status};
    c->classname = copy(j, classname);
    c->name = copy(j, name);
    c->message = copy(j, message);
    c->text = copy(j, text);
}

int gv_junit_save(const struct gv_junit *j, const char *path, struct gv_err *err)
{
    if (!j || j->oom)
        return gv_err_set(err, GV_E_NOMEM, "%s: out of memory", path);
    return gv_junit_write(path, j->suite, j->c, j->n, err);
}

void gv_junit_free(struct gv_junit *j)
{
    if (!j)
        return;
    for (size_t i = 0; i < j->n; i++) {
        free((char *)j->c[i].classname);
        free((char *)j->c[i].name);
        free((char *)j->c[i].message);
        free((char *)j->c[i].text);
    }
    free(j->c);
    free(j->suite);
    free(j);
}
