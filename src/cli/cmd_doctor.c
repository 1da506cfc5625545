/* gpuvet doctor: run the knowledge-base rules over a snapshot and print each
 * finding with its evidence, the exact fix and a reference. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/fs.h"
#include "base/json.h"
#include "cli/cli.h"
#include "env/probe.h"
#include "env/rootenv.h"
#include "kb/kb.h"
#include "kb/rules.h"

extern char **environ;

static const char usage[] =
    "usage: gpuvet doctor [--snapshot FILE | --root DIR] [--json] [-o FILE] [--strict]\n"
    "       gpuvet doctor --image REF [--host | --host-snapshot FILE] [--json] [-o FILE]\n"
    "                     [--strict]\n"
    "       gpuvet doctor --snapshot IMAGE.json --host | --host-snapshot FILE\n"
    "       gpuvet doctor --explain MESSAGE\n"
    "       gpuvet doctor --list-rules\n"
    "\n"
    "Diagnose the GPU stack: rules over a snapshot (this machine by default), each finding\n"
    "with its severity, the evidence (snapshot fields and values), the exact fix and a\n"
    "reference. Rules and the knowledge base are listed in docs/doctor.md. The document\n"
    "is gpuvet.doctor.\n"
    "\n"
    "      --snapshot FILE  diagnose a saved snapshot (gpuvet snapshot -o FILE)\n"
    "      --root DIR       diagnose a mounted image or chroot (offline)\n"
    "      --image REF      diagnose a container image (docs/image.md, References)\n"
    "      --host           also check what this machine must give the image: kernel\n"
    "                       driver, GPU targets, device nodes (docker/podman flags)\n"
    "      --host-snapshot FILE  the same against a saved host snapshot\n"
    CLI_HELP_JSON
    CLI_HELP_OUTPUT
    "      --strict         exit 1 on warnings too\n"
    "      --explain MSG    look up an error message in the knowledge base\n"
    "      --list-rules     print the rule table\n"
    "  -h, --help           this help\n"
    "\n"
    "Exit status: 0 no error found, 1 an error (or with --strict a warning) was found,\n"
    "2 bad command line, 3 unreadable input.\n";

static void print_value(const json_t *v)
{
    if (json_is_string(v) && json_string_value(v)[0]) {
        printf("%s", json_string_value(v));
        return;
    }
    char *s = gv_json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY | JSON_PRESERVE_ORDER);
    if (!s) {
        printf("?");
        return;
    }
    if (strlen(s) > 240)
        printf("%.237s...", s);
    else
        printf("%s", s);
    free(s);
}

static const char *sev_color(const char *sev)
{
    return !strcmp(sev, "error") ? cli_red() : !strcmp(sev, "warning") ? cli_yellow() : cli_dim();
}

static void print_finding(const json_t *f)
{
    const char *sev = json_string_value(json_object_get(f, "severity"));
    printf("  %s%s%-7s%s %s[%s]%s %s\n", cli_bold(), sev_color(sev), sev, cli_reset(), cli_dim(),
           json_string_value(json_object_get(f, "rule")), cli_reset(),
           json_string_value(json_object_get(f, "title")));
    size_t i;
    json_t *e;
    json_array_foreach(json_object_get(f, "evidence"), i, e) {
        printf("          %sevidence%s  %s = ", cli_dim(), cli_reset(),
               json_string_value(json_object_get(e, "path")));
        print_value(json_object_get(e, "value"));
        printf("\n");
    }
    json_array_foreach(json_object_get(f, "fix"), i, e)
        printf("          %sfix%s       %s%s%s\n", cli_dim(), cli_reset(), cli_green(),
               json_string_value(e), cli_reset());
    printf("          %sreference %s%s\n", cli_dim(), json_string_value(json_object_get(f, "reference")),
           cli_reset());
}

static void print_group(const json_t *findings, const char *sev, const char *heading)
{
    int n = 0;
    size_t i;
    json_t *f;
    json_array_foreach(findings, i, f)
        n += !json_is_false(json_object_get(f, "checked")) &&
             !strcmp(json_string_value(json_object_get(f, "severity")), sev);
    if (!n)
        return;
    printf("\n%s%s%s (%d)%s\n", cli_bold(), sev_color(sev), heading, n, cli_reset());
    json_array_foreach(findings, i, f)
        if (!json_is_false(json_object_get(f, "checked")) &&
            !strcmp(json_string_value(json_object_get(f, "severity")), sev))
            print_finding(f);
}

/* "cannot check" notes, one line per distinct reason with the rules it stopped. */
static void print_unchecked(const json_t *findings)
{
    size_t n = json_array_size(findings);
    int header = 0;
    for (size_t i = 0; i < n; i++) {
        const json_t *f = json_array_get(findings, i);
        const char *title = json_string_value(json_object_get(f, "title"));
        if (!json_is_false(json_object_get(f, "checked")))
            continue;
        int seen = 0;
        for (size_t k = 0; k < i && !seen; k++) {
            const json_t *g = json_array_get(findings, k);
            seen = json_is_false(json_object_get(g, "checked")) &&
                   !strcmp(json_string_value(json_object_get(g, "title")), title);
        }
        if (seen)
            continue;
        if (!header++)
            printf("\n%sNot checked%s (a section was not collected; no verdict either way)\n",
                   cli_bold(), cli_reset());
        printf("  %s", title);
        const char *sep = " [";
        for (size_t k = i; k < n; k++) {
            const json_t *g = json_array_get(findings, k);
            if (json_is_false(json_object_get(g, "checked")) &&
                !strcmp(json_string_value(json_object_get(g, "title")), title)) {
                printf("%s%s%s%s", sep, cli_dim(), json_string_value(json_object_get(g, "rule")),
                       cli_reset());
                sep = ", ";
            }
        }
        printf("]\n");
    }
}

