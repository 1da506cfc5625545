/* The source scan (port.h gv_port_scan): walks the paths without following
 * links, reads each source file once, lexes it and runs the rules of its
 * language. Files that cannot be scanned (links, too large, binary,
 * unreadable) are listed in stats.skipped with the reason. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "env/sysutil.h"
#include "kb/port_facts.h"
#include "port/rules.h"

#define MAX_FILE (8u << 20) /* bytes: larger source files are skipped with a note */
#define MAX_DEPTH 64
#define MAX_SKIPPED 1000 /* listed; the rest only counted */

struct scan {
    const struct gv_port_targets *t;
    json_t *findings, *skipped, *paths;
    long files, lines, skipped_n;
    long long bytes;
    char *buf;            /* one buffer, reused for every file */
    size_t cap;
    struct gv_tok *tok;   /* likewise */
    size_t tcap;
};

json_t *gv_port_finding(const char *file, long line, long column, const char *rule,
                        const char *severity, const char *message, const char *why,
                        const char *source, const char *fix)
{
    json_t *o = json_object();
    json_object_set_new(o, "file", gv_json_str(file ? file : ""));
    json_object_set_new(o, "line", json_integer(line));
    json_object_set_new(o, "column", json_integer(column));
    json_object_set_new(o, "rule", json_string(rule));
    json_object_set_new(o, "severity", json_string(severity));
    json_object_set_new(o, "message", json_string(message ? message : ""));
    json_object_set_new(o, "why", json_string(why ? why : ""));
    json_object_set_new(o, "source", json_string(source ? source : ""));
    json_object_set_new(o, "fix", json_string(fix ? fix : ""));
    return o;
}

/* The source line of t, trimmed, at most 200 bytes (invalid UTF-8 and
 * control bytes become '?'). */
static json_t *snippet(const struct port_file *f, const struct gv_tok *t)
{
    const char *a = t->s, *e = f->data + f->len;
    while (a > f->data && a[-1] != '\n')
        a--;
    const char *b = t->s;
    while (b < e && *b != '\n')
        b++;
    while (a < b && (*a == ' ' || *a == '\t'))
        a++;
    while (b > a && (b[-1] == ' ' || b[-1] == '\t' || b[-1] == '\r'))
        b--;
    return gv_json_str_bytes(a, (size_t)(b - a > 200 ? 200 : b - a));
}

void port_emit(struct port_file *f, const struct port_rule *r, const struct gv_tok *at,
               const char *message, const char *fix)
{
    const struct gv_port_fact *fact = gv_port_fact_find(r->id);
    json_t *o = gv_port_finding(f->path, at->line, at->col, r->id, r->severity,
                                message ? message : r->message, fact ? fact->why : "",
                                fact ? fact->source : "", fix ? fix : r->fix);
    json_object_set_new(o, "targets", gv_port_targets_json(f->targets, r->scope == PORT_WAVE64));
    json_object_set_new(o, "snippet", snippet(f, at));
    json_array_append_new(f->findings, o);
    f->found++;
}

int port_is(const struct port_file *f, size_t i, const char *s)
{
    return i < f->n && gv_tok_is(&f->tok[i], s);
}

int port_ident_in(const struct gv_tok *t, const char *const *names)
{
    if (t->kind != GV_TOK_IDENT)
        return 0;
    for (; *names; names++)
        if ((*names)[0] == t->s[0] && strlen(*names) == t->n && !memcmp(*names, t->s, t->n))
            return 1;
    return 0;
}

size_t port_close(const struct port_file *f, size_t open)
{
    const char *o = "([{", *c = ")]}";
    if (open >= f->n || f->tok[open].kind != GV_TOK_PUNCT || f->tok[open].n != 1)
        return f->n;
    const char *k = strchr(o, f->tok[open].s[0]);
    if (!k)
        return f->n;
    int depth = 0;
    for (size_t i = open; i < f->n; i++) {
        const struct gv_tok *t = &f->tok[i];
        if (t->kind != GV_TOK_PUNCT || t->n != 1)
            continue;
        if (strchr(o, t->s[0]))
            depth++;
        else if (strchr(c, t->s[0]) && --depth == 0)
            return t->s[0] == c[k - o] ? i : f->n;
    }
    return f->n;
}

