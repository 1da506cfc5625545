#include "cli/cli.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/json.h"
#include "env/probe.h"
#include "kb/pypick.h"

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

int cli_fail(const struct gv_err *err)
{
    fprintf(stderr, "gpuvet: error: %s\n", err && err->msg[0] ? err->msg : "unknown error");
    return GV_EXIT_ERROR;
}

int cli_failf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("gpuvet: error: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return GV_EXIT_ERROR;
}

int cli_usage(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "gpuvet %s: ", cmd);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\nTry 'gpuvet %s --help'.\n", cmd);
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
    struct gv_probe_ctx ctx = {.root = root, .live = !strcmp(root, "/"), .envp = environ};
    json_t *py = gv_probe_python(&ctx);
    char path[4096], why[1024];
    gv_pick_torch_python(py, want_gpu, path, sizeof path, why, sizeof why);
    json_decref(py);
    setenv("GPUVET_PYTHON", path, 1);
    if (note && notesz)
        snprintf(note, notesz, "interpreter %s", why);
    fprintf(stderr, "gpuvet: torch device: using %s\n", why);
}
