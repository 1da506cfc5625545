/* Plans to text: a bash script (every value single-quoted, stops at the first
 * error, safe to run twice) or Markdown for review. */
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/json.h"
#include "plan/image_pin.h"
#include "plan/plan.h"

static const char backup_token[] = "@BACKUP@";

/* One word: "@BACKUP@/x" becomes "$backup"'/x', anything else is quoted.
 * -1 when the word cannot be quoted (gv_sh_quote refuses it). */
static int word(struct gv_buf *b, const char *w)
{
    if (!w)
        return -1;
    if (!strncmp(w, backup_token, sizeof backup_token - 1)) {
        gv_buf_add(b, "\"$backup\"");
        w += sizeof backup_token - 1;
        return *w ? gv_sh_quote(b, w) : 0;
    }
    return gv_sh_quote(b, w);
}

static int render_argv(struct gv_buf *b, const json_t *cmd)
{
    const json_t *lines = json_object_get(cmd, "stdin");
    if (lines) {
        gv_buf_add(b, "printf '%s\\n'");
        size_t i;
        json_t *l;
        json_array_foreach(lines, i, l)
        {
            gv_buf_add(b, " ");
            if (gv_sh_quote(b, json_string_value(l)))
                return -1;
        }
        gv_buf_add(b, " | ");
    }
    const char *k;
    json_t *v;
    json_object_foreach(json_object_get(cmd, "env"), k, v)
    {
        for (const char *p = k; *p; p++)
            if (!((*p >= 'A' && *p <= 'Z') || *p == '_' || (*p >= '0' && *p <= '9')))
                return -1;
        gv_buf_printf(b, "%s=", k);
        if (gv_sh_quote(b, json_string_value(v)))
            return -1;
        gv_buf_add(b, " ");
    }
    size_t i;
    json_t *a;
    const char *prog = json_string_value(json_array_get(json_object_get(cmd, "argv"), 0));
    int optional = json_is_true(json_object_get(cmd, "optional"));
    if (!prog)
        return -1;
    if (optional) {
        gv_buf_add(b, "if command -v ");
        if (gv_sh_quote(b, prog))
            return -1;
        gv_buf_add(b, " >/dev/null 2>&1; then\n    ");
    }
    json_array_foreach(json_object_get(cmd, "argv"), i, a)
    {
        if (i)
            gv_buf_add(b, " ");
        if (word(b, json_string_value(a)))
            return -1;
    }
    const char *out = json_string_value(json_object_get(cmd, "stdout"));
    if (out) {
        gv_buf_add(b, " > ");
        if (word(b, out))
            return -1;
    }
    gv_buf_add(b, "\n");
    if (optional) {
        gv_buf_add(b, "else\n    echo ");
        struct gv_buf msg = {0};
        gv_buf_printf(&msg, "note: %s is not installed here; skipped", prog);
        char *m = gv_buf_take(&msg);
        int rc = gv_sh_quote(b, m ? m : "note: skipped");
        free(m);
        if (rc)
            return -1;
        gv_buf_add(b, " >&2\nfi\n");
    }
    return 0;
}

/* {"check": [argv], "want": "success"|"failure", "message": M}: stop the script
 * with M when the command's exit status is not the one wanted. */
static int render_check(struct gv_buf *b, const json_t *cmd)
{
    const json_t *argv = json_object_get(cmd, "check");
    const char *want = json_string_value(json_object_get(cmd, "want"));
    const char *msg = json_string_value(json_object_get(cmd, "message"));
    if (!json_array_size(argv) || !want || !msg ||
        (strcmp(want, "success") && strcmp(want, "failure")))
        return -1;
    gv_buf_add(b, strcmp(want, "success") ? "if " : "if ! ");
    size_t i;
    json_t *a;
    json_array_foreach(argv, i, a)
    {
        if (i)
            gv_buf_add(b, " ");
        if (word(b, json_string_value(a)))
            return -1;
    }
    gv_buf_add(b, " >/dev/null 2>&1; then\n    echo ");
    if (gv_sh_quote(b, msg))
        return -1;
    gv_buf_add(b, " >&2\n    exit 1\nfi\n");
    return 0;
}

/* The recorded text of a profile file, byte for byte: each line quoted on
 * its own (no newline ever inside a quoted value), the last one without a
 * newline when the file has none; then its sha256 must be the recorded one. */