size_t port_args(const struct port_file *f, size_t open, size_t *start, size_t *end, size_t max)
{
    size_t close = port_close(f, open);
    if (close >= f->n || close == open + 1)
        return 0;
    size_t n = 0, a = open + 1;
    int depth = 0;
    for (size_t i = open + 1; i <= close; i++) {
        const struct gv_tok *t = &f->tok[i];
        if (t->kind == GV_TOK_PUNCT && t->n == 1 && strchr("([{", t->s[0]))
            depth++;
        else if (t->kind == GV_TOK_PUNCT && t->n == 1 && strchr(")]}", t->s[0]) && i != close)
            depth--;
        if (i == close || (depth == 0 && gv_tok_is(t, ","))) {
            if (n < max) {
                start[n] = a;
                end[n] = i;
            }
            n++;
            a = i + 1;
        }
    }
    return n;
}

static int ends_statement(const struct gv_tok *t)
{
    return gv_tok_is(t, ";") || gv_tok_is(t, "{") || gv_tok_is(t, "}");
}

void port_statement(const struct port_file *f, size_t i, size_t *a, size_t *b)
{
    int pp = f->tok[i].pp;
    size_t s = i;
    while (s > 0 && !ends_statement(&f->tok[s - 1]) && f->tok[s - 1].pp == pp &&
           !(pp && f->tok[s].line != f->tok[s - 1].line && gv_tok_is(&f->tok[s], "#")))
        s--;
    size_t e = i;
    while (e + 1 < f->n && !ends_statement(&f->tok[e + 1]) && f->tok[e + 1].pp == pp &&
           !(pp && gv_tok_is(&f->tok[e + 1], "#")))
        e++;
    *a = s;
    *b = e + 1;
}

static int is_python(const char *name)
{
    size_t n = strlen(name);
    return n > 3 && !strcmp(name + n - 3, ".py");
}

static int is_source(const char *name)
{
    static const char *const ext[] = {".cu", ".cuh", ".hip", ".cpp", ".cc", ".cxx", ".c",
                                      ".h", ".hpp", ".hh", ".hxx", ".inl", ".py", NULL};
    const char *dot = strrchr(name, '.');
    if (!dot || dot == name)
        return 0;
    for (int i = 0; ext[i]; i++)
        if (!strcmp(dot, ext[i]))
            return 1;
    return 0;
}

static void skip_note(struct scan *s, const char *path, const char *reason)
{
    s->skipped_n++;
    if (json_array_size(s->skipped) >= MAX_SKIPPED)
        return;
    json_t *o = json_object();
    json_object_set_new(o, "path", gv_json_str(path));
    json_object_set_new(o, "reason", json_string(reason));
    json_array_append_new(s->skipped, o);
}

/* A skip note "WHAT: strerror(errno)". */
static void skip_errno(struct scan *s, const char *path, const char *what)
{
    char why[256];
    snprintf(why, sizeof why, "%s: %s", what, strerror(errno));
    skip_note(s, path, why);
}

/* The whole file open as fd into s->buf; 0, or -1 with a reason noted. */
static int read_all(struct scan *s, int fd, const char *path, size_t size, size_t *len)
{
    if (size + 1 > s->cap) {
        size_t cap = size + 1 > 65536 ? size + 1 : 65536;
        char *b = realloc(s->buf, cap);
        if (!b) {
            skip_note(s, path, "no memory to read it");
            return -1;
        }
        s->buf = b;
        s->cap = cap;
    }
    size_t got = 0;
    while (got < size) {
        ssize_t r = read(fd, s->buf + got, size - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            skip_errno(s, path, "cannot read");
            return -1;
        }
        if (r == 0)
            break; /* shrank while we read: scan what is there */
        got += (size_t)r;
    }
    *len = got;
    return 0;
}

