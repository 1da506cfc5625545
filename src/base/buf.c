#include "base/buf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int reserve(struct gv_buf *b, size_t extra)
{
    if (b->failed)
        return -1;
    if (b->len + extra + 1 <= b->cap)
        return 0;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + extra + 1)
        cap *= 2;
    char *d = realloc(b->data, cap);
    if (!d) {
        b->failed = 1;
        return -1;
    }
    b->data = d;
    b->cap = cap;
    return 0;
}

void gv_buf_addn(struct gv_buf *b, const char *s, size_t n)
{
    if (reserve(b, n))
        return;
    memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = '\0';
}

void gv_buf_add(struct gv_buf *b, const char *s) { gv_buf_addn(b, s, strlen(s)); }

void gv_buf_printf(struct gv_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0 || reserve(b, (size_t)n))
        return;
    va_start(ap, fmt);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

int gv_buf_ok(const struct gv_buf *b) { return !b->failed; }

char *gv_buf_take(struct gv_buf *b)
{
    if (b->failed) {
        gv_buf_free(b);
        return NULL;
    }
    char *s = b->data ? b->data : strdup("");
    b->data = NULL;
    b->len = b->cap = 0;
    return s;
}

void gv_buf_free(struct gv_buf *b)
{
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
    b->failed = 0;
}
