/* The command-line room: option parsing, human and JSON output, exit codes.
 * Only this room prints. */
#ifndef GV_CLI_CLI_H
#define GV_CLI_CLI_H

#include <getopt.h>
#include <stdio.h>

#include <jansson.h>

#include "base/err.h"

/* Exit codes (documented in README.md). */
enum gv_exit {
    GV_EXIT_OK = 0,       /* ran, nothing wrong found */
    GV_EXIT_FINDINGS = 1, /* ran, found differences, failures, regressions or errors */
    GV_EXIT_USAGE = 2,    /* bad command line */
    GV_EXIT_ERROR = 3,    /* unreadable input, environment or device error */
};

/* The command table lives in commands.h; each entry's function is in cmd_NAME.c. */
#define GV_COMMANDS(X)                                                                       \
    X(snapshot, "record every layer of the GPU stack as one JSON document")                  \
    X(diff, "what changed between two snapshots, most consequential first")                  \
    X(doctor, "diagnose the stack and say the exact fix")                                    \
    X(check, "run the deterministic numerics suite against fp64 references")                 \
    X(compare, "compare two result files case by case")                                      \
    X(ab, "run the suite on two stacks side by side and compare")                            \
    X(plan, "generate a rollback plan from a saved baseline (dry run)")                      \
    X(verify, "verify that the machine matches a baseline again")                            \
    X(torch, "capture your own model op by op; bisect it in another environment")            \
    X(probe, "the numerical fingerprint of every GEMM route of a device")                    \
    X(bench, "honest speed of GEMM, memory, copies, launches, peers and collectives")       \
    X(report, "one self-contained HTML page for any gpuvet document")                        \
    X(history, "the runs recorded in the history database; the last good one")              \
    X(port, "what in your CUDA code and extensions will break on AMD GPUs, and the fix")     \
    X(fleet, "many nodes, one run: the odd node named; a gate for a scheduler")             \
    X(matrix, "the version matrix: which stack combinations passed, where and when")

#define GV_DECLARE_CMD(name, summary) int cmd_##name(int argc, char **argv);
GV_COMMANDS(GV_DECLARE_CMD)
#undef GV_DECLARE_CMD

/* ---- one grammar for every command (issue 36; cli.c) ---- */

/* Options go anywhere: before, between and after operands; "--" ends them (an
 * operand after it may start with '-'). One parse per struct, restarted from
 * scratch (two parses in one process do not share getopt's state), whatever
 * POSIXLY_CORRECT says. Subcommands: the command passes argv from the
 * subcommand's name on, and cmd names both ("plan rollback"). */
struct cli_args {
    const char *cmd;               /* in messages: "diff", "plan rollback" */
    int argc;
    char **argv;                   /* argv[0]: the command's (or subcommand's) name */
    const char *shortopts;         /* getopt's short options, e.g. "o:h" */
    const struct option *longopts; /* getopt_long's table */
    char *arg;                     /* the value of the option just returned */
    char **ops;                    /* when cli_next returned -1: the operands, in order */
    int nops;
    int started;
};
#define CLI_ARGS(cmd_, argc_, argv_, short_, long_) \
    {.cmd = (cmd_), .argc = (argc_), .argv = (argv_), .shortopts = (short_), .longopts = (long_)}
/* The next option's val (its value in a->arg); -1 when none is left (then
 * a->ops[0 .. a->nops) are the operands); '?' for an unknown option, a missing
 * value or a value given to an option that takes none, after saying so
 * (cli_usage): the command returns GV_EXIT_USAGE. */
int cli_next(struct cli_args *a);
/* "gpuvet CMD: unexpected argument 'X'" when operands were given to a command
 * that takes none: GV_EXIT_USAGE, else GV_EXIT_OK. */
int cli_no_operands(const struct cli_args *a);

/* -o FILE and --json, the same on every command that makes a document:
 * --json: the document on stdout instead of the text; -o FILE: the document
 * written to FILE atomically and "gpuvet CMD: wrote FILE (N bytes)" on stderr,
 * the text (or with --json the document) still on stdout; -o -: stdout. */
