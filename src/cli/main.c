/* gpuvet: the command table and the dispatcher. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "base/fs.h"
#include "base/json.h"
#include "cli/cli.h"

struct command {
    const char *name;
    int (*fn)(int argc, char **argv);
    const char *summary;
};

#define GV_TABLE_ENTRY(name, summary) {#name, cmd_##name, summary},
static const struct command commands[] = {GV_COMMANDS(GV_TABLE_ENTRY)};
#undef GV_TABLE_ENTRY

static void print_usage(FILE *f)
{
    fprintf(f,
            "usage: gpuvet [--version] [--help] COMMAND [ARGS]\n"
            "\n"
            "Vet a GPU stack (ROCm or CUDA) across upgrades and rollbacks: record it,\n"
            "diagnose it, prove whether its numbers changed, and get back to a baseline.\n"
            "\n"
            "Commands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
    fprintf(f,
            "\n"
            "Options go anywhere, before or after operands ('--' ends them). Every\n"
            "command takes --help; those that make a document take --json (it on stdout)\n"
            "and -o FILE (it written to FILE).\n"
            "Exit codes: 0 fine, 1 findings (differences, failures, regressions),\n"
            "            2 usage error, 3 unreadable input or environment error.\n");
}

static int finish_stdout(int rc)
{
    /* A full disk or a closed pipe must not pass as success. */
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "gpuvet: error: write failure on standard output: %s\n", strerror(errno));
        return GV_EXIT_ERROR;
    }
    return rc;
}

/* A password on the command line (--db postgresql://u:PASS@host/db, a
 * password=... parameter) would stay readable in /proc/PID/cmdline and ps for
 * the whole run: each such argument is copied for the command and its bytes in
 * the process's argument area are overwritten with the redacted form. */
static void scrub_argv(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        size_t n = strlen(argv[i]);
        size_t sz = 2 * n + 16;
        char *red = malloc(sz);
        if (!red)
            continue;
        gv_redact(argv[i], red, sz);
        char *copy = strcmp(red, argv[i]) ? strdup(argv[i]) : NULL;
        if (copy) {
            size_t m = strlen(red);
            if (m <= n) {
                memcpy(argv[i], red, m);
                memset(argv[i] + m, 0, n - m);
            } else {
                memset(argv[i], '*', n);
            }
            argv[i] = copy; /* the command's own; lives as long as the process */
        }
        free(red);
    }
}

int main(int argc, char **argv)
{
    scrub_argv(argc, argv);
    cli_term_init();
    /* tests only: a small budget for documents, so a test of the limit needs
     * no gigabytes (base/json.h; README, "Exit codes") */
    const char *budget = getenv("GPUVET_TEST_JSON_BUDGET_MB");
    if (budget && *budget)
        gv_json_set_budget((size_t)strtoull(budget, NULL, 10) << 20);
    cli_guard_output();
    /* tests kill gpuvet at exact points of its own (base/fs.h, cmd_check.c) */
    gv_test_stop_points(getenv("GPUVET_TEST_STOP_AT"), getenv("GPUVET_TEST_STOP_FILE"));
    if (argc < 2) {
        print_usage(stderr);
        return GV_EXIT_USAGE;
    }
    const char *name = argv[1];
    if (!strcmp(name, "--help") || !strcmp(name, "-h") || !strcmp(name, "help")) {
        if (argc > 2 && strcmp(name, "help") == 0) {
            char *help_argv[] = {argv[2], (char *)"--help", NULL};
            for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
                if (!strcmp(commands[i].name, argv[2]))
                    return finish_stdout(commands[i].fn(2, help_argv));
        }
        print_usage(stdout);
        return finish_stdout(GV_EXIT_OK);
    }
    if (!strcmp(name, "--version") || !strcmp(name, "-V") || !strcmp(name, "version")) {
        printf("gpuvet %s\n", GPUVET_VERSION);
        return finish_stdout(GV_EXIT_OK);
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (!strcmp(commands[i].name, name))
            return finish_stdout(commands[i].fn(argc - 1, argv + 1));
    fprintf(stderr, "gpuvet: '%s' is not a gpuvet command. See 'gpuvet --help'.\n", name);
    return GV_EXIT_USAGE;
}
