/* The port scan's lexers (src/port/lex.c): comments, strings, raw strings,
 * character literals, line continuations, #include names, Python strings,
 * and the line and column of every token. */
#include <string.h>

#include "port/lex.h"
#include "t.h"

/* The tokens of src as "kind:text@line:col" joined by spaces (text of
 * strings and headers as written). */
static void lex(const char *src, int python, char *out, size_t outsz)
{
    struct gv_lex lx;
    struct gv_tok t;
    static const char kinds[] = "EINSCHP";
    size_t len = 0;
    out[0] = 0;
    gv_lex_init(&lx, src, strlen(src), python);
    while (gv_lex_next(&lx, &t) && len < outsz) {
        int k = snprintf(out + len, outsz - len, "%s%c:%.*s@%ld:%ld", len ? " " : "",
                         kinds[t.kind], (int)t.n, t.s, t.line, t.col);
        if (k < 0)
            break;
        len += (size_t)k;
    }
}

static void test_comments(void)
{
    char out[1024];
    lex("a /* b\n c */ d // e f\ng", 0, out, sizeof out);
    T_EQ_STR(out, "I:a@1:1 I:d@2:7 I:g@3:1");
    /* a // comment goes on after a backslash-newline; the next line counts */
    lex("x // one \\\n two\ny", 0, out, sizeof out);
    T_EQ_STR(out, "I:x@1:1 I:y@3:1");
    /* unterminated block comment: the rest of the input */
    lex("p /* never closed\n q", 0, out, sizeof out);
    T_EQ_STR(out, "I:p@1:1");
    // comment openers inside a string are the string
    lex("s = \"// not /* a comment\";", 0, out, sizeof out);
    T_EQ_STR(out, "I:s@1:1 P:=@1:3 S:\"// not /* a comment\"@1:5 P:;@1:26");
}

static void test_strings_and_chars(void)
{
    char out[1024];
    lex("f(\"a\\\"b\", '\\'', '\"', L\"w\", u8\"x\")", 0, out, sizeof out);
    T_EQ_STR(out, "I:f@1:1 P:(@1:2 S:\"a\\\"b\"@1:3 P:,@1:9 C:'\\''@1:11 P:,@1:15 "
                  "C:'\"'@1:17 P:,@1:20 S:L\"w\"@1:22 P:,@1:26 S:u8\"x\"@1:28 P:)@1:33");
    /* an unterminated string ends at the end of its line */
    lex("\"open\nnext", 0, out, sizeof out);
    T_EQ_STR(out, "S:\"open@1:1 I:next@2:1");
}

static void test_raw_strings(void)
{
    char out[1024];
    lex("r = R\"x(a \"quoted\" )\" b\n c)x\"; d", 0, out, sizeof out);
    T_EQ_STR(out, "I:r@1:1 P:=@1:3 S:R\"x(a \"quoted\" )\" b\n c)x\"@1:5 P:;@2:6 I:d@2:8");
    struct gv_lex lx;
    struct gv_tok t;
    const char *src = "LR\"(body)\"", *s;
    size_t n;
    gv_lex_init(&lx, src, strlen(src), 0);
    T_CHECK(gv_lex_next(&lx, &t) && t.kind == GV_TOK_STRING);
    gv_tok_string_body(&t, &s, &n);
    T_CHECK(n == 4 && !memcmp(s, "body", 4));
    /* R as an identifier, not followed by a quote */
    lex("R + 1", 0, out, sizeof out);
    T_EQ_STR(out, "I:R@1:1 P:+@1:3 N:1@1:5");
}