static int render_content(struct gv_buf *b, const char *tmp, const json_t *cmd)
{
    const json_t *c = json_object_get(cmd, "content");
    const char *text = json_string_value(c), *sha = json_string_value(json_object_get(cmd, "sha256"));
    size_t len = json_string_length(c);
    char why[160];
    if (!text || !gv_plan_content_ok(text, len, sha, why, sizeof why))
        return -1;
    size_t full = len;
    while (full > 0 && text[full - 1] != '\n')
        full--; /* text[0..full) are whole lines, text[full..len) a last one without '\n' */
    /* the text is written as it was: $NAME stays unexpanded, on purpose */
    gv_buf_add(b, "# shellcheck disable=SC2016\n{\n    :");
    for (size_t at = 0; at < len;) {
        int whole = at < full;
        size_t end = whole ? (size_t)((const char *)memchr(text + at, '\n', full - at) - text) : len;
        char *line = strndup(text + at, end - at);
        if (at == 0 || at == full)
            gv_buf_add(b, whole ? "\n    printf '%s\\n'" : "\n    printf '%s'");
        gv_buf_add(b, " ");
        int rc = line ? gv_sh_quote(b, line) : -1;
        free(line);
        if (rc)
            return -1;
        at = end + whole;
    }
    gv_buf_add(b, "\n} > ");
    gv_sh_quote(b, tmp);
    gv_buf_add(b, "\n");
    gv_buf_add(b, "if ! printf '%s  %s\\n' ");
    gv_sh_quote(b, sha);
    gv_buf_add(b, " ");
    gv_sh_quote(b, tmp);
    gv_buf_add(b, " | sha256sum -c --status -; then\n    echo ");
    struct gv_buf msg = {0};
    gv_buf_printf(&msg, "gpuvet plan: %s is not the recorded text (sha256 %s); stopping", tmp, sha);
    char *m = gv_buf_take(&msg);
    int rc = m ? gv_sh_quote(b, m) : -1;
    free(m);
    gv_buf_add(b, " >&2\n    exit 1\nfi\n");
    return rc;
}

/* {"write_file": P, "mode": M, and "content" + "sha256" (a profile file) or
 * "lines" (a loader configuration: one plain directory a line)}. */
static int render_write(struct gv_buf *b, const char *path, const json_t *cmd)
{
    const char *mode = json_string_value(json_object_get(cmd, "mode"));
    if (!gv_plan_dest_allowed("write_file", path) || !mode || !*mode ||
        strspn(mode, "01234567") != strlen(mode) || strlen(mode) > 4)
        return -1;
    char tmp[1100];
    snprintf(tmp, sizeof tmp, "%s.gpuvet-new", path);
    if (json_object_get(cmd, "content")) {
        if (gv_plan_dest(path) == GV_DEST_LOADER_CONF || render_content(b, tmp, cmd))
            return -1;
    } else {
        if (gv_plan_dest(path) != GV_DEST_LOADER_CONF)
            return -1; /* a profile file is only ever written from its recorded text */
        gv_buf_add(b, "printf '%s\\n'");
        size_t i;
        json_t *l;
        json_array_foreach(json_object_get(cmd, "lines"), i, l)
        {
            if (!gv_valid_plain_path(json_string_value(l)))
                return -1;
            gv_buf_add(b, " ");
            gv_sh_quote(b, json_string_value(l));
        }
        gv_buf_add(b, " > ");
        gv_sh_quote(b, tmp);
        gv_buf_add(b, "\n");
    }
    gv_buf_add(b, "chmod ");
    gv_buf_add(b, mode);
    gv_buf_add(b, " ");
    gv_sh_quote(b, tmp);
    gv_buf_add(b, "\nmv -f ");
    gv_sh_quote(b, tmp);
    gv_buf_add(b, " ");
    gv_sh_quote(b, path);
    gv_buf_add(b, "\n");
    return 0;
}