static void print_report(const json_t *doc)
{
    const json_t *snap = json_object_get(doc, "snapshot");
    const json_t *sum = json_object_get(doc, "summary");
    const char *root = json_string_value(json_object_get(snap, "root"));
    const char *host = json_string_value(
        json_object_get(json_object_get(doc, "host_snapshot"), "source"));
    printf("%sgpuvet doctor%s: %s%s%s%s%s\n", cli_bold(), cli_reset(),
           json_string_value(json_object_get(snap, "source")), root ? ", root " : "",
           root ? root : "", host ? ", against host " : "", host ? host : "");
    const json_t *findings = json_object_get(doc, "findings");
    print_group(findings, "error", "Errors");
    print_group(findings, "warning", "Warnings");
    print_group(findings, "info", "Info");
    print_unchecked(findings);
    long long e = json_integer_value(json_object_get(sum, "errors"));
    long long w = json_integer_value(json_object_get(sum, "warnings"));
    printf("\n%s%lld error%s%s, %s%lld warning%s%s, %lld info; %lld rules, %lld not checked\n",
           e ? cli_red() : cli_green(), e, e == 1 ? "" : "s", cli_reset(),
           w ? cli_yellow() : cli_green(), w, w == 1 ? "" : "s", cli_reset(),
           json_integer_value(json_object_get(sum, "info")),
           json_integer_value(json_object_get(sum, "rules")),
           json_integer_value(json_object_get(sum, "not_checked")));
}

static int explain(const char *msg)
{
    const struct kb_error *e = kb_error_match(msg);
    if (!e) {
        printf("not in the knowledge base: %s\n", msg);
        return GV_EXIT_FINDINGS;
    }
    printf("matches:  %s\nmeaning:  %s\nfix:      %s\n"
           "source:   docs/facts/rocm-facts.md %s\n", e->pattern,
           e->meaning, e->fix, e->source);
    return GV_EXIT_OK;
}

static int list_rules(void)
{
    const struct gv_rule *r;
    for (size_t i = 0; (r = gv_rule_at(i)); i++)
        printf("%-17s %-7s %s  (%s)\n", r->id, gv_severity_name(r->severity), r->title,
               r->issue_rule);
    return GV_EXIT_OK;
}

static int load(const char *snapshot, const char *root, json_t **doc)
{
    struct gv_err err = {0};
    if (snapshot) {
        if (gv_snapshot_load(snapshot, doc, &err))
            return cli_fail(&err);
        return GV_EXIT_OK;
    }
    if (!gv_is_dir(root))
        return cli_failf("--root %s: not a directory", root);
    /* an image's processes do not inherit this shell: under --root their
     * variables are what a login there gets from the image's /etc/environment */
    char **root_env = NULL;
    int live = strcmp(root, "/") == 0;
    if (!live && gv_rootenv_read(root, &root_env, &err))
        return cli_fail(&err);
    struct gv_probe_ctx ctx = {.root = root, .live = live, .pid = 0,
                               .envp = live ? environ : root_env, .hash_files = 0};
    int failed = gv_snapshot_collect(&ctx, doc, &err);
    gv_rootenv_free(root_env);
    return failed ? cli_fail(&err) : GV_EXIT_OK;
}