static void test_continuations_and_pp(void)
{
    char out[1024];
    /* a continuation in code is whitespace; the token after it has its own line */
    lex("int a = \\\n  b & 31;", 0, out, sizeof out);
    T_EQ_STR(out, "I:int@1:1 I:a@1:5 P:=@1:7 I:b@2:3 P:&@2:5 N:31@2:7 P:;@2:9");
    /* #include <...> is one header token; a directive ends at its newline */
    struct gv_lex lx;
    struct gv_tok t;
    const char *src = "#include <cuda/std/x.h>\n#define W \\\n 32\nint v;";
    gv_lex_init(&lx, src, strlen(src), 0);
    int pp[16], kinds[16], k = 0;
    while (k < 16 && gv_lex_next(&lx, &t)) {
        pp[k] = t.pp;
        kinds[k++] = t.kind;
    }
    T_EQ_INT(k, 10);
    T_EQ_INT(kinds[2], GV_TOK_HEADER);
    T_CHECK(pp[0] && pp[1] && pp[2] && pp[3] && pp[4] && pp[5] && pp[6]); /* # define W 32 */
    T_CHECK(!pp[7] && !pp[8] && !pp[9]);
    /* numbers: hex with suffix, digit separators, exponents */
    lex("0xffffffffull 1'000 1e+5f .5", 0, out, sizeof out);
    T_EQ_STR(out, "N:0xffffffffull@1:1 N:1'000@1:15 N:1e+5f@1:21 N:.5@1:27");
    lex("a>>=b->c<<d", 0, out, sizeof out);
    T_EQ_STR(out, "I:a@1:1 P:>>=@1:2 I:b@1:5 P:->@1:6 I:c@1:8 P:<<@1:9 I:d@1:11");
}

static void test_int_values(void)
{
    struct gv_lex lx;
    struct gv_tok t;
    struct {
        const char *src;
        long long v;
        int bits64;
    } cases[] = {{"0xffffffff", 0xffffffffLL, 0}, {"0xFFFFFFFFu", 0xffffffffLL, 0},
                 {"0xffffffffull", 0xffffffffLL, 1}, {"0xffffffffUL", 0xffffffffLL, 1},
                 {"32", 32, 0}, {"0x1ffffffff", 0x1ffffffffLL, 1}, {"0b101", 5, 0},
                 {"017", 15, 0}, {"1.5", -1, 0}, {"0", 0, 0}, {"3'2", 32, 0}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        gv_lex_init(&lx, cases[i].src, strlen(cases[i].src), 0);
        T_CHECK(gv_lex_next(&lx, &t));
        int w;
        T_CHECK(gv_tok_int(&t, &w) == cases[i].v);
        if (cases[i].v >= 0)
            T_EQ_INT(w, cases[i].bits64);
    }
}

static void test_python(void)
{
    char out[2048];
    lex("x = 'hip'  # torch.device(\"hip\")\ny = \"\"\"doc\n\"hip\"\n\"\"\" + r'\\d' + b\"\"", 1,
        out, sizeof out);
    T_EQ_STR(out, "I:x@1:1 P:=@1:3 S:'hip'@1:5 I:y@2:1 P:=@2:3 S:\"\"\"doc\n\"hip\"\n\"\"\"@2:5 "
                  "P:+@4:5 S:r'\\d'@4:7 P:+@4:13 S:b\"\"@4:15");
    /* a continuation line, and == as one token */
    lex("if a == \\\n  b:", 1, out, sizeof out);
    T_EQ_STR(out, "I:if@1:1 I:a@1:4 P:==@1:6 I:b@2:3 P::@2:4");
    struct gv_lex lx;
    struct gv_tok t;
    const char *s, *src = "f'''a{b}'''";
    size_t n;
    gv_lex_init(&lx, src, strlen(src), 1);
    T_CHECK(gv_lex_next(&lx, &t) && t.kind == GV_TOK_STRING && t.n == strlen(src));
    gv_tok_string_body(&t, &s, &n);
    T_CHECK(n == 4 && !memcmp(s, "a{b}", 4));
}

int main(void)
{
    T_RUN(test_comments);
    T_RUN(test_strings_and_chars);
    T_RUN(test_raw_strings);
    T_RUN(test_continuations_and_pp);
    T_RUN(test_int_values);
    T_RUN(test_python);
    return t_done();
}
