#include "cli/cli.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/fs.h"
#include "base/json.h"
#include "base/utf8.h"
#include "dev/kind.h"
#include "env/probe.h"
#include "kb/pypick.h"
#include "check/results.h"
#include "report/verdict.h"

extern char **environ;

struct gv_term gv_term;

void cli_term_init(void)
{
    const char *nc = getenv("NO_COLOR");
    const char *term = getenv("TERM");
    gv_term.color = isatty(STDOUT_FILENO) && !(nc && nc[0]) && !(term && !strcmp(term, "dumb"));
    gv_term.tty = isatty(STDERR_FILENO);
}

const char *cli_red(void) { return gv_term.color ? "\033[31m" : ""; }
const char *cli_yellow(void) { return gv_term.color ? "\033[33m" : ""; }
const char *cli_green(void) { return gv_term.color ? "\033[32m" : ""; }
const char *cli_bold(void) { return gv_term.color ? "\033[1m" : ""; }
const char *cli_dim(void) { return gv_term.color ? "\033[2m" : ""; }
const char *cli_reset(void) { return gv_term.color ? "\033[0m" : ""; }

/* ---------- what reaches the terminal ---------- */

/* The sequences gpuvet itself writes (colours, the progress line's "clear");
 * passed through only to a terminal. A document can hold them too: the most
 * they do is colour or clear the current line. */
static const char *const own_seqs[] = {"\033[31m", "\033[33m", "\033[32m", "\033[1m",
                                       "\033[2m",  "\033[0m",  "\r\033[K"};

/* 1: s[0..n) is one of own_seqs; 2: a proper prefix of one; 0: neither. */
static int own_seq(const char *s, size_t n, size_t *len)
{
    int prefix = 0;
    for (size_t i = 0; i < sizeof own_seqs / sizeof own_seqs[0]; i++) {
        size_t l = strlen(own_seqs[i]);
        if (n >= l && !memcmp(s, own_seqs[i], l)) {
            *len = l;
            return 1;
        }
        if (n < l && !memcmp(s, own_seqs[i], n))
            prefix = 1;
    }
    return prefix ? 2 : 0;
}

/* The bytes a UTF-8 sequence starting with lead has (0: not a lead byte). */
static size_t utf8_want(unsigned char lead)
{
    return lead >= 0xc2 && lead <= 0xdf ? 2 : lead >= 0xe0 && lead <= 0xef ? 3
         : lead >= 0xf0 && lead <= 0xf4 ? 4 : 0;
}

/* s[0..n) may be the start of a UTF-8 sequence that the next write completes. */
static int utf8_cut(const unsigned char *s, size_t n)
{
    size_t want = utf8_want(s[0]);
    if (!want || n >= want)
        return 0;
    for (size_t i = 1; i < n; i++)
        if ((s[i] & 0xc0) != 0x80)
            return 0;
    return 1;
}

size_t cli_escape(struct gv_buf *out, const char *s, size_t n, int flags)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t i = 0;
    while (i < n) {
        unsigned char b = u[i];
        size_t len = 1;
        if (b >= 0x20 && b < 0x7f) {
            size_t j = i;
            while (j < n && u[j] >= 0x20 && u[j] < 0x7f)
                j++;
            gv_buf_addn(out, s + i, j - i);
            i = j;
            continue;
        }
        if ((b == '\033' || b == '\r') && (flags & CLI_ESC_OWN)) {
            int k = own_seq(s + i, n - i, &len);
            if (k == 2 && (flags & CLI_ESC_MORE))
                return i;
            if (k == 1) {
                gv_buf_addn(out, s + i, len);
                i += len;
                continue;
            }
            len = 1;
        }
        if (b < 0x80) {
            if ((b == '\n' || b == '\t') && (flags & CLI_ESC_LINES))
                gv_buf_addn(out, s + i, 1);
            else if (b == '\n' || b == '\t' || b == '\r')
                gv_buf_add(out, b == '\n' ? "\\n" : b == '\t' ? "\\t" : "\\r");
            else
                gv_buf_printf(out, "\\x%02x", b);
            i++;
            continue;
        }
        len = gv_utf8_len(u + i, n - i);
        if (!len && (flags & CLI_ESC_MORE) && utf8_cut(u + i, n - i))
            return i;
        if (!len)
            gv_buf_printf(out, "\\x%02x", b);
        else if (gv_utf8_hidden(gv_utf8_cp(u + i, len)))
            gv_buf_printf(out, "\\u%04x", gv_utf8_cp(u + i, len));
        else
            gv_buf_addn(out, s + i, len);
        i += len ? len : 1;
    }
    return n;
}

