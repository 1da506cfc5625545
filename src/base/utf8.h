/* UTF-8: the one validator (env's JSON strings from arbitrary bytes, report's escaper). */
#ifndef GV_BASE_UTF8_H
#define GV_BASE_UTF8_H

#include <stddef.h>

/* Length of the valid UTF-8 sequence at s (at most n bytes, n >= 1), 0 when it
 * is not one (truncated, overlong, a surrogate, beyond U+10FFFF). */
size_t gv_utf8_len(const unsigned char *s, size_t n);

#endif
