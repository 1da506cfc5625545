/* The environment of an inspected root: its /etc/environment, parsed as
 * pam_env reads it for a login (rootenv.h). Nothing in the file is run or
 * expanded; it only yields NAME=VALUE strings. */
#include "env/rootenv.h"

#include <stdlib.h>
#include <string.h>

#include "base/fs.h"

#define NAME_MAX_LEN 256

struct entry {
    char *s;          /* "NAME=VALUE" */
    size_t name_len;
    size_t line;      /* order in the file */
};

struct entries {
    struct entry *e;
    size_t n, cap;
};

static int blank(char c)
{
    return c == ' ' || c == '\t';
}

static int name_char(char c, int first)
{
    return c == '_' || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
           (!first && c >= '0' && c <= '9');
}

/* One line without its newline. *out: a new "NAME=VALUE", or NULL when the
 * line sets nothing. Returns GV_OK, or GV_E_NOMEM. */
static int parse_line(const char *p, size_t n, char **out, size_t *name_len)
{
    *out = NULL;
    if (memchr(p, '\0', n))
        return GV_OK;
    while (n && (blank(p[n - 1]) || p[n - 1] == '\r'))
        n--;
    while (n && blank(*p))
        p++, n--;
    if (!n || *p == '#')
        return GV_OK;
    if (n > 7 && !memcmp(p, "export", 6) && blank(p[6])) {
        p += 7, n -= 7;
        while (n && blank(*p))
            p++, n--;
    }
    size_t k = 0;
    while (k < n && name_char(p[k], k == 0))
        k++;
    if (k == 0 || k > NAME_MAX_LEN || k == n || p[k] != '=')
        return GV_OK;
    const char *v = p + k + 1;
    size_t vn = n - k - 1;
    if (vn && (*v == '"' || *v == '\'')) {
        if (vn < 2 || v[vn - 1] != *v || memchr(v + 1, *v, vn - 2))
            return GV_OK; /* unmatched, or a quote inside: not pam_env's simple form */
        v++, vn -= 2;
    }
    if (vn > GV_ROOTENV_VALUE_MAX)
        return GV_OK;
    char *s = malloc(k + 1 + vn + 1);
    if (!s)
        return GV_E_NOMEM;
    memcpy(s, p, k + 1);
    memcpy(s + k + 1, v, vn);
    s[k + 1 + vn] = '\0';
    *out = s;
    *name_len = k;
    return GV_OK;
}

static int push(struct entries *l, char *s, size_t name_len)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 16;
        struct entry *e = realloc(l->e, cap * sizeof *e);
        if (!e) {
            free(s);
            return GV_E_NOMEM;
        }
        l->e = e;
        l->cap = cap;
    }
    l->e[l->n] = (struct entry){s, name_len, l->n};
    l->n++;
    return GV_OK;
}

/* By name, and for one name the last line first. */
static int by_name_last_first(const void *a, const void *b)
{
    const struct entry *x = a, *y = b;
    size_t n = x->name_len < y->name_len ? x->name_len : y->name_len;
    int c = memcmp(x->s, y->s, n);
    if (!c)
        c = (x->name_len > y->name_len) - (x->name_len < y->name_len);
    return c ? c : (x->line < y->line) - (x->line > y->line);
}

static int by_line(const void *a, const void *b)
{
    const struct entry *x = a, *y = b;
    return (x->line > y->line) - (x->line < y->line);
}

/* Keeps the last value of each name, in file order. */
static void keep_last(struct entries *l)
{
    if (l->n < 2)
        return;
    qsort(l->e, l->n, sizeof *l->e, by_name_last_first);
    size_t kept = 1;
    for (size_t i = 1; i < l->n; i++) {
        const struct entry *prev = &l->e[kept - 1], *cur = &l->e[i];
        if (cur->name_len == prev->name_len && !memcmp(cur->s, prev->s, cur->name_len))
            free(cur->s);
        else
            l->e[kept++] = *cur;
    }
    l->n = kept;
    qsort(l->e, l->n, sizeof *l->e, by_line);
}

static void entries_free(struct entries *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->e[i].s);
    free(l->e);
}

int gv_rootenv_parse(const char *text, size_t len, char ***envp, struct gv_err *err)
{
    *envp = NULL;
    struct entries l = {0};
    const char *p = text, *end = text + len;
    int rc = GV_OK;
    while (p < end && rc == GV_OK) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
        char *s;
        size_t name_len;
        rc = parse_line(p, n, &s, &name_len);
        if (rc == GV_OK && s)
            rc = push(&l, s, name_len);
        p = nl ? nl + 1 : end;
    }
    char **out = rc == GV_OK ? malloc((l.n + 1) * sizeof *out) : NULL;
    if (!out) {
        entries_free(&l);
        return gv_err_set(err, GV_E_NOMEM, "/etc/environment: out of memory");
    }
    keep_last(&l);
    for (size_t i = 0; i < l.n; i++)
        out[i] = l.e[i].s;
    out[l.n] = NULL;
    free(l.e);
    *envp = out;
    return GV_OK;
}

int gv_rootenv_read(const char *root, char ***envp, struct gv_err *err)
{
    char *data = NULL;
    size_t len = 0;
    struct gv_err rerr = {0};
    *envp = NULL;
    if (gv_root_read_file(root, "/etc/environment", GV_ROOTENV_FILE_MAX, &data, &len, &rerr)) {
        if (rerr.code == GV_E_NOMEM)
            return gv_err_set(err, GV_E_NOMEM, "%s", rerr.msg);
        data = NULL, len = 0; /* absent or unreadable: no variables */
    }
    int rc = gv_rootenv_parse(data ? data : "", len, envp, err);
    free(data);
    return rc;
}

void gv_rootenv_free(char **envp)
{
    for (size_t i = 0; envp && envp[i]; i++)
        free(envp[i]);
    free(envp);
}
