/* The text form of a gpuvet.diff document (gpuvet diff, gpuvet history diff):
 * changes by layer, most consequential first. */
#include <stdio.h>
#include <string.h>

#include "base/json.h"
#include "cli/cli.h"
#include "env/diff.h"

static const char *kind_mark(const char *kind)
{
    if (!strcmp(kind, "added"))
        return "+";
    if (!strcmp(kind, "removed"))
        return "-";
    if (!strcmp(kind, "changed"))
        return "~";
    return "!";
}

static const char *kind_color(const char *kind)
{
    if (!strcmp(kind, "added"))
        return cli_green();
    if (!strcmp(kind, "removed"))
        return cli_red();
    if (!strcmp(kind, "changed"))
        return cli_yellow();
    return cli_red();
}

static const char *s_or(const json_t *o, const char *key, const char *dflt)
{
    const char *s = json_string_value(json_object_get(o, key));
    return s ? s : dflt;
}

/* "layer 3 (sha256:ab12cd34ef56…, RUN apt-get install …)" */
static void print_layer(const char *lead, const json_t *l)
{
    const char *dg = s_or(l, "digest", NULL), *by = s_or(l, "created_by", NULL);
    printf("%s layer %lld", lead, (long long)json_integer_value(json_object_get(l, "index")));
    if (dg)
        printf(" (%.19s%s", dg, strlen(dg) > 19 ? "…" : "");
    if (by)
        printf("%s%.72s%s", dg ? ", " : " (", by, strlen(by) > 72 ? " …" : "");
    if (dg || by)
        putchar(')');
}

/* Which image layer brought the change, on each side that is an image. */
static void print_brought(const json_t *il)
{
    const json_t *b = json_object_get(il, "before"), *a = json_object_get(il, "after");
    if (!a && !b)
        return;
    printf("      %s", cli_dim());
    if (a)
        print_layer("brought by", a);
    if (b)
        print_layer(a ? "; before:" : "had come with", b);
    printf("%s\n", cli_reset());
}

static void print_side(const char *label, const json_t *s)
{
    const json_t *img = json_object_get(s, "image");
    printf("%s%s%s %s (%s, root %s)\n", cli_bold(), label, cli_reset(), s_or(s, "file", "?"),
           s_or(s, "created", "?"), s_or(s, "root", "?"));
    if (img)
        printf("       image %s (%s, %lld layers)\n", s_or(img, "reference", "?"),
               s_or(img, "manifest_digest", s_or(img, "config_digest", "?")),
               (long long)json_integer_value(json_object_get(img, "layers")));
}

/* What an image's tag or labels say against its content. */
static void print_findings(const json_t *fs)
{
    if (!json_array_size(fs))
        return;
    printf("\n%stag vs content%s\n", cli_bold(), cli_reset());
    const json_t *f;
    size_t i;
    json_array_foreach(fs, i, f)
        printf("  %s!%s %s image: %s  %s(%s)%s\n", cli_red(), cli_reset(), s_or(f, "side", "?"),
               s_or(f, "message", "?"), cli_dim(), s_or(f, "id", "?"), cli_reset());
}

static void print_change(const json_t *c)
{
    const char *kind = s_or(c, "kind", "?");
    const char *before = s_or(c, "before", NULL), *after = s_or(c, "after", NULL);
    const char *detail = s_or(c, "detail", NULL);
    printf("  %s%s%s %s: ", kind_color(kind), kind_mark(kind), cli_reset(), s_or(c, "subject", "?"));
    if (before && after)
        printf("%s -> %s", before, after);
    else if (after)
        printf("%s%s", !strcmp(kind, "added") ? "added " : "", after);
    else if (before)
        printf("removed (was %s)", before);
    if (strcmp(kind, "added") && strcmp(kind, "removed") && strcmp(kind, "changed"))
        printf(" %s[%s]%s", cli_bold(), kind, cli_reset());
    if (detail)
        printf("  %s(%s)%s", cli_dim(), detail, cli_reset());
    putchar('\n');
    print_brought(json_object_get(c, "image_layer"));
}

void cli_diff_print(const json_t *doc)
{
    print_side("before", json_object_get(doc, "before"));
    print_side("after ", json_object_get(doc, "after"));
    const json_t *changes = json_object_get(doc, "changes"), *c;
    const char *layer = NULL;
    size_t i;
    json_array_foreach(changes, i, c) {
        const char *l = s_or(c, "layer", "?");
        if (!layer || strcmp(layer, l)) {
            layer = l;
            int rank = (int)json_integer_value(json_object_get(c, "rank"));
            const char *title = gv_diff_layer_title(rank);
            printf("\n%s%s%s\n", cli_bold(), title ? title : l, cli_reset());
        }
        print_change(c);
    }
    const json_t *nc = json_object_get(doc, "not_comparable");
    if (json_array_size(nc)) {
        printf("\n%snot comparable%s\n", cli_bold(), cli_reset());
        json_array_foreach(nc, i, c)
            printf("  %s?%s %s: %s\n", cli_dim(), cli_reset(), s_or(c, "section", "?"),
                   s_or(c, "reason", "not collected"));
    }
    print_findings(json_object_get(doc, "image_findings"));
    size_t n = json_array_size(changes);
    if (!n) {
        printf("\n%sno differences%s\n", cli_green(), cli_reset());
        return;
    }
    printf("\n%zu change%s:", n, n == 1 ? "" : "s");
    const json_t *by = json_object_get(json_object_get(doc, "summary"), "by_layer");
    int first = 1;
    for (int l = GV_LAYER_DRIVER; l <= GV_LAYER_IMAGE; l++) {
        json_int_t k = json_integer_value(json_object_get(by, gv_diff_layer_name(l)));
        if (k) {
            printf("%s %lld %s", first ? "" : ",", (long long)k, gv_diff_layer_name(l));
            first = 0;
        }
    }
    putchar('\n');
}