/* stdout and stderr: every byte goes through cli_escape on its way to the fd,
 * whichever printf wrote it, so text from a document never reaches the
 * terminal raw. A UTF-8 sequence or one of our own sequences cut by a buffer
 * boundary waits for the next write. */
struct guard {
    int fd, flags;
    char held[8];
    size_t nheld;
};

static int write_all(int fd, const char *p, size_t n)
{
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

static int guard_emit(struct guard *g, const char *buf, size_t size, int more)
{
    struct gv_buf in = {0}, out = {0};
    gv_buf_addn(&in, g->held, g->nheld);
    gv_buf_addn(&in, buf, size);
    if (!gv_buf_ok(&in)) {
        gv_buf_free(&in);
        errno = ENOMEM;
        return -1;
    }
    size_t used = in.len ? cli_escape(&out, in.data, in.len, g->flags | (more ? CLI_ESC_MORE : 0)) : 0;
    g->nheld = in.len - used; /* at most 3 bytes of UTF-8 or 3 of "\r\033[K" */
    memcpy(g->held, in.data + used, g->nheld);
    gv_buf_free(&in);
    int rc = gv_buf_ok(&out) ? write_all(g->fd, out.data ? out.data : "", out.len) : -1;
    gv_buf_free(&out);
    return rc;
}

static ssize_t guard_write(void *cookie, const char *buf, size_t size)
{
    return guard_emit(cookie, buf, size, 1) ? -1 : (ssize_t)size;
}

static struct guard guards[2]; /* stdout, stderr: for the whole run */

/* At exit, before stdio's last flush: what a cut sequence held back. */
static void guard_finish(void)
{
    fflush(stdout);
    fflush(stderr);
    for (size_t i = 0; i < 2; i++)
        if (guards[i].nheld)
            guard_emit(&guards[i], "", 0, 0);
}

static FILE *guard_open(struct guard *g, int fd, int own, int mode)
{
    g->fd = fd;
    g->flags = CLI_ESC_LINES | (own ? CLI_ESC_OWN : 0);
    cookie_io_functions_t io = {.write = guard_write};
    FILE *f = fopencookie(g, "w", io);
    if (f)
        setvbuf(f, NULL, mode, mode == _IONBF ? 0 : BUFSIZ);
    return f;
}

void cli_guard_output(void)
{
    FILE *out = guard_open(&guards[0], STDOUT_FILENO, gv_term.color,
                           isatty(STDOUT_FILENO) ? _IOLBF : _IOFBF);
    FILE *err = guard_open(&guards[1], STDERR_FILENO, isatty(STDERR_FILENO), _IONBF);
    if (out)
        stdout = out;
    if (err)
        stderr = err;
    atexit(guard_finish);
}

/* Error messages are one line: every control character escaped, \n too; and
 * never a password (gv_redact). */
static void put_message(const char *head, const char *text, const char *tail)
{
    char msg[4096];
    gv_redact(text, msg, sizeof msg);
    struct gv_buf b = {0};
    gv_buf_add(&b, head);
    cli_escape(&b, msg, strlen(msg), 0);
    gv_buf_add(&b, tail);
    fputs(gv_buf_ok(&b) && b.data ? b.data : msg, stderr);
    gv_buf_free(&b);
}

__attribute__((format(printf, 2, 0))) static void put_messagev(const char *head, const char *fmt,
                                                                va_list ap, const char *tail)
{
    char msg[4096];
    vsnprintf(msg, sizeof msg, fmt, ap);
    put_message(head, msg, tail);
}

int cli_fail(const struct gv_err *err)
{
    put_message("gpuvet: error: ", err && err->msg[0] ? err->msg : "unknown error", "\n");
    return GV_EXIT_ERROR;
}

int cli_failf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    put_messagev("gpuvet: error: ", fmt, ap, "\n");
    va_end(ap);
    return GV_EXIT_ERROR;
}

int cli_usage(const char *cmd, const char *fmt, ...)
{
    char head[128], tail[160];
    snprintf(head, sizeof head, "gpuvet %s: ", cmd);
    snprintf(tail, sizeof tail, "\nTry 'gpuvet %s --help'.\n", cmd);
    va_list ap;
    va_start(ap, fmt);
    put_messagev(head, fmt, ap, tail);
    va_end(ap);
    return GV_EXIT_USAGE;
}

int cli_help(const char *text)
{
    fputs(text, stdout);
    return GV_EXIT_OK;
}

