/* gpuvet compare A B for two gpuvet.probe documents: the fingerprint
 * properties that changed between them, in words (probe/fpdoc.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/fs.h"
#include "base/json.h"
#include "cli/cli.h"
#include "probe/probe.h"

int cli_is_probe_file(const char *path)
{
    json_t *d = NULL;
    struct gv_err e = {0};
    if (gv_json_read_file(path, (size_t)64 << 20, &d, &e))
        return 0;
    const char *schema = json_string_value(json_object_get(d, "schema"));
    int yes = schema && !strcmp(schema, GV_PROBE_SCHEMA);
    json_decref(d);
    return yes;
}

static int load(const char *path, struct gv_fingerprint *fp, struct gv_err *err)
{
    json_t *d = NULL;
    int rc = gv_json_read_file(path, (size_t)64 << 20, &d, err);
    if (!rc)
        rc = gv_fp_from_json(d, path, fp, err);
    json_decref(d);
    return rc;
}

static json_t *changes_json(const struct gv_fp_change *c, size_t n)
{
    json_t *a = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(a, json_pack("{s:s,s:s,s:s,s:s,s:s,s:s,s:s}", "route", c[i].route,
                                           "op", c[i].op, "precision", c[i].precision,
                                           "property", c[i].prop, "before", c[i].before, "after",
                                           c[i].after, "text", c[i].text));
    return a;
}

int cli_compare_probes(const struct cli_compare_opts *o)
{
    struct cli_out out = {o->output, o->json};
    struct gv_fingerprint fa, fb;
    struct gv_err err = {0};
    if (load(o->a, &fa, &err))
        return cli_fail(&err);
    if (load(o->b, &fb, &err)) {
        gv_fp_free(&fa);
        return cli_fail(&err);
    }
    struct gv_fp_change *c = NULL;
    size_t n = gv_fp_diff(&fa, &fb, &c);
    int rc = n ? GV_EXIT_FINDINGS : GV_EXIT_OK;
    if (o->json || o->output) {
        json_t *doc = json_pack("{s:s,s:i,s:s,s:s,s:s,s:s,s:o}", "schema", "gpuvet.compare",
                                "schema_version", 1, "kind", "probe", "a", o->a, "b", o->b,
                                "verdict", n ? "fingerprint changed" : "same fingerprint",
                                "changes", changes_json(c, n));
        int erc = cli_put_doc("compare", doc, &out);
        json_decref(doc);
        if (erc)
            rc = erc;
    }
    if (cli_out_text(&out)) {
        printf("fingerprint %s (%s)\n         vs %s (%s)\n", o->a, fa.device, o->b, fb.device);
        if (!n)
            printf("\nNo property changed. A change of \"deterministic\" counts only when the "
                   "runs of the two probes differ beyond chance (Fisher's exact test, p < %g).\n",
                   GV_FP_DET_ALPHA);
        else {
            printf("\n%s%zu propert%s changed:%s\n", cli_bold(), n, n == 1 ? "y" : "ies",
                   cli_reset());
            for (size_t i = 0; i < n; i++)
                printf("  %s\n", c[i].text);
        }
    }
    free(c);
    gv_fp_free(&fa);
    gv_fp_free(&fb);
    return rc;
}
