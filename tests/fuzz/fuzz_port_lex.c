/* Fuzz target: the port scan's lexers (C and Python) and every scan rule over
 * the tokens. Checked on every input: each token lies inside the input, starts
 * after the previous one, has line >= 1 and column >= 1, lines never go back,
 * and a string's body lies inside its token; each finding has a line and
 * column inside the input's lines. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "port/rules.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static size_t lex_checked(const char *src, size_t size, int python, struct gv_tok *tok,
                          size_t cap)
{
    struct gv_lex lx;
    gv_lex_init(&lx, src, size, python);
    size_t n = 0;
    const char *prev_end = src;
    long prev_line = 1;
    while (n + 1 < cap && gv_lex_next(&lx, &tok[n])) {
        const struct gv_tok *t = &tok[n];
        if (t->s < prev_end || t->s + t->n > src + size || t->n == 0 || t->line < prev_line ||
            t->col < 1)
            abort();
        if (t->kind == GV_TOK_STRING) {
            const char *b;
            size_t bn;
            gv_tok_string_body(t, &b, &bn);
            if (b < t->s || b + bn > t->s + t->n)
                abort();
        }
        prev_end = t->s + t->n;
        prev_line = t->line;
        n++;
    }
    return n;
}

static void rules_over(const char *src, size_t size, int python)
{
    size_t cap = size + 2;
    struct gv_tok *tok = calloc(cap, sizeof *tok);
    if (!tok)
        return;
    size_t n = lex_checked(src, size, python, tok, cap);
    char names[2][32] = {"gfx942", "gfx1100"};
    struct gv_port_targets t = {.names = names, .n = 2, .any_wave64 = 1, .any_wave32 = 1};
    json_t *findings = json_array();
    struct port_file f = {.path = "fuzz", .data = src, .len = size, .tok = tok, .n = n,
                          .targets = &t, .findings = findings};
    size_t nr;
    const struct port_rule *r = python ? port_rules_py(&nr) : port_rules_cuda(&nr);
    for (size_t i = 0; i < nr; i++)
        r[i].match(&f, &r[i]);
    long lines = 1;
    for (size_t i = 0; i < size; i++)
        lines += src[i] == '\n';
    size_t i;
    json_t *o;
    json_array_foreach(findings, i, o) {
        json_int_t line = json_integer_value(json_object_get(o, "line"));
        if (line < 1 || line > lines || json_integer_value(json_object_get(o, "column")) < 1)
            abort();
    }
    json_decref(findings);
    free(tok);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *src = malloc(size + 1);
    if (!src)
        return 0;
    memcpy(src, data, size);
    src[size] = 0;
    rules_over(src, size, 0);
    rules_over(src, size, 1);
    free(src);
    return 0;
}
