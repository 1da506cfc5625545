/* Lexers for the source scan (internal to src/port): C/C++/CUDA/HIP and
 * Python. Comments are skipped; string and character literals are one token
 * each (rules look inside them only where they mean to: PTX text in asm(),
 * "hip" passed to torch); a preprocessor line continuation is whitespace.
 * Never a regular expression over raw text, so nothing inside a comment or a
 * string is taken for code. Tokens point into the caller's buffer; line and
 * column (bytes) count from 1. */
#ifndef GV_PORT_LEX_H
#define GV_PORT_LEX_H

#include <stddef.h>

enum gv_tok_kind {
    GV_TOK_EOF = 0,
    GV_TOK_IDENT,  /* identifier or keyword */
    GV_TOK_NUMBER, /* a preprocessing number: 32, 0xffffffffu, 1e-3f */
    GV_TOK_STRING, /* "..." with its prefix (L, u8, R"d(...)d", Python r/b/f, triple quotes) */
    GV_TOK_CHAR,   /* '...' in C */
    GV_TOK_HEADER, /* <name.h> after #include */
    GV_TOK_PUNCT,  /* an operator or punctuator, the longest of those the rules need */
};

struct gv_tok {
    enum gv_tok_kind kind;
    const char *s; /* first byte */
    size_t n;      /* length in bytes */
    long line, col;
    int pp;        /* 1: part of a preprocessor directive (C) */
};

struct gv_lex {
    const char *p, *end, *line_start;
    long line;
    int python;
    int in_pp;     /* inside a directive (until an unescaped newline) */
    int bol;       /* no token yet on this line */
    int pp_tokens; /* tokens so far in the directive */
    int pp_include;/* the directive is #include / #import */
};

void gv_lex_init(struct gv_lex *lx, const char *buf, size_t n, int python);
/* The next token in *t; 0 at the end of the input (t->kind GV_TOK_EOF). An
 * unterminated comment or literal ends at the end of the input. */
int gv_lex_next(struct gv_lex *lx, struct gv_tok *t);

/* t is the punctuator or identifier s (NUL-terminated). */
int gv_tok_is(const struct gv_tok *t, const char *s);

/* The value of a string token without prefix and quotes (raw strings: without
 * the delimiter), in *s, *n; escapes are left as written. */
void gv_tok_string_body(const struct gv_tok *t, const char **s, size_t *n);

/* A C integer literal's value (decimal, hex, octal, binary, with ' separators
 * and u/l suffixes); -1 when it is not one or does not fit. *bits64: the
 * literal has an ll/LL suffix or does not fit 32 bits. */
long long gv_tok_int(const struct gv_tok *t, int *bits64);

#endif
