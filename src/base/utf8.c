/* UTF-8 validation (utf8.h). */
#include "base/utf8.h"

#include <stdio.h>
#include <string.h>

size_t gv_utf8_len(const unsigned char *s, size_t n)
{
    unsigned c = s[0];
    size_t len;
    unsigned min;
    if (c < 0x80)
        return 1;
    if ((c & 0xe0) == 0xc0) {
        len = 2;
        min = 0x80;
        c &= 0x1f;
    } else if ((c & 0xf0) == 0xe0) {
        len = 3;
        min = 0x800;
        c &= 0x0f;
    } else if ((c & 0xf8) == 0xf0) {
        len = 4;
        min = 0x10000;
        c &= 0x07;
    } else {
        return 0;
    }
    if (len > n)
        return 0;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        c = (c << 6) | (s[i] & 0x3f);
    }
    if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
        return 0;
    return len;
}

unsigned gv_utf8_cp(const unsigned char *s, size_t len)
{
    unsigned c = len == 2 ? s[0] & 0x1f : len == 3 ? s[0] & 0x0f : s[0] & 0x07;
    if (len == 1)
        return s[0];
    for (size_t i = 1; i < len; i++)
        c = c << 6 | (s[i] & 0x3f);
    return c;
}

int gv_utf8_hidden(unsigned c)
{
    return (c >= 0x80 && c <= 0x9f) || c == 0x2028 || c == 0x2029 ||
           (c >= 0x202a && c <= 0x202e) || (c >= 0x2066 && c <= 0x2069);
}

const char *gv_escape(const char *s, char *out, size_t outsz)
{
    if (!outsz)
        return out;
    if (!s)
        s = "(none)";
    const unsigned char *u = (const unsigned char *)s;
    size_t n = strlen(s), o = 0, i = 0;
    while (i < n) {
        char piece[16];
        size_t len = 1;
        unsigned char b = u[i];
        if (b == '\\' || b == '\'' || b == '"')
            snprintf(piece, sizeof piece, "\\%c", b);
        else if (b == '\n' || b == '\t' || b == '\r')
            snprintf(piece, sizeof piece, "\\%c", b == '\n' ? 'n' : b == '\t' ? 't' : 'r');
        else if (b < 0x20 || b == 0x7f)
            snprintf(piece, sizeof piece, "\\x%02x", b);
        else if (b < 0x80)
            snprintf(piece, sizeof piece, "%c", b);
        else if (!(len = gv_utf8_len(u + i, n - i))) {
            len = 1;
            snprintf(piece, sizeof piece, "\\x%02x", b);
        } else if (gv_utf8_hidden(gv_utf8_cp(u + i, len)))
            snprintf(piece, sizeof piece, "\\u%04x", gv_utf8_cp(u + i, len));
        else {
            memcpy(piece, s + i, len);
            piece[len] = '\0';
        }
        size_t k = strlen(piece);
        if (o + k + 4 > outsz) { /* room for "..." and the end */
            snprintf(out + o, outsz - o, "%s", outsz - o > 3 ? "..." : "");
            return out;
        }
        memcpy(out + o, piece, k);
        o += k;
        i += len;
    }
    out[o] = '\0';
    return out;
}

int gv_text_line_ok(const char *s, size_t max)
{
    size_t n = s ? strlen(s) : 0;
    if (n == 0 || n > max)
        return 0;
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
            return 0;
    return 1;
}