int cli_emit_json(const struct json_t *doc, const char *path)
{
    struct gv_err err = {0};
    if (path && strcmp(path, "-") != 0) {
        if (gv_json_write_file(path, (const json_t *)doc, &err))
            return cli_fail(&err);
        return GV_EXIT_OK;
    }
    char *s = gv_json_dump((const json_t *)doc);
    if (!s)
        return cli_failf("cannot serialise JSON output");
    fputs(s, stdout);
    free(s);
    return GV_EXIT_OK;
}

void cli_say_written(const char *cmd, const char *path)
{
    struct stat st;
    if (stat(path, &st) == 0)
        fprintf(stderr, "gpuvet %s: wrote %s (%lld bytes)\n", cmd, path, (long long)st.st_size);
}

void cli_verdict_print(const json_t *doc)
{
    struct gv_doc_verdict v;
    gv_verdict_of(doc, &v);
    printf("%s%s%s%s%s\n", v.status > 0 ? cli_red() : cli_green(), v.head, cli_reset(),
           v.why[0] ? ": " : "", v.why);
}

/* An image's config Env (GPUVET_PYTHON_ENV_FILE: NUL-separated NAME=VALUE, written
 * by image_cli.c) as a NULL-terminated array over *data; NULL when there is none. */
static char **image_env(char **data)
{
    const char *file = getenv("GPUVET_PYTHON_ENV_FILE");
    size_t len = 0, n = 0;
    struct gv_err e = {0};
    *data = NULL;
    if (!file || !*file || gv_read_file(file, 1u << 20, data, &len, &e) != GV_OK)
        return NULL;
    for (size_t i = 0; i < len; i++)
        n += (*data)[i] == '\0';
    char **env = calloc(n + 2, sizeof *env);
    for (size_t i = 0, k = 0; env && i < len; i += strlen(*data + i) + 1)
        env[k++] = *data + i;
    return env;
}

void cli_choose_python(const char *python, const char *python_root, int want_gpu, char *note,
                       size_t notesz)
{
    if (note && notesz)
        note[0] = '\0';
    if (python_root)
        setenv("GPUVET_PYTHON_ROOT", python_root, 1);
    if (python) {
        setenv("GPUVET_PYTHON", python, 1);
        return;
    }
    const char *env = getenv("GPUVET_PYTHON");
    if (env && *env)
        return;
    const char *root = python_root ? python_root : "/";
    int live = !strcmp(root, "/"); /* a root's interpreters are found without this process's PATH */
    char *envdata = NULL;
    char **ienv = live ? NULL : image_env(&envdata); /* an image: its own PATH finds its Python */
    struct gv_probe_ctx ctx = {.root = root, .live = live, .envp = live ? environ : ienv,
                               .envp_of_root = ienv != NULL};
    json_t *py = gv_probe_python(&ctx);
    free(ienv);
    free(envdata);
    char path[4096], why[1024];
    gv_pick_torch_python(py, want_gpu, path, sizeof path, why, sizeof why);
    json_decref(py);
    setenv("GPUVET_PYTHON", path, 1);
    if (note && notesz)
        snprintf(note, notesz, "interpreter %s", why);
    fprintf(stderr, "gpuvet: torch device: using %s\n", why);
}

int cli_results_load(const char *path, struct gv_results *res, struct gv_err *err)
{
    int rc = gv_json_load_file_begin(path, err);
    if (rc) {
        memset(res, 0, sizeof *res);
        return rc;
    }
    rc = gv_json_load_end(path, gv_results_load(path, res, err), err);
    if (rc == GV_E_NOMEM)
        gv_results_free(res);
    return rc;
}

int cli_parse_since(const char *in, char *out, size_t n)
{
    int y, mo, d, h = 0, mi = 0, s = 0;
    char tail[8] = "";
    size_t len = strlen(in);
    if (len == 10 && sscanf(in, "%4d-%2d-%2d", &y, &mo, &d) == 3) {
    } else if (sscanf(in, "%4d-%2d-%2dT%2d:%2d:%2d%7s", &y, &mo, &d, &h, &mi, &s, tail) >= 6 &&
               (!tail[0] || !strcmp(tail, "Z"))) {
    } else {
        return -1;
    }
    if (y < 1970 || y > 9999 || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 ||
        s > 60 || h < 0 || mi < 0 || s < 0)
        return -1;
    snprintf(out, n, "%04d-%02d-%02dT%02d:%02d:%02dZ", y, mo, d, h, mi, s);
    return 0;
}