static int render_cmd(struct gv_buf *b, const json_t *cmd)
{
    const char *s;
    if (json_object_get(cmd, "argv"))
        return render_argv(b, cmd);
    if (json_object_get(cmd, "check"))
        return render_check(b, cmd);
    if ((s = json_string_value(json_object_get(cmd, "require"))) && !strcmp(s, "root")) {
        gv_buf_add(b, "if [ \"$(id -u)\" -ne 0 ]; then\n"
                      "    echo 'gpuvet plan: run this script as root' >&2\n"
                      "    exit 1\nfi\n");
        return 0;
    }
    if ((s = json_string_value(json_object_get(cmd, "mkdir_backup")))) {
        if (!gv_valid_plain_path(s))
            return -1;
        gv_buf_add(b, "backup=");
        gv_sh_quote(b, s);
        gv_buf_add(b, "/\"rollback-$(date -u +%Y%m%dT%H%M%SZ)-$$\"\n"
                      "mkdir -p \"$backup\"\n"
                      "echo \"gpuvet plan: backup in $backup\"\n");
        return 0;
    }
    if (json_object_get(cmd, "backup_paths")) {
        size_t i;
        json_t *p;
        json_array_foreach(json_object_get(cmd, "backup_paths"), i, p)
        {
            s = json_string_value(p);
            if (!gv_valid_plain_path(s))
                return -1;
            gv_buf_add(b, "if [ -e ");
            gv_sh_quote(b, s);
            gv_buf_add(b, " ]; then cp -a ");
            gv_sh_quote(b, s);
            gv_buf_add(b, " \"$backup\"/; fi\n");
        }
        return 0;
    }
    if ((s = json_string_value(json_object_get(cmd, "archive_tree")))) {
        if (!gv_valid_plain_path(s))
            return -1;
        gv_buf_add(b, "tar -C / -czf \"$backup\"/rocm-tree.tar.gz ");
        gv_sh_quote(b, s + 1);
        gv_buf_add(b, "\n");
        return 0;
    }
    if ((s = json_string_value(json_object_get(cmd, "write_file"))))
        return render_write(b, s, cmd);
    if ((s = json_string_value(json_object_get(cmd, "move_to_backup")))) {
        if (!gv_plan_dest_allowed("move_to_backup", s))
            return -1;
        gv_buf_add(b, "if [ -e ");
        gv_sh_quote(b, s);
        gv_buf_add(b, " ] || [ -L ");
        gv_sh_quote(b, s);
        gv_buf_add(b, " ]; then mkdir -p \"$backup\"/leftovers && mv -f ");
        gv_sh_quote(b, s);
        gv_buf_add(b, " \"$backup\"/leftovers/; fi\n");
        return 0;
    }
    if ((s = json_string_value(json_object_get(cmd, "remove_file")))) {
        if (!gv_plan_dest_allowed("remove_file", s))
            return -1;
        gv_buf_add(b, "rm -f ");
        gv_sh_quote(b, s);
        gv_buf_add(b, "\n");
        return 0;
    }
    return -1;
}

static void comment_lines(struct gv_buf *b, const char *prefix, const char *text)
{
    gv_buf_add(b, prefix);
    for (const char *p = text; *p; p++) {
        if (*p == '\n')
            gv_buf_add(b, "\n# ");
        else
            gv_buf_addn(b, p, 1);
    }
    gv_buf_add(b, "\n");
}

/* A partial plan says what it leaves as it is, one difference a line. */
static void left_out_lines(struct gv_buf *b, const json_t *plan, const char *prefix)
{
    const json_t *left = json_object_get(plan, "not_rolled_back");
    if (!json_array_size(left))
        return;
    char head[160];
    snprintf(head, sizeof head, "PARTIAL: %zu difference%s not rolled back (outside the GPU "
             "stack):", json_array_size(left), json_array_size(left) == 1 ? " is" : "s are");
    comment_lines(b, prefix, head);
    size_t i;
    json_t *d;
    json_array_foreach(left, i, d) {
        const char *bv = json_string_value(json_object_get(d, "before"));
        const char *av = json_string_value(json_object_get(d, "after"));
        struct gv_buf line = {0};
        gv_buf_printf(&line, "%s %s -> %s", json_string_value(json_object_get(d, "subject")) ?: "?",
                      bv ? bv : "(absent)", av ? av : "(absent)");
        char *text = gv_buf_take(&line);
        comment_lines(b, !strcmp(prefix, "# ") ? "#   " : "- ", text ? text : "?");
        free(text);
    }
    const char *why = json_string_value(json_object_get(json_array_get(left, 0), "why"));
    if (why)
        comment_lines(b, prefix, why);
}

