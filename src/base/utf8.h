/* UTF-8: the one validator (env's JSON strings from arbitrary bytes, report's escaper)
 * and the one escaper of document text in messages. */
#ifndef GV_BASE_UTF8_H
#define GV_BASE_UTF8_H

#include <stddef.h>

/* Length of the valid UTF-8 sequence at s (at most n bytes, n >= 1), 0 when it
 * is not one (truncated, overlong, a surrogate, beyond U+10FFFF). */
size_t gv_utf8_len(const unsigned char *s, size_t n);
/* The code point of the valid sequence of len bytes at s (gv_utf8_len). */
unsigned gv_utf8_cp(const unsigned char *s, size_t len);
/* C1 controls, line/paragraph separators and the bidirectional overrides:
 * valid UTF-8 that moves or hides what a terminal shows. */
int gv_utf8_hidden(unsigned cp);
/* s as one safe line for a message, into out (always terminated; "..." where
 * it had to be cut): backslash, quotes, newline, tab and CR backslash-escaped,
 * other control bytes, DEL and bytes of invalid UTF-8 as \xNN, hidden code
 * points as \uNNNN, all other text kept. Every value from a document that a
 * message names goes through it. Returns out. */
const char *gv_escape(const char *s, char *out, size_t outsz);
/* s is one line of text of 1..max bytes: no control byte (below 0x20) and no
 * DEL. Used by every room that checks a document's short text fields. */
int gv_text_line_ok(const char *s, size_t max);

#endif
