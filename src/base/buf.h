/* A growable string buffer. On allocation failure the buffer remembers the
 * failure and further appends are ignored; check gv_buf_ok() at the end. */
#ifndef GV_BASE_BUF_H
#define GV_BASE_BUF_H

#include <stddef.h>

struct gv_buf {
    char *data; /* NUL-terminated, or NULL while empty */
    size_t len, cap;
    int failed;
};

void gv_buf_add(struct gv_buf *b, const char *s);
void gv_buf_addn(struct gv_buf *b, const char *s, size_t n);
void gv_buf_printf(struct gv_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int gv_buf_ok(const struct gv_buf *b);
/* Hands the string over to the caller (never NULL unless failed); resets b. */
char *gv_buf_take(struct gv_buf *b);
void gv_buf_free(struct gv_buf *b);

#endif
