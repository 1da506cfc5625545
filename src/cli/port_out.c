/* gpuvet port's output (port_out.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/port_out.h"
#include "store/junit.h"

static const char *str(const json_t *o, const char *key)
{
    const char *s = json_string_value(json_object_get(o, key));
    return s ? s : "";
}

void cli_port_count(const json_t *findings, struct cli_port_counts *c)
{
    memset(c, 0, sizeof *c);
    const char *last = NULL;
    size_t i;
    json_t *f;
    json_array_foreach(findings, i, f) {
        const char *sev = str(f, "severity"), *file = str(f, "file");
        c->findings++;
        c->errors += !strcmp(sev, "error");
        c->warnings += !strcmp(sev, "warning");
        c->notes += !strcmp(sev, "note");
        if (!last || strcmp(last, file))
            c->files++;
        last = file;
    }
}

static const char *sev_color(const char *sev)
{
    if (!strcmp(sev, "error"))
        return cli_red();
    if (!strcmp(sev, "warning"))
        return cli_yellow();
    return cli_dim();
}

static void print_targets(const json_t *doc)
{
    size_t i;
    json_t *t;
    printf("targets: ");
    json_array_foreach(json_object_get(doc, "targets"), i, t)
        printf("%s%s", i ? ", " : "", json_string_value(t) ? json_string_value(t) : "?");
    printf(" (%s)\n", str(doc, "targets_from"));
}

static void print_finding(const json_t *f)
{
    const char *sev = str(f, "severity");
    printf("  %lld:%lld  %s%-7s%s  %s%s%s  %s\n",
           (long long)json_integer_value(json_object_get(f, "line")),
           (long long)json_integer_value(json_object_get(f, "column")), sev_color(sev), sev,
           cli_reset(), cli_bold(), str(f, "rule"), cli_reset(), str(f, "message"));
    if (*str(f, "snippet"))
        printf("      | %s\n", str(f, "snippet"));
    if (*str(f, "why"))
        printf("      why: %s [%s]\n", str(f, "why"), str(f, "source"));
    if (*str(f, "fix"))
        printf("      fix: %s\n", str(f, "fix"));
}

void cli_port_print(const json_t *doc)
{
    const json_t *findings = json_object_get(doc, "findings");
    const json_t *stats = json_object_get(doc, "stats");
    struct cli_port_counts c;
    cli_port_count(findings, &c);
    if (!c.findings)
        printf("%sno findings%s", cli_green(), cli_reset());
    else
        printf("%s%zu finding%s in %zu file%s%s (%zu error%s, %zu warning%s, %zu note%s)", 
               c.errors ? cli_red() : cli_yellow(), c.findings, c.findings == 1 ? "" : "s",
               c.files, c.files == 1 ? "" : "s", cli_reset(), c.errors,
               c.errors == 1 ? "" : "s", c.warnings, c.warnings == 1 ? "" : "s", c.notes,
               c.notes == 1 ? "" : "s");
    printf("; %lld files, %lld lines scanned\n",
           (long long)json_integer_value(json_object_get(stats, "files")),
           (long long)json_integer_value(json_object_get(stats, "lines")));
    print_targets(doc);
    const char *last = NULL;
    size_t i;
    json_t *f;
    json_array_foreach(findings, i, f) {
        const char *file = str(f, "file");
        if (!last || strcmp(last, file))
            printf("\n%s%s%s\n", cli_bold(), file, cli_reset());
        last = file;
        print_finding(f);
    }
}

void cli_port_print_skipped(const char *cmd, const json_t *stats)
{
    size_t i;
    json_t *s;
    json_array_foreach(json_object_get(stats, "skipped"), i, s)
        fprintf(stderr, "gpuvet %s: skipped %s: %s\n", cmd, str(s, "path"), str(s, "reason"));
    json_int_t all = json_integer_value(json_object_get(stats, "skipped_count"));
    if ((size_t)all > json_array_size(json_object_get(stats, "skipped")))
        fprintf(stderr, "gpuvet %s: %lld more skipped\n", cmd,
                (long long)(all - (json_int_t)json_array_size(json_object_get(stats, "skipped"))));
}

/* The findings of one file as the testcase's text, and its error count. */
static size_t file_text(const json_t *findings, const char *file, char **text)
{
    size_t n = 0, errors = 0, len = 0;
    char *out = NULL;
    size_t i;
    json_t *f;
    json_array_foreach(findings, i, f) {
        if (strcmp(str(f, "file"), file))
            continue;
        errors += !strcmp(str(f, "severity"), "error");
        char line[1200];
        int k = snprintf(line, sizeof line, "%s:%lld:%lld: %s [%s] %s -- fix: %s\n", file,
                         (long long)json_integer_value(json_object_get(f, "line")),
                         (long long)json_integer_value(json_object_get(f, "column")),
                         str(f, "severity"), str(f, "rule"), str(f, "message"), str(f, "fix"));
        if (k < 0)
            continue;
        size_t add = (size_t)k < sizeof line ? (size_t)k : sizeof line - 1;
        char *g = realloc(out, len + add + 1);
        if (!g)
            break;
        out = g;
        memcpy(out + len, line, add);
        len += add;
        out[len] = 0;
        n++;
    }
    *text = out;
    return errors;
}

static int listed(const json_t *files, const char *file)
{
    size_t i;
    json_t *v;
    json_array_foreach(files, i, v)
        if (json_string_value(v) && !strcmp(json_string_value(v), file))
            return 1;
    return 0;
}

static void add_case(struct gv_junit *j, const json_t *findings, const char *file)
{
    char *text = NULL, msg[64];
    size_t errors = file_text(findings, file, &text);
    snprintf(msg, sizeof msg, "%zu error finding%s", errors, errors == 1 ? "" : "s");
    gv_junit_add(j, "gpuvet.port", file, 0, errors ? GV_JUNIT_FAILURE : GV_JUNIT_PASS,
                 errors ? msg : NULL, text);
    free(text);
}

int cli_port_junit(const char *path, const json_t *doc, const json_t *files, struct gv_err *err)
{
    const json_t *findings = json_object_get(doc, "findings");
    struct gv_junit *j = gv_junit_begin("gpuvet port");
    size_t i;
    json_t *v;
    json_array_foreach(files, i, v)
        if (json_string_value(v))
            add_case(j, findings, json_string_value(v));
    const char *last = NULL;
    json_array_foreach(findings, i, v) {
        const char *file = str(v, "file");
        if ((!last || strcmp(last, file)) && !listed(files, file))
            add_case(j, findings, file);
        last = file;
    }
    int rc = gv_junit_save(j, path, err);
    gv_junit_free(j);
    return rc;
}
