/* The source scan's lexers (lex.h): one pass over the bytes, no allocation. */
#include <string.h>

#include "port/lex.h"

void gv_lex_init(struct gv_lex *lx, const char *buf, size_t n, int python)
{
    memset(lx, 0, sizeof *lx);
    lx->p = buf;
    lx->end = buf + n;
    lx->line_start = buf;
    lx->line = 1;
    lx->python = python;
    lx->bol = 1;
}

int gv_tok_is(const struct gv_tok *t, const char *s)
{
    if (t->kind != GV_TOK_PUNCT && t->kind != GV_TOK_IDENT)
        return 0;
    if (!t->n || t->s[0] != s[0])
        return 0;
    size_t n = strlen(s);
    return t->n == n && !memcmp(t->s, s, n);
}

static int is_ident_start(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '$' || c >= 0x80;
}

static int is_ident_char(unsigned char c)
{
    return is_ident_start(c) || (c >= '0' && c <= '9');
}

static int is_digit(unsigned char c)
{
    return c >= '0' && c <= '9';
}

/* Past the newline at lx->p (which the caller has checked is '\n'). */
static void take_newline(struct gv_lex *lx)
{
    lx->p++;
    lx->line++;
    lx->line_start = lx->p;
}

/* A backslash, optional \r, then a newline at lx->p: a line continuation. */
static int continuation(const struct gv_lex *lx)
{
    const char *p = lx->p;
    if (p >= lx->end || *p != '\\')
        return 0;
    p++;
    if (p < lx->end && *p == '\r')
        p++;
    return p < lx->end && *p == '\n';
}

static void take_continuation(struct gv_lex *lx)
{
    while (*lx->p != '\n')
        lx->p++;
    take_newline(lx);
}

/* Skips one character of a literal or comment, newlines and continuations counted. */
static void take_char(struct gv_lex *lx)
{
    if (*lx->p == '\n')
        take_newline(lx);
    else if (continuation(lx))
        take_continuation(lx);
    else
        lx->p++;
}

static void skip_block_comment(struct gv_lex *lx)
{
    lx->p += 2;
    while (lx->p < lx->end && !(lx->p[0] == '*' && lx->p + 1 < lx->end && lx->p[1] == '/'))
        take_char(lx);
    lx->p = lx->p < lx->end ? lx->p + 2 : lx->end;
}

static void skip_line_comment(struct gv_lex *lx)
{
    while (lx->p < lx->end && *lx->p != '\n') {
        if (!lx->python && continuation(lx))
            take_continuation(lx); /* a // comment goes on after a backslash-newline */
        else
            lx->p++;
    }
}

/* Whitespace and comments; 1 when a token follows. */
static int skip_space(struct gv_lex *lx)
{
    while (lx->p < lx->end) {
        char c = *lx->p;
        if (c == '\n') {
            take_newline(lx);
            lx->in_pp = 0;
            lx->bol = 1;
        } else if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
            lx->p++;
        } else if (continuation(lx)) {
            take_continuation(lx);
        } else if (!lx->python && c == '/' && lx->p + 1 < lx->end && lx->p[1] == '/') {
            skip_line_comment(lx);
        } else if (!lx->python && c == '/' && lx->p + 1 < lx->end && lx->p[1] == '*') {
            skip_block_comment(lx);
        } else if (lx->python && c == '#') {
            skip_line_comment(lx);
        } else {
            return 1;
        }
    }
    return 0;
}

/* A quoted literal from the quote at lx->p to its closing quote (or the end
 * of the line: unterminated). */
static void take_quoted(struct gv_lex *lx, char q)
{
    lx->p++;
    while (lx->p < lx->end && *lx->p != q && *lx->p != '\n') {
        if (*lx->p == '\\' && lx->p + 1 < lx->end) {
            lx->p++;
            take_char(lx);
        } else {
            lx->p++;
        }
    }
    if (lx->p < lx->end && *lx->p == q)
        lx->p++;
}

/* R"delim( ... )delim" from the quote at lx->p; 0 (nothing taken) when the
 * delimiter is not a valid one. */
static int take_raw(struct gv_lex *lx)
{
    const char *d = lx->p + 1, *q = d;
    while (q < lx->end && q - d <= 16 && *q != '(' && *q != ')' && *q != '\\' && *q != ' ' &&
           *q != '"' && *q != '\n')
        q++;
    if (q >= lx->end || *q != '(' || q - d > 16)
        return 0;
    size_t dn = (size_t)(q - d);
    lx->p = q + 1;
    while (lx->p < lx->end) {
        if (*lx->p == ')' && (size_t)(lx->end - lx->p) > dn + 1 && !memcmp(lx->p + 1, d, dn) &&
            lx->p[1 + dn] == '"') {
            lx->p += dn + 2;
            return 1;
        }
        if (*lx->p == '\n')
            take_newline(lx);
        else
            lx->p++;
    }
    return 1;
}