#define CLI_OPT_JSON 0x100 /* --json's val in getopt_long tables */
#define CLI_OUT_OPTIONS                                                    \
    {"output", required_argument, 0, 'o'}, {"json", no_argument, 0, CLI_OPT_JSON}
#define CLI_HELP_JSON "      --json            the document (JSON) on stdout instead of the text\n"
#define CLI_HELP_OUTPUT                                                                        \
    "  -o, --output FILE     also write the document to FILE (atomically; -o -: stdout)\n"
struct cli_out {
    const char *output;
    int json;
};
/* Sets *o when c is 'o' or CLI_OPT_JSON: 1, else 0. */
int cli_out_opt(struct cli_out *o, int c, const char *arg);
/* Whether the text goes to stdout (no --json, no -o -). */
int cli_out_text(const struct cli_out *o);
/* Writes doc as *o says; GV_EXIT_OK, or an error's exit code after saying it. */
int cli_put_doc(const char *cmd, const struct json_t *doc, const struct cli_out *o);

/* --python PY, --python-root DIR, --image REF: the interpreter of every command
 * that starts a torch device (check, bench, probe, ab, torch capture/bisect,
 * fleet run/gate): one set of options, one help text, one choice. */
enum { CLI_OPT_PYTHON = 0x101, CLI_OPT_PYTHON_ROOT, CLI_OPT_IMAGE }; /* above any char */
#define CLI_PYTHON_OPTIONS                                   \
    {"python", required_argument, 0, CLI_OPT_PYTHON},        \
        {"python-root", required_argument, 0, CLI_OPT_PYTHON_ROOT}, \
        {"image", required_argument, 0, CLI_OPT_IMAGE}
#define CLI_HELP_PYTHON                                                                         \
    "      --python PY       the interpreter for torch:... (a venv's or conda env's\n"           \
    "                        bin/python, /usr/bin/python3, ...); default: the first\n"           \
    "                        environment the snapshot finds with a GPU build of torch\n"        \
    "                        (any torch for torch:cpu), else python3 (said which);\n"           \
    "                        sets $GPUVET_PYTHON\n"                                              \
    "      --python-root DIR the interpreter lives in this root filesystem (a chroot or an\n"   \
    "                        unpacked container image) and runs with DIR as its /,\n"          \
    "                        reaching this machine's GPU; sets $GPUVET_PYTHON_ROOT\n"            \
    "      --image REF       torch:...: run the worker inside the container image REF (an\n"   \
    "                        OCI layout, an archive, podman:NAME; docs/image.md): unpacked\n"  \
    "                        once into the cache, run as --python-root with the image's\n"     \
    "                        own Env (its python, its code, as a container would); on\n"       \
    "                        torch:cuda the host driver's libraries are bound in\n"
struct cli_python {
    const char *python, *root, *image;
};
/* Sets *p when c is one of CLI_PYTHON_OPTIONS': 1, else 0. */
int cli_python_opt(struct cli_python *p, int c, const char *arg);
/* For device: when it starts Python, --image unpacked (its description in
 * *image, the caller's to free; its rootfs in root) and the interpreter chosen
 * (cli_choose_python; what was chosen in note); *effective_root: the root the
 * worker runs in (NULL: this machine). When it does not, any of the three is a
 * usage error naming cmd. GV_EXIT_OK, or an exit code after saying why. */
int cli_python_setup(const char *cmd, const struct cli_python *p, const char *device,
                     char *root, size_t rootsz, const char **effective_root, struct json_t **image,
                     char *note, size_t notesz);

/* cli_python_setup for a command that needs nothing back (probe, bench). */
int cli_python_ready(const char *cmd, const struct cli_python *p, const char *device);

/* The interpreter for --device torch:... (cli_python_setup): python, else
 * $GPUVET_PYTHON, else the snapshot's first environment with a (GPU when
 * want_gpu) build of torch, said on stderr and in note. Sets $GPUVET_PYTHON and,
 * with python_root, $GPUVET_PYTHON_ROOT for the worker (and child processes). */