/* ---------- one grammar for every command ---------- */

/* Operands are returned in order ('-' mode: getopt_long's code 1, so that
 * POSIXLY_CORRECT cannot stop the scan at the first one) and gathered at the
 * front of argv[1..]: the slot written is always one getopt has read already. */
int cli_next(struct cli_args *a)
{
    char spec[128];
    snprintf(spec, sizeof spec, "-:%s", a->shortopts ? a->shortopts : "");
    if (!a->started) {
        a->started = 1;
        a->nops = 0;
        a->ops = a->argv + 1;
        optind = 0; /* a full restart: an earlier parse in this process leaves state */
        opterr = 0;
    }
    for (;;) {
        int c = getopt_long(a->argc, a->argv, spec, a->longopts, NULL);
        if (c == 1) {
            a->ops[a->nops++] = optarg;
            continue;
        }
        if (c == -1) {
            for (int i = optind; i < a->argc; i++) /* after "--" */
                a->ops[a->nops++] = a->argv[i];
            a->arg = NULL;
            return -1;
        }
        a->arg = optarg;
        if (c == ':') {
            cli_usage(a->cmd, "option '%s' needs a value", a->argv[optind - 1]);
            return '?';
        }
        if (c != '?')
            return c;
        const char *word = a->argv[optind - 1];
        if (!strncmp(word, "--", 2) && strchr(word, '=') && optopt)
            cli_usage(a->cmd, "option '%.*s' takes no value", (int)(strchr(word, '=') - word),
                      word);
        else if (optopt && strncmp(word, "--", 2))
            cli_usage(a->cmd, "unknown option '-%c'", optopt);
        else
            cli_usage(a->cmd, "unknown option '%s'", word);
        return '?';
    }
}

int cli_no_operands(const struct cli_args *a)
{
    if (a->nops)
        return cli_usage(a->cmd, "unexpected argument '%s'", a->ops[0]);
    return GV_EXIT_OK;
}

int cli_out_opt(struct cli_out *o, int c, const char *arg)
{
    if (c == 'o' && strcmp(arg, "-"))
        o->output = arg;
    else if (c == 'o' || c == CLI_OPT_JSON)
        o->json = 1; /* -o -: the document on stdout */
    return c == 'o' || c == CLI_OPT_JSON;
}

int cli_out_text(const struct cli_out *o)
{
    return !o->json;
}

int cli_put_doc(const char *cmd, const struct json_t *doc, const struct cli_out *o)
{
    if (o->output) {
        int rc = cli_emit_json(doc, o->output);
        if (rc)
            return rc;
        cli_say_written(cmd, o->output);
    }
    return o->json ? cli_emit_json(doc, NULL) : GV_EXIT_OK;
}

int cli_python_opt(struct cli_python *p, int c, const char *arg)
{
    if (c == CLI_OPT_PYTHON)
        p->python = arg;
    else if (c == CLI_OPT_PYTHON_ROOT)
        p->root = arg;
    else if (c == CLI_OPT_IMAGE)
        p->image = arg;
    return c == CLI_OPT_PYTHON || c == CLI_OPT_PYTHON_ROOT || c == CLI_OPT_IMAGE;
}

int cli_python_setup(const char *cmd, const struct cli_python *p, const char *device,
                     char *root, size_t rootsz, const char **effective_root, json_t **image,
                     char *note, size_t notesz)
{
    *effective_root = p->root;
    *image = NULL;
    if (note && notesz)
        note[0] = '\0';
    if (!gv_dev_spec_starts_python(device)) {
        if (p->python || p->root || p->image)
            return cli_usage(cmd, "--python, --python-root and --image are for --device "
                             "torch:...");
        return GV_EXIT_OK;
    }
    if (p->image && p->root)
        return cli_usage(cmd, "--image and --python-root both name the root: give one");
    int want_gpu = !gv_dev_spec_on_host(device);
    struct gv_err err = {0};
    if (p->image) {
        if (cli_image_python(p->image, want_gpu, root, rootsz, image, &err))
            return cli_fail(&err);
        *effective_root = root;
    }
    cli_choose_python(p->python, *effective_root, want_gpu, note, notesz);
    return GV_EXIT_OK;
}

int cli_python_ready(const char *cmd, const struct cli_python *p, const char *device)
{
    char root[PATH_MAX], note[1100];
    const char *eff_root;
    json_t *image = NULL;
    int rc = cli_python_setup(cmd, p, device, root, sizeof root, &eff_root, &image, note,
                              sizeof note);
    json_decref(image);
    return rc;
}