static void take_number(struct gv_lex *lx, int python)
{
    while (lx->p < lx->end) {
        unsigned char c = (unsigned char)*lx->p;
        if ((c == 'e' || c == 'E' || (!python && (c == 'p' || c == 'P'))) &&
            lx->p + 1 < lx->end && (lx->p[1] == '+' || lx->p[1] == '-'))
            lx->p += 2;
        else if (is_ident_char(c) || c == '.')
            lx->p++;
        else if (!python && c == '\'' && lx->p + 1 < lx->end &&
                 is_ident_char((unsigned char)lx->p[1]))
            lx->p++;
        else
            break;
    }
}

static const char *const c_punct3[] = {"<<=", ">>=", "...", "->*", NULL};
static const char *const c_punct2[] = {"<<", ">>", "&&", "||", "::", "->", "==", "!=", "<=",
                                       ">=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=",
                                       "++", "--", "##", ".*", NULL};
static const char *const py_punct3[] = {"**=", "//=", ">>=", "<<=", "...", NULL};
static const char *const py_punct2[] = {"==", "!=", "<=", ">=", "->", "**", "//", "+=", "-=",
                                        "*=", "/=", ":=", "<<", ">>", "&=", "|=", "%=", "@=",
                                        "^=", NULL};

static size_t punct_len(const struct gv_lex *lx)
{
    size_t left = (size_t)(lx->end - lx->p);
    const char *const *p3 = lx->python ? py_punct3 : c_punct3;
    const char *const *p2 = lx->python ? py_punct2 : c_punct2;
    for (int i = 0; left >= 3 && p3[i]; i++)
        if (!memcmp(lx->p, p3[i], 3))
            return 3;
    for (int i = 0; left >= 2 && p2[i]; i++)
        if (!memcmp(lx->p, p2[i], 2))
            return 2;
    return 1;
}

/* An identifier that is a C string or character prefix (L, u, U, u8, and R
 * forms) directly before a quote: takes the literal. */
static int c_prefixed(struct gv_lex *lx, struct gv_tok *t)
{
    static const char *const pre[] = {"L", "u", "U", "u8", "R", "LR", "uR", "UR", "u8R", NULL};
    if (lx->p >= lx->end || (*lx->p != '"' && *lx->p != '\''))
        return 0;
    for (int i = 0; pre[i]; i++) {
        if (strlen(pre[i]) != t->n || memcmp(t->s, pre[i], t->n))
            continue;
        int raw = t->s[t->n - 1] == 'R';
        if (*lx->p == '\'') {
            if (raw)
                return 0;
            take_quoted(lx, '\'');
            t->kind = GV_TOK_CHAR;
            return 1;
        }
        if (!raw || !take_raw(lx))
            take_quoted(lx, '"');
        t->kind = GV_TOK_STRING;
        return 1;
    }
    return 0;
}

static void c_token(struct gv_lex *lx, struct gv_tok *t)
{
    unsigned char c = (unsigned char)*lx->p;
    if (lx->in_pp && lx->pp_include && c == '<') {
        while (lx->p < lx->end && *lx->p != '>' && *lx->p != '\n')
            lx->p++;
        if (lx->p < lx->end && *lx->p == '>')
            lx->p++;
        t->kind = GV_TOK_HEADER;
    } else if (is_ident_start(c)) {
        while (lx->p < lx->end && is_ident_char((unsigned char)*lx->p))
            lx->p++;
        t->kind = GV_TOK_IDENT;
        t->n = (size_t)(lx->p - t->s);
        c_prefixed(lx, t);
    } else if (is_digit(c) || (c == '.' && lx->p + 1 < lx->end && is_digit((unsigned char)lx->p[1]))) {
        take_number(lx, 0);
        t->kind = GV_TOK_NUMBER;
    } else if (c == '"') {
        take_quoted(lx, '"');
        t->kind = GV_TOK_STRING;
    } else if (c == '\'') {
        take_quoted(lx, '\'');
        t->kind = GV_TOK_CHAR;
    } else {
        lx->p += punct_len(lx);
        t->kind = GV_TOK_PUNCT;
    }
}

/* A Python string from its quote at lx->p: '...', "...", '''...''', """...""". */
static void py_string(struct gv_lex *lx)
{
    char q = *lx->p;
    if (lx->end - lx->p >= 3 && lx->p[1] == q && lx->p[2] == q) {
        lx->p += 3;
        while (lx->p < lx->end) {
            if (*lx->p == '\\' && lx->p + 1 < lx->end) {
                lx->p++;
                take_char(lx);
            } else if (lx->end - lx->p >= 3 && lx->p[0] == q && lx->p[1] == q && lx->p[2] == q) {
                lx->p += 3;
                return;
            } else {
                take_char(lx);
            }
        }
        return;
    }
    take_quoted(lx, q);
}

static int py_prefix(const struct gv_tok *t)
{
    if (t->n > 2)
        return 0;
    for (size_t i = 0; i < t->n; i++)
        if (!strchr("rRbBuUfF", t->s[i]))
            return 0;
    return 1;
}