static int lex_all(struct scan *s, const char *data, size_t len, int python, size_t *n)
{
    struct gv_lex lx;
    gv_lex_init(&lx, data, len, python);
    size_t k = 0;
    for (;;) {
        if (k + 1 >= s->tcap) {
            size_t cap = s->tcap ? s->tcap * 2 : 4096;
            struct gv_tok *t = realloc(s->tok, cap * sizeof *t);
            if (!t)
                return -1;
            s->tok = t;
            s->tcap = cap;
        }
        if (!gv_lex_next(&lx, &s->tok[k]))
            break;
        k++;
    }
    *n = k;
    return 0;
}

static long count_lines(const char *data, size_t len)
{
    long n = 0;
    const char *p = data, *e = data + len;
    while ((p = memchr(p, '\n', (size_t)(e - p))) != NULL) {
        n++;
        p++;
    }
    return n + (len && data[len - 1] != '\n');
}

static json_int_t num(const json_t *o, const char *key)
{
    return json_integer_value(json_object_get(o, key));
}

static int by_position(const void *a, const void *b)
{
    const json_t *x = *(json_t *const *)a, *y = *(json_t *const *)b;
    json_int_t d = num(x, "line") - num(y, "line");
    if (!d)
        d = num(x, "column") - num(y, "column");
    if (!d)
        return strcmp(json_string_value(json_object_get(x, "rule")),
                      json_string_value(json_object_get(y, "rule")));
    return d < 0 ? -1 : 1;
}

/* The findings from index first on, in line and column order. */
static void sort_from(json_t *findings, size_t first)
{
    size_t n = json_array_size(findings) - first;
    if (n < 2)
        return;
    json_t **v = malloc(n * sizeof *v);
    if (!v)
        return;
    for (size_t i = 0; i < n; i++)
        v[i] = json_incref(json_array_get(findings, first + i));
    qsort(v, n, sizeof *v, by_position);
    for (size_t i = 0; i < n; i++)
        json_array_set_new(findings, first + i, v[i]);
    free(v);
}

static void run_rules(struct scan *s, const char *path, const char *data, size_t len, int python)
{
    size_t n;
    if (lex_all(s, data, len, python, &n)) {
        skip_note(s, path, "no memory for its tokens");
        return;
    }
    struct port_file f = {.path = path, .data = data, .len = len, .tok = s->tok, .n = n,
                          .targets = s->t, .findings = s->findings};
    int amd = 0;
    for (size_t i = 0; i < s->t->n; i++)
        amd |= !strncmp(s->t->names[i], "gfx", 3);
    size_t nr, first = json_array_size(s->findings);
    const struct port_rule *r = python ? port_rules_py(&nr) : port_rules_cuda(&nr);
    for (size_t i = 0; i < nr; i++) {
        if (!amd || (r[i].scope == PORT_WAVE64 && !s->t->any_wave64))
            continue;
        r[i].match(&f, &r[i]);
    }
    sort_from(s->findings, first);
}

static void scan_fd(struct scan *s, int fd, const char *path, const struct stat *st)
{
    if ((size_t)st->st_size > MAX_FILE) {
        char why[128];
        snprintf(why, sizeof why, "larger than %u MiB (%lld bytes): not a hand-written source",
                 MAX_FILE >> 20, (long long)st->st_size);
        skip_note(s, path, why);
        return;
    }
    size_t len;
    if (read_all(s, fd, path, (size_t)st->st_size, &len))
        return;
    s->buf[len] = 0;
    if (memchr(s->buf, 0, len < 8192 ? len : 8192)) {
        skip_note(s, path, "binary (a NUL byte in its first 8 KiB)");
        return;
    }
    s->files++;
    json_array_append_new(s->paths, gv_json_str(path));
    s->bytes += (long long)len;
    s->lines += count_lines(s->buf, len);
    run_rules(s, path, s->buf, len, is_python(path));
}