/* The image's snapshot (--image REF), its error naming REF. */
static int load_image(const char *ref, json_t **doc)
{
    struct gv_err err = {0};
    if (cli_image_snapshot(ref, 1, doc, &err)) {
        if (!strstr(err.msg, ref))
            return cli_failf("--image %s: %s", ref, err.msg);
        return cli_fail(&err);
    }
    return GV_EXIT_OK;
}

/* The host an image is checked against: a saved snapshot, else this machine. */
static int load_host(const char *host_snapshot, json_t **host)
{
    return host_snapshot ? load(host_snapshot, NULL, host) : load(NULL, "/", host);
}

/* Diagnose: the snapshot (of an image, a file, a root or this machine) and,
 * with a host, the image against it. */
static int run_doctor(const json_t *snap, const char *source, const json_t *host,
                      const char *host_source, const struct cli_out *out, int strict)
{
    json_t *doc = gv_doctor_report_host(snap, source, host, host_source);
    int rc = cli_put_doc("doctor", doc, out);
    if (!rc && cli_out_text(out))
        print_report(doc);
    const json_t *sum = json_object_get(doc, "summary");
    int bad = json_integer_value(json_object_get(sum, "errors")) > 0 ||
              (strict && json_integer_value(json_object_get(sum, "warnings")) > 0);
    json_decref(doc);
    if (rc)
        return rc;
    return bad ? GV_EXIT_FINDINGS : GV_EXIT_OK;
}

int cmd_doctor(int argc, char **argv)
{
    static const struct option opts[] = {
        {"image", required_argument, 0, 'i'},    {"host", no_argument, 0, 'H'},
        {"host-snapshot", required_argument, 0, 'F'},
        {"snapshot", required_argument, 0, 's'}, {"root", required_argument, 0, 'r'},
        CLI_OUT_OPTIONS,                         {"strict", no_argument, 0, 'S'},
        {"explain", required_argument, 0, 'e'},  {"list-rules", no_argument, 0, 'l'},
        {"help", no_argument, 0, 'h'},           {0, 0, 0, 0}};
    const char *snapshot = NULL, *root = NULL, *image = NULL, *host_snapshot = NULL;
    const char *message = NULL;
    struct cli_out out = {0};
    int strict = 0, host = 0, rules = 0;
    struct cli_args args = CLI_ARGS("doctor", argc, argv, "o:h", opts);
    for (int c; (c = cli_next(&args)) != -1;) {
        if (cli_out_opt(&out, c, args.arg))
            continue;
        switch (c) {
        case 'i': image = args.arg; break;
        case 'H': host = 1; break;
        case 'F': host_snapshot = args.arg; host = 1; break;
        case 's': snapshot = args.arg; break;
        case 'r': root = args.arg; break;
        case 'S': strict = 1; break;
        case 'e': message = args.arg; break;
        case 'l': rules = 1; break;
        case 'h': return cli_help(usage);
        default: return GV_EXIT_USAGE;
        }
    }
    if (cli_no_operands(&args))
        return GV_EXIT_USAGE;
    if (message)
        return explain(message);
    if (rules)
        return list_rules();
    if ((snapshot != NULL) + (root != NULL) + (image != NULL) > 1)
        return cli_usage("doctor", "--snapshot, --root and --image exclude each other");
    if (host && !image && !snapshot)
        return cli_usage("doctor", "--host checks an image: give --image REF or --snapshot "
                                   "IMAGE.json");
    json_t *snap;
    int rc = image ? load_image(image, &snap) : load(snapshot, root ? root : "/", &snap);
    if (rc)
        return rc;
    json_t *hostdoc = NULL;
    if (host && !json_is_object(json_object_get(snap, "image"))) {
        json_decref(snap);
        return cli_failf("%s: not an image's snapshot (no image section): --host compares an "
                         "image with a host",
                         snapshot);
    }
    if (host && (rc = load_host(host_snapshot, &hostdoc))) {
        json_decref(snap);
        return rc;
    }
    rc = run_doctor(snap, image ? image : snapshot ? snapshot : root ? "--root" : "live system",
                    hostdoc, host_snapshot ? host_snapshot : "live system", &out, strict);
    json_decref(snap);
    json_decref(hostdoc);
    return rc;
}