static int is_image_pin(const json_t *plan)
{
    const char *kind = json_string_value(json_object_get(plan, "kind"));
    return kind && !strcmp(kind, "image-pin");
}

char *gv_plan_render_sh(const json_t *plan)
{
    if (is_image_pin(plan))
        return gv_plan_image_render_sh(plan);
    struct gv_buf b = {0};
    gv_buf_add(&b, "#!/usr/bin/env bash\n"
                   "# gpuvet rollback plan. Review it, then run it as root.\n"
                   "# It stops at the first error and is safe to run again.\n");
    const char *base = json_string_value(json_object_get(plan, "baseline"));
    if (base && *base)
        comment_lines(&b, "# baseline: ", base);
    left_out_lines(&b, plan, "# ");
    gv_buf_add(&b, "set -euo pipefail\n");
    size_t i;
    json_t *step;
    json_array_foreach(json_object_get(plan, "steps"), i, step)
    {
        char head[512];
        snprintf(head, sizeof head, "step %d: %s",
                 (int)json_integer_value(json_object_get(step, "phase")),
                 json_string_value(json_object_get(step, "title")));
        gv_buf_add(&b, "\n");
        comment_lines(&b, "# ", head);
        comment_lines(&b, "# ", json_string_value(json_object_get(step, "why")));
        size_t j;
        json_t *n;
        json_array_foreach(json_object_get(step, "notes"), j, n)
            comment_lines(&b, "# note: ", json_string_value(n));
        gv_buf_add(&b, "echo ");
        if (gv_sh_quote(&b, head)) {
            gv_buf_free(&b);
            return NULL;
        }
        gv_buf_add(&b, "\n");
        json_t *c;
        json_array_foreach(json_object_get(step, "commands"), j, c)
        {
            if (render_cmd(&b, c) != 0) {
                gv_buf_free(&b);
                return NULL;
            }
        }
    }
    gv_buf_add(&b, "\necho 'gpuvet plan: all steps done'\n");
    return gv_buf_take(&b);
}

char *gv_plan_render_md(const json_t *plan)
{
    if (is_image_pin(plan))
        return gv_plan_image_render_md(plan);
    struct gv_buf b = {0};
    gv_buf_add(&b, "# Rollback plan\n\n");
    const char *base = json_string_value(json_object_get(plan, "baseline"));
    if (base && *base)
        gv_buf_printf(&b, "Baseline: `%s`\n\n", base);
    int complete = json_is_true(json_object_get(plan, "complete"));
    const char *status = json_string_value(json_object_get(plan, "status"));
    int partial = status && !strcmp(status, "partial");
    gv_buf_printf(&b, "Status: **%s**\n\n", complete  ? "complete"
                                              : partial ? "partial: what it does not roll back "
                                                          "is listed below"
                                                        : "incomplete: cannot plan");
    if (partial) {
        left_out_lines(&b, plan, "");
        gv_buf_add(&b, "\n");
    }
    size_t i;
    json_t *p;
    json_array_foreach(json_object_get(plan, "problems"), i, p)
        gv_buf_printf(&b, "- **%s**: %s. %s.\n", json_string_value(json_object_get(p, "subject")),
                      json_string_value(json_object_get(p, "message")),
                      json_string_value(json_object_get(p, "how")));
    json_t *step;
    json_array_foreach(json_object_get(plan, "steps"), i, step)
    {
        gv_buf_printf(&b, "\n## Step %d: %s\n\n%s\n",
                      (int)json_integer_value(json_object_get(step, "phase")),
                      json_string_value(json_object_get(step, "title")),
                      json_string_value(json_object_get(step, "why")));
        size_t j;
        json_t *n;
        json_array_foreach(json_object_get(step, "notes"), j, n)
            gv_buf_printf(&b, "\n- %s", json_string_value(n));
        if (json_array_size(json_object_get(step, "notes")))
            gv_buf_add(&b, "\n");
        if (json_array_size(json_object_get(step, "commands"))) {
            gv_buf_add(&b, "\n```sh\n");
            json_t *c;
            json_array_foreach(json_object_get(step, "commands"), j, c)
            {
                if (render_cmd(&b, c) != 0) {
                    gv_buf_free(&b);
                    return NULL;
                }
            }
            gv_buf_add(&b, "```\n");
        }
    }
    return gv_buf_take(&b);
}
