/* gpuvet compare: its options; the comparison itself is compare_out.c (ab
 * runs it too). */
#include <stdio.h>

#include "cli/cli.h"

static const char usage[] =
    "usage: gpuvet compare BEFORE AFTER [--json] [-o FILE] [--junit FILE] [--all]\n"
    "                      [--outputs-a FILE] [--outputs-b FILE]\n"
    "\n"
    "Compares two result files of `gpuvet check -o` case by case. Inputs are proven\n"
    "identical by their digests; each case is then:\n"
    "  identical       bit-identical output (same output digest)\n"
    "  noise           different bits, but effective bits within 1 bit and\n"
    "                  error/bound not grown beyond noise\n"
    "  degraded        more than 1 effective bit lost, or error/bound grew by more\n"
    "                  than 0.25 and to more than twice its value, or NaN/Inf appeared\n"
    "  improved        the reverse of degraded\n"
    "  newly_failing   passed before, fails (or cannot run) after\n"
    "  newly_passing   failed before, passes after\n"
    "  still_failing, not_run, missing_before, missing_after\n"
    "When both runs saved their outputs (check --save-outputs, recorded in the result\n"
    "file, or given with --outputs-a/--outputs-b), the outputs are also compared element\n"
    "by element: the largest difference in ULPs of the output format and the number of\n"
    "elements whose bits differ. Likely causes are listed from the two embedded\n"
    "snapshots: environment variables, GPU libraries, the device and the driver.\n"
    "Two captures of a model ('gpuvet torch capture') are compared op by op instead:\n"
    "aligned, the difference of each op in AFTER from BEFORE in units of roundoff of\n"
    "its format, the first op that differs and the first beyond rounding.\n"
    "Two benchmark documents ('gpuvet bench -o') are compared result by result: B vs A\n"
    "as a ratio (above 1: B is better); regressed or improved when the change is larger\n"
    "than the noise, max(spread A, spread B, 2%), and the sample ranges do not overlap;\n"
    "status changes (ok -> failed: B's result is wrong) are regressions too. Likely\n"
    "causes come from the conditions (clocks, power, load), the libraries the collectives\n"
    "loaded and the embedded snapshots (docs/bench-compare.md).\n"
    "Two fingerprints ('gpuvet probe --json') are compared property by property; a\n"
    "change of run-to-run determinism counts only beyond chance (docs/probe.md).\n"
    "\n"
    "The document is gpuvet.compare (two captures: gpuvet.capture-compare).\n"
    "\n"
    "Options:\n"
    CLI_HELP_JSON
    CLI_HELP_OUTPUT
    "      --junit FILE      JUnit XML: degraded and newly failing cases are failures\n"
    "                        (captures: one testcase per op, beyond rounding fails)\n"
    "      --outputs-a FILE  saved outputs of BEFORE (overrides the recorded path)\n"
    "      --outputs-b FILE  saved outputs of AFTER\n"
    "      --all             list identical cases too\n"
    "  -h, --help            this help\n"
    "\n"
    "Exit status: 0 no degradation, 1 a case degraded or newly fails, 2 usage error,\n"
    "             3 unreadable, corrupt, wrong-schema or mismatched files.\n";

static int parse_args(int argc, char **argv, struct cli_compare_opts *o)
{
    static const struct option opts[] = {
        CLI_OUT_OPTIONS,                          {"junit", required_argument, 0, 'J'},
        {"outputs-a", required_argument, 0, 'A'}, {"outputs-b", required_argument, 0, 'B'},
        {"all", no_argument, 0, 'a'},             {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0}};
    struct cli_out out = {0};
    struct cli_args args = CLI_ARGS("compare", argc, argv, "o:h", opts);
    for (int ch; (ch = cli_next(&args)) != -1;) {
        if (cli_out_opt(&out, ch, args.arg))
            continue;
        switch (ch) {
        case 'J': o->junit = args.arg; break;
        case 'A': o->oa = args.arg; break;
        case 'B': o->ob = args.arg; break;
        case 'a': o->all = 1; break;
        case 'h': return -1;
        default: return GV_EXIT_USAGE;
        }
    }
    if (args.nops != 2)
        return cli_usage("compare", "needs two result files, BEFORE and AFTER (got %d)",
                         args.nops);
    o->a = args.ops[0];
    o->b = args.ops[1];
    o->json = out.json;
    o->output = out.output;
    return GV_EXIT_OK;
}

int cmd_compare(int argc, char **argv)
{
    struct cli_compare_opts o = {0};
    int rc = parse_args(argc, argv, &o);
    if (rc < 0)
        return cli_help(usage);
    if (rc)
        return rc;
    return cli_compare_files(&o);
}
