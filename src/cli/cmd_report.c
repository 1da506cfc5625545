/* gpuvet report: one self-contained HTML page for gpuvet documents. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/fs.h"
#include "base/json.h"
#include "cli/cli.h"
#include "report/report.h"

static const char usage[] =
    "usage: gpuvet report INPUT... [-o FILE] [--title TEXT] [--json]\n"
    "\n"
    "Makes one self-contained HTML page of gpuvet documents: a snapshot, a check result,\n"
    "a compare or ab result (--json), a doctor report, a snapshot diff, a capture (.gvcap),\n"
    "a capture comparison or bisect, a rollback verification (verify --json), a version\n"
    "matrix (gpuvet matrix --json), or a history database (SQLite; its matrix is read\n"
    "with 'gpuvet matrix --db FILE --json'). The page\n"
    "needs no network and no other file: figures are inline SVG, it reads well with\n"
    "JavaScript off (a small inline script only sorts tables) and prints on A4.\n"
    "Every number on it is one the documents hold. For a comparison, the two result\n"
    "files it names are read when found (as named, or beside it), for the stacks and\n"
    "the error distributions, and their saved outputs (check --save-outputs) for a\n"
    "histogram of the ULP distance between before and after of each flagged case.\n"
    "\n"
    "  -o, --output FILE  write the page to FILE (atomically); default: stdout\n"
    "      --title TEXT   the page's title (default: from the inputs)\n"
    "      --json         print what was written as JSON (schema gpuvet.report)\n"
    "  -h, --help         this help\n"
    "\n"
    "Exit status: 0 written, 2 usage error, 3 an input is unreadable, of an unknown\n"
    "schema or schema version, or the page could not be written.\n";

/* Runs "/proc/self/exe matrix --db PATH --json" and parses what it prints. */
static int matrix_of_db(const char *path, json_t **doc, struct gv_err *err)
{
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0)
        return gv_err_set(err, GV_E_IO, "%s: a SQLite history database, but /proc/self/exe cannot be read to "
                                        "run 'gpuvet matrix'", path);
    self[n] = '\0';
    int fds[2];
    if (pipe2(fds, O_CLOEXEC))
        return gv_err_set(err, GV_E_IO, "%s: pipe: %s", path, strerror(errno));
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        return gv_err_set(err, GV_E_IO, "%s: fork: %s", path, strerror(errno));
    }
    if (pid == 0) {
        dup2(fds[1], STDOUT_FILENO);
        char *const args[] = {self, (char *)"matrix", (char *)"--db", (char *)path, (char *)"--json", NULL};
        execv(self, args);
        _exit(127);
    }
    close(fds[1]);
    struct gv_buf out = {0};
    char chunk[65536];
    for (;;) {
        ssize_t got = read(fds[0], chunk, sizeof chunk);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            break;
        if (out.len + (size_t)got > GV_REPORT_MAX_JSON) {
            out.failed = 1;
            break;
        }
        gv_buf_addn(&out, chunk, (size_t)got);
    }
    close(fds[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    if (code != 0 && code != 1) {
        gv_buf_free(&out);
        return gv_err_set(err, GV_E_UNSUPPORTED,
                          "%s: a SQLite history database, but 'gpuvet matrix --db %s --json' %s%d%s", path, path,
                          code < 0 ? "was killed" : "exited ", code < 0 ? 0 : code,
                          code == 2 ? " (this gpuvet may have no matrix command)" : "");
    }
    if (!gv_buf_ok(&out) || !out.data) {
        gv_buf_free(&out);
        return gv_err_set(err, GV_E_FORMAT, "%s: 'gpuvet matrix --json' printed nothing usable", path);
    }
    json_error_t je;
    int prc = gv_json_parse(out.data, out.len, path, doc, &je, err);
    gv_buf_free(&out);
    if (prc == GV_E_NOMEM)
        return prc;
    if (!*doc)
        return gv_err_set(err, GV_E_FORMAT, "%s: 'gpuvet matrix --json' printed no JSON document: %s", path,
                          je.text);
    return GV_OK;
}

static int load_input(const char *path, json_t **doc, struct gv_err *err)
{
    if (!gv_exists(path))
        return gv_err_set(err, GV_E_IO, "%s: no such file", path);
    if (gv_report_is_sqlite(path))
        return matrix_of_db(path, doc, err);
    int rc = gv_report_load(path, doc, err);
    if (rc)
        return rc;
    return gv_report_check(path, *doc, err);
}

int cmd_report(int argc, char **argv)
{
    static const struct option opts[] = {{"output", required_argument, 0, 'o'},
                                         {"title", required_argument, 0, 't'},
                                         {"json", no_argument, 0, 'j'},
                                         {"help", no_argument, 0, 'h'},
                                         {0, 0, 0, 0}};
    const char *output = NULL, *title = NULL;
    int json = 0;
    struct cli_args args = CLI_ARGS("report", argc, argv, "o:h", opts);
    for (int c; (c = cli_next(&args)) != -1;) {
        switch (c) {
        case 'o': output = args.arg; break;
        case 't': title = args.arg; break;
        case 'j': json = 1; break;
        case 'h': return cli_help(usage);
        default: return GV_EXIT_USAGE;
        }
    }
    int n = args.nops;
    if (n < 1)
        return cli_usage("report", "give at least one gpuvet document");
    if (json && !output)
        return cli_usage("report", "--json describes the written file: give -o FILE too");
    struct gv_report_input *in = calloc((size_t)n, sizeof *in);
    json_t **docs = calloc((size_t)n, sizeof *docs);
    struct gv_err err = {0};
    int rc = in && docs ? GV_OK : gv_err_set(&err, GV_E_NOMEM, "out of memory");
    for (int i = 0; !rc && i < n; i++) {
        in[i].path = args.ops[i];
        rc = load_input(in[i].path, &docs[i], &err);
        in[i].doc = docs[i];
    }
    struct gv_buf page = {0};
    if (!rc)
        rc = gv_report_render(in, (size_t)n, title, &page, &err);
    if (!rc) {
        if (output)
            rc = gv_write_atomic(output, page.data, page.len, 0644, &err);
        else if (fwrite(page.data, 1, page.len, stdout) != page.len || fflush(stdout))
            rc = gv_err_set(&err, GV_E_IO, "writing the page to stdout: %s", strerror(errno));
    }
    if (!rc && json) {
        json_t *d = json_object();
        json_object_set_new(d, "schema", json_string("gpuvet.report"));
        json_object_set_new(d, "schema_version", json_integer(1));
        json_object_set_new(d, "output", json_string(output));
        json_object_set_new(d, "bytes", json_integer((json_int_t)page.len));
        json_t *ins = json_array();
        for (int i = 0; i < n; i++) {
            json_t *e = json_object();
            json_object_set_new(e, "path", json_string(in[i].path));
            json_object_set(e, "schema", json_object_get(docs[i], "schema"));
            json_array_append_new(ins, e);
        }
        json_object_set_new(d, "inputs", ins);
        cli_emit_json(d, NULL);
        json_decref(d);
    } else if (!rc && output) {
        fprintf(stderr, "gpuvet report: wrote %s (%zu bytes)\n", output, page.len);
    }
    gv_buf_free(&page);
    for (int i = 0; docs && i < n; i++)
        json_decref(docs[i]);
    free(docs);
    free(in);
    return rc ? cli_fail(&err) : GV_EXIT_OK;
}
