/* The source scan's rules (internal to src/port): one table per language,
 * like src/kb/rules_*.c for doctor. Each rule walks the tokens of one file
 * (lex.h) and reports through port_emit; the fact behind it (why, source)
 * is in src/kb/port_facts.c under the rule's id. */
#ifndef GV_PORT_RULES_H
#define GV_PORT_RULES_H

#include <jansson.h>

#include "port/lex.h"
#include "port/port.h"

enum port_scope {
    PORT_AMD = 0,    /* every AMD target */
    PORT_WAVE64 = 1, /* only targets with 64-lane wavefronts */
};

struct port_file;

struct port_rule {
    const char *id;
    const char *severity; /* "error", "warning", "note" */
    enum port_scope scope;
    void (*match)(struct port_file *f, const struct port_rule *r);
    const char *message;  /* what goes wrong on AMD GPUs */
    const char *fix;      /* the change to make */
};

/* One file being scanned. */
struct port_file {
    const char *path;             /* as reported */
    const char *data;
    size_t len;
    const struct gv_tok *tok;     /* tokens, tok[n].kind == GV_TOK_EOF */
    size_t n;
    const struct gv_port_targets *targets;
    json_t *findings;
    size_t found;                 /* findings this file added */
};

/* A finding of rule r at token at; message and fix NULL: the rule's own. */
void port_emit(struct port_file *f, const struct port_rule *r, const struct gv_tok *at,
               const char *message, const char *fix);

const struct port_rule *port_rules_cuda(size_t *n);
const struct port_rule *port_rules_py(size_t *n);

/* Token helpers shared by the rule files. */
int port_is(const struct port_file *f, size_t i, const char *s);      /* tok[i] is s */
int port_ident_in(const struct gv_tok *t, const char *const *names);  /* NULL-terminated */
/* The index of the token that closes the bracket at open ( [ { ; f->n when none. */
size_t port_close(const struct port_file *f, size_t open);
/* Arguments of the call whose "(" is at open: start and end (exclusive) of each
 * top-level argument, at most max; returns how many there are. */
size_t port_args(const struct port_file *f, size_t open, size_t *start, size_t *end, size_t max);
/* The statement around i: from after the previous ; { } (or the start of a
 * preprocessor directive) to before the next one. */
void port_statement(const struct port_file *f, size_t i, size_t *a, size_t *b);

#endif