void cli_choose_python(const char *python, const char *python_root, int want_gpu, char *note,
                       size_t notesz);

/* compare A B (compare_out.c): result files, else two captures or two bench
 * documents; what 'gpuvet compare' prints and returns (ab runs it too).
 * oa/ob: saved outputs of A and B (NULL: the paths the result files record). */
struct cli_compare_opts {
    const char *a, *b, *oa, *ob, *junit;
    int json, all;
    const char *output; /* -o FILE: the comparison document (cli_put_doc) */
};
int cli_compare_files(const struct cli_compare_opts *o);

/* Captures (.gvcap): compare A B for two (capture_out.c). */
int cli_compare_captures(const struct cli_compare_opts *o);
/* compare for two gpuvet.bench documents (cmp_bench.c); o->all: list unchanged results too. */
int cli_compare_bench(const struct cli_compare_opts *o);
/* compare for two gpuvet.probe documents (cmp_probe.c): exit 1 when a property changed. */
int cli_is_probe_file(const char *path);
int cli_compare_probes(const struct cli_compare_opts *o);
/* fleet compare DIR|FILE... (fleet_out.c): the whole subcommand, argv[0] "compare". */
int cli_fleet_compare(int argc, char **argv);

/* Output settings shared by all commands. */
struct gv_term {
    int color;  /* stdout is a terminal and NO_COLOR is unset */
    int tty;    /* stderr is a terminal (progress lines) */
};
extern struct gv_term gv_term;
void cli_term_init(void);

/* Colour wrappers: return "" when colour is off. */
const char *cli_red(void);
const char *cli_yellow(void);
const char *cli_green(void);
const char *cli_bold(void);
const char *cli_dim(void);
const char *cli_reset(void);

/* Text on its way to the terminal (issue 31): appends s[0..n) to out with every
 * control byte (< 0x20, 0x7f) written as \xNN (\n, \t, \r by name), invalid
 * UTF-8 as \xNN per byte, and C1 controls, U+2028/2029 and the bidirectional
 * overrides as \uNNNN. Returns the bytes used: all of them, except that with
 * CLI_ESC_MORE an incomplete sequence at the end is left for the next call. */
enum {
    CLI_ESC_LINES = 1, /* \n and \t stay as they are (text output; never in messages) */
    CLI_ESC_OWN = 2,   /* gpuvet's own colour and clear-line sequences stay (a terminal) */
    CLI_ESC_MORE = 4,  /* more bytes follow */
};
struct gv_buf;
size_t cli_escape(struct gv_buf *out, const char *s, size_t n, int flags);
/* Makes stdout and stderr pass every byte through cli_escape (main calls it
 * first): whatever printf writes a document's string with, the terminal gets
 * it escaped. After cli_term_init. */
void cli_guard_output(void);

