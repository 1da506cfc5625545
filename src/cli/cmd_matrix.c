/* gpuvet matrix: the version matrix across machines and time, from the
 * history database (the document is a contract: docs/history.md). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "cli/cli.h"
#include "store/history.h"

static const char usage[] =
    "usage: gpuvet matrix [--gpu X] [--since DATE] [--torch X] [--image I]\n"
    "                     [--format text|csv|markdown|json] [--json] [-o FILE] [--db URL]\n"
    "\n"
    "The version matrix of the judged runs in the history database (check results, ab\n"
    "sides, and any recorded document with a verdict): one row per stack combination\n"
    "(GPU model and arch, kernel, driver, ROCm, CUDA, PyTorch, and the container image a\n"
    "run was made in: each image digest its own rows), with how many runs and\n"
    "machines, passes and failures, when it was first and last seen, and the worst\n"
    "degradation seen (the case with the most bits lost against its output format).\n"
    "Newest first. The document is gpuvet.matrix.\n"
    "\n"
    "      --gpu X        rows whose GPU model contains X, or whose arch is X (any case)\n"
    "      --since DATE   runs made on or after DATE (2026-11-30 or ISO-8601 UTC)\n"
    "      --torch X      rows of PyTorch X (2.3 matches 2.3.0+rocm6.0; 2.3.0+rocm6.0 only it)\n"
    "      --image I      rows of this image: its digest (sha256:HEX, or 12 or more of HEX's\n"
    "                     first digits) or the tag asked for\n"
    "      --format F     text (default), csv, markdown or json (the document, as --json)\n"
    CLI_HELP_JSON
    CLI_HELP_OUTPUT
    "      --db URL       a SQLite file or postgresql://user@host/db (default $GPUVET_DB,\n"
    "                     else $XDG_DATA_HOME/gpuvet/history.db)\n"
    "  -h, --help         this help\n"
    "\n"
    "Exit status: 0 ok, 2 usage error, 3 the database cannot be opened or read.\n";

#define NCOLS 15
/* The columns before the image keep their places of the matrix before images
 * (a CSV is read by position): the numbers runs .. failures are 7 .. 10. */
#define FAILURES_COL 10
#define IMAGE_COL 13

static const char *const headers[NCOLS] = {"GPU", "arch", "kernel", "driver", "ROCm", "CUDA",
                                           "PyTorch", "runs", "machines", "passes", "failures",
                                           "first seen", "last seen", "image", "worst"};

static int numeric(int i)
{
    return i >= 7 && i <= FAILURES_COL;
}

/* An image's cell: the tag asked for and the digest's first 12 hex digits
 * ("6.4@sha256:0123456789ab"); "-" for a host's or a root's stack. */
static void image_cell(const json_t *image, char *out, size_t n)
{
    const char *d = json_string_value(json_object_get(image, "manifest_digest"));
    if (!d)
        d = json_string_value(json_object_get(image, "config_digest"));
    const char *tag = json_string_value(json_object_get(image, "tag"));
    if (!d) {
        snprintf(out, n, "-");
        return;
    }
    snprintf(out, n, "%s%s%.19s", tag ? tag : "", tag ? "@" : "", d);
}

static void cell(const json_t *row, int i, char *out, size_t n)
{
    static const char *const keys[] = {"gpu_model", "gpu_arch", "kernel", "driver", "rocm",
                                       "cuda", "torch", "runs", "machines", "passes",
                                       "failures", "first_seen", "last_seen"};
    if (i == IMAGE_COL) {
        image_cell(json_object_get(row, "image"), out, n);
        return;
    }
    if (i < NCOLS - 1) {
        const json_t *v = json_object_get(row, keys[i]);
        if (json_is_string(v))
            snprintf(out, n, "%s", json_string_value(v));
        else if (json_is_integer(v))
            snprintf(out, n, "%lld", (long long)json_integer_value(v));
        else
            snprintf(out, n, "-");
        return;
    }
    const json_t *w = json_object_get(row, "worst");
    const char *c = json_string_value(json_object_get(w, "case"));
    if (c)
        snprintf(out, n, "%s: %.1f bits lost (run %lld)", c,
                 json_number_value(json_object_get(w, "bits_lost")),
                 (long long)json_integer_value(json_object_get(w, "run")));
    else
        snprintf(out, n, "-");
}

static void csv_field(const char *s)
{
    if (!strcmp(s, "-"))
        return; /* unknown: an empty field */
    if (!strpbrk(s, ",\"\n\r")) {
        fputs(s, stdout);
        return;
    }
    putchar('"');
    for (; *s; s++) {
        if (*s == '"')
            putchar('"');
        putchar(*s);
    }
    putchar('"');
}

static void md_field(const char *s)
{
    for (; *s; s++) {
        if (*s == '|' || *s == '\\')
            putchar('\\');
        putchar(*s == '\n' ? ' ' : *s);
    }
}

static void print_csv(const json_t *rows)
{
    for (int i = 0; i < NCOLS; i++) {
        if (i)
            putchar(',');
        csv_field(headers[i]);
    }
    putchar('\n');
    size_t r;
    json_t *row;
    json_array_foreach(rows, r, row) {
        for (int i = 0; i < NCOLS; i++) {
            char v[512];
            cell(row, i, v, sizeof v);
            if (i)
                putchar(',');
            csv_field(v);
        }
        putchar('\n');
    }
}