static void py_token(struct gv_lex *lx, struct gv_tok *t)
{
    unsigned char c = (unsigned char)*lx->p;
    if (is_ident_start(c)) {
        while (lx->p < lx->end && is_ident_char((unsigned char)*lx->p))
            lx->p++;
        t->kind = GV_TOK_IDENT;
        t->n = (size_t)(lx->p - t->s);
        if (lx->p < lx->end && (*lx->p == '"' || *lx->p == '\'') && py_prefix(t)) {
            py_string(lx);
            t->kind = GV_TOK_STRING;
        }
    } else if (is_digit(c) || (c == '.' && lx->p + 1 < lx->end && is_digit((unsigned char)lx->p[1]))) {
        take_number(lx, 1);
        t->kind = GV_TOK_NUMBER;
    } else if (c == '"' || c == '\'') {
        py_string(lx);
        t->kind = GV_TOK_STRING;
    } else {
        lx->p += punct_len(lx);
        t->kind = GV_TOK_PUNCT;
    }
}

static int is_include(const struct gv_tok *t)
{
    return gv_tok_is(t, "include") || gv_tok_is(t, "import") || gv_tok_is(t, "include_next");
}

int gv_lex_next(struct gv_lex *lx, struct gv_tok *t)
{
    memset(t, 0, sizeof *t);
    if (!skip_space(lx)) {
        t->kind = GV_TOK_EOF;
        t->s = lx->end;
        t->line = lx->line;
        return 0;
    }
    t->s = lx->p;
    t->line = lx->line;
    t->col = (long)(lx->p - lx->line_start) + 1;
    if (!lx->python && lx->bol && *lx->p == '#') {
        lx->in_pp = 1;
        lx->pp_tokens = 0;
        lx->pp_include = 0;
    }
    lx->bol = 0;
    if (lx->python)
        py_token(lx, t);
    else
        c_token(lx, t);
    t->n = (size_t)(lx->p - t->s);
    t->pp = lx->in_pp;
    if (lx->in_pp && ++lx->pp_tokens == 2 && is_include(t))
        lx->pp_include = 1;
    return 1;
}

void gv_tok_string_body(const struct gv_tok *t, const char **s, size_t *n)
{
    const char *p = t->s, *e = t->s + t->n;
    int raw = 0;
    while (p < e && *p != '"' && *p != '\'') {
        if (*p == 'R')
            raw = 1;
        p++;
    }
    if (p >= e) {
        *s = e;
        *n = 0;
        return;
    }
    char q = *p;
    size_t qn = 1;
    if (e - p >= 6 && p[1] == q && p[2] == q)
        qn = 3; /* a Python triple-quoted string */
    const char *b = p + qn;
    if (raw && qn == 1) {
        /* C++ R"d( ... )d": the body between the parentheses */
        const char *open = memchr(b, '(', (size_t)(e - b));
        size_t dn = open ? (size_t)(open - b) : 0;
        if (open && (size_t)(e - open) >= dn + 3 && e[-1] == '"' && e[-2 - (long)dn] == ')') {
            *s = open + 1;
            *n = (size_t)((e - 2 - dn) - (open + 1));
            return;
        }
    }
    const char *end = e;
    if ((size_t)(end - b) >= qn && end[-1] == q && (qn == 1 || (end[-2] == q && end[-3] == q)))
        end -= qn;
    if (end < b)
        end = b;
    *s = b;
    *n = (size_t)(end - b);
}

static int digit_value(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return 99;
}

long long gv_tok_int(const struct gv_tok *t, int *bits64)
{
    *bits64 = 0;
    if (t->kind != GV_TOK_NUMBER)
        return -1;
    const char *p = t->s, *e = t->s + t->n;
    int base = 10;
    if (e - p > 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
        base = 16, p += 2;
    else if (e - p > 2 && p[0] == '0' && (p[1] == 'b' || p[1] == 'B'))
        base = 2, p += 2;
    else if (e - p > 1 && p[0] == '0')
        base = 8, p++;
    unsigned long long v = 0;
    int any = base == 8;
    for (; p < e; p++) {
        if (*p == '\'')
            continue;
        int d = digit_value(*p);
        if (d >= base)
            break;
        if (v > (0x7fffffffffffffffULL - (unsigned)d) / (unsigned)base)
            return -1;
        v = v * (unsigned)base + (unsigned)d;
        any = 1;
    }
    int longs = 0;
    for (; p < e; p++) {
        if (*p == 'l' || *p == 'L')
            longs++;
        else if (*p != 'u' && *p != 'U')
            return -1; /* a float or something else */
    }
    if (!any)
        return -1;
    int is_signed_dec = base == 10;
    *bits64 = longs > 0 || v > 0xffffffffULL || (is_signed_dec && v > 0x7fffffffULL);
    return (long long)v;
}