/* "gpuvet: error: <msg>" on stderr, msg escaped into one line; returns GV_EXIT_ERROR. */
int cli_fail(const struct gv_err *err);
int cli_failf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* "gpuvet CMD: <msg>" plus a hint to --help; returns GV_EXIT_USAGE. */
int cli_usage(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Print help text (already formatted) to stdout; returns GV_EXIT_OK. */
int cli_help(const char *text);

/* Writes a JSON document to stdout, or to path atomically when path != NULL. */
struct json_t;
int cli_emit_json(const struct json_t *doc, const char *path);
/* "gpuvet CMD: wrote PATH (N bytes)" on stderr, so stdout stays clean; nothing
 * when PATH cannot be read back. */
void cli_say_written(const char *cmd, const char *path);
/* A document's verdict line, in the words its report page opens with (report/verdict.h). */
void cli_verdict_print(const struct json_t *doc);
/* The model's outputs that are not identical, by name, when it has more than one
 * (a comparison's or bisection's "outputs"; capture_out.c). */
void cli_capture_print_outputs(const struct json_t *outs);
/* JUnit XML of a capture comparison or bisection document (capture_out.c). */
int cli_capture_junit(const char *path, const char *suite, const struct json_t *d,
                      struct gv_err *err);

/* Explanations shared by compare, ab and verify (explain_out.c):
 * the ranked likely causes, each degraded case's error signature and, when both
 * result files embed a fingerprint (check --probe), the properties that changed. */
struct gv_compare;
struct gv_results;
void cli_explain_print(const struct gv_compare *c, int all); /* all: every id and kernel */
struct json_t *cli_explain_json(const struct gv_compare *c, const struct gv_results *a,
                                const struct gv_results *b);
/* The same explanation printed from its JSON form (verify's report). */
void cli_explain_print_json(const struct json_t *ex);
/* History database (record.c). --record, or GPUVET_RECORD=1
 * always: one cli_record call after the command's result is written. A failed
 * recording is an error on stderr and exit 3 where the run itself exited 0
 * (the result file is written all the same). */
struct gv_history;
struct gv_history_ident;
int cli_record_wanted(int flag);
/* --db URL on a recording command: record there (and imply --record). */
void cli_record_set_db(const char *db);
int cli_record(const struct json_t *doc, const char *source);
int cli_record_file(const char *path);
/* The same for side "a" or "b" of an ab experiment: recorded as one, which
 * `history good` and `plan rollback --to last-good` pass over. */
int cli_record_file_side(const char *path, const char *side);
int cli_record_file_into(struct gv_history *h, const char *path,
                         const struct gv_history_ident *id);
int cli_history_open(const char *db, int create, struct gv_history **h);
/* The snapshot of this machine's (or machine's) last run that passed, written
 * to a file under the data directory for 'plan rollback --to last-good'. */
int cli_history_last_good(const char *machine, char *path, size_t pathsz);
/* "2026-11-30" or "2026-11-30T10:00:00Z" (history --since, matrix --since; cli.c) as
 * ISO-8601 UTC in out; -1 when it is neither. */
int cli_parse_since(const char *in, char *out, size_t n);
/* gv_results_load within the memory budget for documents (base/json.h): a
 * document too large for it is GV_E_NOMEM naming path. */
int cli_results_load(const char *path, struct gv_results *res, struct gv_err *err);
/* The text form of a snapshot diff document (diff_out.c): diff, history diff. */
void cli_diff_print(const struct json_t *doc);

/* ---- container images (src/cli/image_cli.c, docs/image.md) ---- */
/* The snapshot of the image ref names: opened, its layers staged under the
 * cache (removed before returning), the tree inspected as a root with the
 * config's Env as its environment, the image section and layer attribution
 * added. hash 0: no content digests (--no-hash). */
int cli_image_snapshot(const char *ref, int hash, json_t **doc, struct gv_err *err);
/* The image section alone (reference, digests, tags, config), no layer read:
 * what verify --image and plan need to name the image. */
int cli_image_identity(const char *ref, json_t **image, struct gv_err *err);
/* The image's full rootfs, unpacked once into the cache and reused
 * ($XDG_CACHE_HOME/gpuvet/images/rootfs/HEX of the manifest digest, or of the
 * config digest for a legacy docker-archive; HEX.env its config's Env,
 * NUL-separated; HEX.complete written last), its path into root. *image: the
 * run's description ("reference", "manifest_digest", "config_digest", "run",
 * "rootfs", "reused"). A failed unpack leaves no rootfs. */
int cli_image_rootfs(const char *ref, char *root, size_t rootsz, json_t **image,
                     struct gv_err *err);
/* --image REF of check, ab and torch: cli_image_rootfs, said on stderr, and
 * $GPUVET_PYTHON_ENV_FILE for the worker's environment; want_gpu (torch:cuda):
 * the host driver's libraries from /etc/ld.so.cache in $GPUVET_PYTHON_HOST_DRIVER
 * (colon-separated) and in *image, or a note there that none was found. Then
 * pass root to cli_choose_python as the python root. */
int cli_image_python(const char *ref, int want_gpu, char *root, size_t rootsz, json_t **image,
                     struct gv_err *err);

#endif