static void print_md(const json_t *rows)
{
    printf("|");
    for (int i = 0; i < NCOLS; i++)
        printf(" %s |", headers[i]);
    printf("\n|");
    for (int i = 0; i < NCOLS; i++)
        printf("%s|", numeric(i) ? "---:" : "---");
    printf("\n");
    size_t r;
    json_t *row;
    json_array_foreach(rows, r, row) {
        printf("|");
        for (int i = 0; i < NCOLS; i++) {
            char v[512];
            cell(row, i, v, sizeof v);
            putchar(' ');
            md_field(v);
            printf(" |");
        }
        printf("\n");
    }
}

static void print_text(const json_t *doc)
{
    const json_t *rows = json_object_get(doc, "rows");
    size_t nrows = json_array_size(rows);
    int w[NCOLS];
    for (int i = 0; i < NCOLS; i++)
        w[i] = (int)strlen(headers[i]);
    for (size_t r = 0; r < nrows; r++)
        for (int i = 0; i < NCOLS; i++) {
            char v[512];
            cell(json_array_get(rows, r), i, v, sizeof v);
            int lim = i == NCOLS - 1 ? 400 : 60; /* the last column is never cut */
            if ((int)strlen(v) > w[i])
                w[i] = (int)strlen(v) > lim ? lim : (int)strlen(v);
        }
    printf("%sversion matrix of %s%s\n", cli_dim(), json_string_value(json_object_get(doc, "db")),
           cli_reset());
    printf("%s", cli_bold());
    for (int i = 0; i < NCOLS - 1; i++)
        printf(numeric(i) ? "%*s  " : "%-*s  ", w[i], headers[i]);
    printf("%s", headers[NCOLS - 1]);
    printf("%s\n", cli_reset());
    for (size_t r = 0; r < nrows; r++) {
        const json_t *row = json_array_get(rows, r);
        int failing = json_integer_value(json_object_get(row, "failures")) > 0;
        for (int i = 0; i < NCOLS; i++) {
            char v[512];
            cell(row, i, v, sizeof v);
            if (i == NCOLS - 1)
                printf("%s", v); /* the last column: no padding */
            else if (i == FAILURES_COL && failing)
                printf("%s%*.*s%s  ", cli_red(), w[i], w[i], v, cli_reset());
            else
                printf(numeric(i) ? "%*.*s  " : "%-*.*s  ", w[i], w[i], v);
        }
        printf("\n");
    }
    const json_t *f = json_object_get(doc, "filters");
    int filtered = !json_is_null(json_object_get(f, "gpu")) ||
                   !json_is_null(json_object_get(f, "since")) ||
                   !json_is_null(json_object_get(f, "torch")) || json_object_get(f, "image");
    if (!nrows)
        printf("(no judged runs%s)\n", filtered ? " match the filters" : "");
}

int cmd_matrix(int argc, char **argv)
{
    static const struct option opts[] = {
        {"gpu", required_argument, 0, 'g'},    {"since", required_argument, 0, 's'},
        {"torch", required_argument, 0, 't'},  {"format", required_argument, 0, 'f'},
        {"image", required_argument, 0, 'i'},  CLI_OUT_OPTIONS,
        {"db", required_argument, 0, 'd'},     {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0}};
    const char *gpu = NULL, *since = NULL, *torch = NULL, *format = "text", *db = NULL,
               *image = NULL;
    struct cli_out out = {0};
    struct cli_args args = CLI_ARGS("matrix", argc, argv, "o:h", opts);
    for (int c; (c = cli_next(&args)) != -1;) {
        if (cli_out_opt(&out, c, args.arg))
            continue;
        switch (c) {
        case 'g': gpu = args.arg; break;
        case 's': since = args.arg; break;
        case 't': torch = args.arg; break;
        case 'i': image = args.arg; break;
        case 'f': format = args.arg; break;
        case 'd': db = args.arg; break;
        case 'h': return cli_help(usage);
        default: return GV_EXIT_USAGE;
        }
    }
    if (cli_no_operands(&args))
        return GV_EXIT_USAGE;
    if (!strcmp(format, "json")) /* --format json: --json */
        out.json = 1;
    if (strcmp(format, "text") && strcmp(format, "csv") && strcmp(format, "markdown") &&
        strcmp(format, "json"))
        return cli_usage("matrix", "--format takes text, csv, markdown or json, not '%s'",
                         format);
    char since_iso[32];
    if (since && cli_parse_since(since, since_iso, sizeof since_iso))
        return cli_usage("matrix", "--since takes a date (2026-11-30) or an ISO-8601 UTC time, "
                         "not '%s'", since);
    struct gv_history *h = NULL;
    if (cli_history_open(db, 0, &h))
        return GV_EXIT_ERROR;
    struct gv_history_filter f = {.gpu = gpu, .since = since ? since_iso : NULL, .torch = torch,
                                  .image = image};
    json_t *doc = NULL;
    struct gv_err err = {0};
    int rc = gv_history_matrix(h, &f, &doc, &err);
    gv_history_close(h);
    if (rc)
        return cli_fail(&err);
    rc = cli_put_doc("matrix", doc, &out);
    if (rc || !cli_out_text(&out))
        ;
    else if (!strcmp(format, "csv"))
        print_csv(json_object_get(doc, "rows"));
    else if (!strcmp(format, "markdown"))
        print_md(json_object_get(doc, "rows"));
    else
        print_text(doc);
    json_decref(doc);
    return rc;
}