static void scan_dir(struct scan *s, int dfd, const char *path, int depth);

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void scan_entry(struct scan *s, int dfd, const char *dir, const char *name, int depth)
{
    char path[4096];
    if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, name) >= sizeof path) {
        skip_note(s, dir, "a path inside is longer than 4096 bytes");
        return;
    }
    struct stat st;
    if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW)) {
        skip_note(s, path, strerror(errno));
        return;
    }
    if (S_ISLNK(st.st_mode)) {
        if (is_source(name) || !strchr(name, '.'))
            skip_note(s, path, "a symbolic link: not followed");
        return;
    }
    if (S_ISDIR(st.st_mode)) {
        if (!strcmp(name, ".git") || !strcmp(name, ".hg") || !strcmp(name, ".svn"))
            return;
        if (depth >= MAX_DEPTH) {
            skip_note(s, path, "directories nested deeper than 64 levels");
            return;
        }
        int fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0) {
            skip_errno(s, path, "cannot open the directory");
            return;
        }
        scan_dir(s, fd, path, depth + 1);
        return;
    }
    if (!S_ISREG(st.st_mode) || !is_source(name))
        return;
    int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        skip_errno(s, path, "cannot open");
        return;
    }
    struct stat st2;
    if (fstat(fd, &st2) || !S_ISREG(st2.st_mode))
        skip_note(s, path, "changed while being scanned");
    else
        scan_fd(s, fd, path, &st2);
    close(fd);
}

/* Takes dfd (closed here). Entries in name order, so output is stable. */
static void scan_dir(struct scan *s, int dfd, const char *path, int depth)
{
    DIR *d = fdopendir(dfd);
    if (!d) {
        close(dfd);
        skip_note(s, path, "cannot read the directory");
        return;
    }
    char **names = NULL;
    size_t n = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 64;
            char **g = realloc(names, cap * sizeof *g);
            if (!g)
                break;
            names = g;
        }
        if (!(names[n] = strdup(e->d_name)))
            break;
        n++;
    }
    if (n)
        qsort(names, n, sizeof *names, by_name);
    for (size_t i = 0; i < n; i++) {
        scan_entry(s, dirfd(d), path, names[i], depth);
        free(names[i]);
    }
    free(names);
    closedir(d);
}

/* An operand: a file or a directory, named by the user (a link given as the
 * operand itself is followed; nothing below it is). */
static int scan_operand(struct scan *s, const char *path, struct gv_err *err)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return gv_err_set(err, GV_E_IO, "%s: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st)) {
        int e = errno;
        close(fd);
        return gv_err_set(err, GV_E_IO, "%s: %s", path, strerror(e));
    }
    if (S_ISDIR(st.st_mode)) {
        size_t n = strlen(path);
        char trimmed[4096];
        if (n >= sizeof trimmed) {
            close(fd);
            return gv_err_set(err, GV_E_USAGE, "%.64s...: path too long", path);
        }
        memcpy(trimmed, path, n + 1);
        while (n > 1 && trimmed[n - 1] == '/')
            trimmed[--n] = 0;
        scan_dir(s, fd, trimmed, 0);
        return GV_OK;
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        return gv_err_set(err, GV_E_FORMAT, "%s: not a regular file or directory", path);
    }
    scan_fd(s, fd, path, &st);
    close(fd);
    return GV_OK;
}

int gv_port_scan(const char *const *paths, size_t n, const struct gv_port_targets *t,
                 json_t *findings, json_t *stats, struct gv_err *err)
{
    struct scan s = {.t = t, .findings = findings, .skipped = json_array(), .paths = json_array()};
    size_t before = json_array_size(findings);
    int rc = GV_OK;
    for (size_t i = 0; i < n && rc == GV_OK; i++)
        rc = scan_operand(&s, paths[i], err);
    free(s.buf);
    free(s.tok);
    json_object_set_new(stats, "files", json_integer(s.files));
    json_object_set_new(stats, "bytes", json_integer(s.bytes));
    json_object_set_new(stats, "lines", json_integer(s.lines));
    json_object_set_new(stats, "findings",
                        json_integer((json_int_t)(json_array_size(findings) - before)));
    json_object_set_new(stats, "skipped_count", json_integer(s.skipped_n));
    json_object_set_new(stats, "skipped", s.skipped);
    json_object_set_new(stats, "paths", s.paths);
    return rc;
}
