/* environment: allowlisted GPU-related variables of the process environment
 * and of /etc/environment and /etc/profile.d/ *.sh files. Nothing outside the
 * allowlist is recorded, not even its name; allowlisted names that look like
 * secrets are listed by name only (envpolicy.h). */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/fs.h"
#include "base/sha256.h"
#include "base/json.h"
#include "env/envpolicy.h"
#include "env/probe.h"
#include "env/sysutil.h"

#define VALUE_MAX 8192
#define SHELL_FILE_MAX (1 << 20)
#define PROFILE_FILES_MAX 512

/* A shell variable name: [A-Za-z_][A-Za-z0-9_]*. */
static int valid_name(const char *s, size_t n)
{
    if (n == 0 || n > 256 || (s[0] >= '0' && s[0] <= '9'))
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!(s[i] == '_' || (s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= 'a' && s[i] <= 'z') ||
              (s[i] >= '0' && s[i] <= '9')))
            return 0;
    return 1;
}

static void add_withheld(json_t *arr, const char *name, size_t n)
{
    size_t i;
    json_t *v;
    json_array_foreach(arr, i, v)
        if (strlen(json_string_value(v)) == n && !memcmp(json_string_value(v), name, n))
            return;
    json_array_append_new(arr, json_stringn(name, n));
}

/* Records one NAME=VALUE pair into vars/withheld per the policy. */
static void record(json_t *vars, json_t *withheld, const char *name, size_t n, const char *value)
{
    if (!valid_name(name, n) || !gv_env_allowed(name, n))
        return;
    if (gv_env_secret(name, n)) {
        add_withheld(withheld, name, n);
        return;
    }
    char key[257];
    memcpy(key, name, n);
    key[n] = '\0';
    if (strlen(value) > VALUE_MAX)
        json_object_set_new(vars, key, json_string("(value longer than 8192 bytes, not recorded)"));
    else
        json_object_set_new(vars, key, gv_json_str(value));
}

static int env_cmp(const void *a, const void *b)
{
    const char *x = *(const char *const *)a, *y = *(const char *const *)b;
    size_t nx = strcspn(x, "="), ny = strcspn(y, "=");
    int c = memcmp(x, y, nx < ny ? nx : ny);
    return c ? c : (nx > ny) - (nx < ny);
}

static json_t *process_vars(char *const *envp, json_t *withheld)
{
    size_t n = 0;
    while (envp[n])
        n++;
    const char **sorted = malloc((n ? n : 1) * sizeof *sorted);
    json_t *vars = json_object();
    if (!sorted)
        return vars;
    for (size_t i = 0; i < n; i++)
        sorted[i] = envp[i];
    /* a name present twice (possible in a raw envp) is recorded once */
    qsort(sorted, n, sizeof *sorted, env_cmp);
    for (size_t i = 0; i < n; i++) {
        const char *eq = strchr(sorted[i], '=');
        if (!eq)
            continue;
        size_t nl = (size_t)(eq - sorted[i]);
        char key[257];
        if (nl < sizeof key) {
            memcpy(key, sorted[i], nl);
            key[nl] = '\0';
            if (json_object_get(vars, key))
                continue;
        }
        record(vars, withheld, sorted[i], nl, eq + 1);
    }
    free(sorted);
    return vars;
}

/* Split one word of a shell line (quotes and backslashes kept, unquoted by
 * the caller); returns the position after it. */
static const char *shell_word(const char *p, const char **start, size_t *len)
{
    while (*p == ' ' || *p == '\t')
        p++;
    *start = p;
    char q = 0;
    while (*p && (q || (*p != ' ' && *p != '\t' && *p != ';' && *p != '#'))) {
        if (!q && (*p == '"' || *p == '\''))
            q = *p;
        else if (q && *p == q)
            q = 0;
        else if (q != '\'' && *p == '\\' && p[1])
            p++;
        p++;
    }
    *len = (size_t)(p - *start);
    return p;
}

struct shell_scan {
    json_t *sets, *withheld;
};

/* One line: [export|declare -x] NAME=VALUE [NAME=VALUE...]. Only the first
 * command of the line is looked at. */
static int shell_line(char *line, void *arg)
{
    struct shell_scan *sc = arg;
    const char *p = line, *w;
    size_t n;
    int exporting = 0;
    for (;;) {
        const char *next = shell_word(p, &w, &n);
        if (n == 0)
            break;
        if (!exporting && ((n == 6 && !memcmp(w, "export", 6)) || (n == 7 && !memcmp(w, "declare", 7)))) {
            exporting = 1;
            p = next;
            continue;
        }
        const char *eq = memchr(w, '=', n);
        if (!eq) {
            if (!exporting || !(valid_name(w, n) || (n == 2 && w[0] == '-')))
                break;
            p = next; /* export NAME, declare -x */
            continue;
        }
        size_t nl = (size_t)(eq - w), vl = n - nl - 1;
        if (!valid_name(w, nl))
            break;
        char *raw = strndup(eq + 1, vl), *val = malloc(vl + 1);
        if (raw && val) {
            gv_sys_unquote(raw, val, vl + 1);
            record(sc->sets, sc->withheld, w, nl, val);
        }
        free(raw);
        free(val);
        p = next;
    }
    return 0;
}

/* The exact text of a profile file, its sha256 and size, when the one policy
 * (gv_env_profile_restorable) lets a snapshot hold it and a plan write it
 * back; otherwise only content_withheld says why, without quoting the file.
 * No digest or size then either: the file may hold a secret or a variable
 * outside the allowlist, and a digest of a short file is a way to guess it. */
static json_t *exact_text(const char *data, size_t len)
{
    char hex[65], why[160];
    if (!gv_env_profile_restorable(data, len, why, sizeof why))
        return json_pack("{s:s}", "content_withheld", why);
    gv_sha256_buf_hex(data, len, hex);
    return json_pack("{s:s, s:I, s:s%}", "sha256", hex, "size", (json_int_t)len, "content", data,
                     len);
}

/* The assignments of one shell file, or NULL when it sets nothing allowlisted. */
static json_t *scan_shell_file(const struct gv_probe_ctx *ctx, const char *path, json_t *errors)
{
    char *data;
    size_t len = 0;
    struct gv_err err = {0};
    if (gv_sys_read(ctx, path, SHELL_FILE_MAX, &data, &len, &err)) {
        if (err.code != GV_E_NOTFOUND)
            json_array_append_new(errors, gv_json_str(err.msg));
        return NULL;
    }
    json_t *exact = exact_text(data, len); /* before the line split changes data */
    struct shell_scan sc = {json_object(), json_array()};
    gv_sys_each_line(data, shell_line, &sc);
    free(data);
    if (!json_object_size(sc.sets) && !json_array_size(sc.withheld)) {
        json_decref(sc.sets);
        json_decref(sc.withheld);
        json_decref(exact);
        return NULL;
    }
    json_t *o = json_object();
    json_object_set_new(o, "path", gv_json_str(path));
    json_object_set_new(o, "sets", sc.sets);
    if (json_array_size(sc.withheld))
        json_object_set_new(o, "withheld", sc.withheld);
    else
        json_decref(sc.withheld);
    json_object_update(o, exact);
    json_decref(exact);
    return o;
}

static int is_sh(const struct dirent *e)
{
    size_t n = strlen(e->d_name);
    return e->d_name[0] != '.' && n > 3 && !strcmp(e->d_name + n - 3, ".sh");
}

static json_t *profile_files(const struct gv_probe_ctx *ctx, json_t *errors)
{
    json_t *arr = json_array();
    json_t *o = scan_shell_file(ctx, "/etc/environment", errors);
    if (o)
        json_array_append_new(arr, o);
    struct dirent **names;
    int n = gv_sys_scandir(ctx, "/etc/profile.d", &names, is_sh, alphasort);
    for (int i = 0; i < n; i++) {
        char path[GV_PATH_MAX];
        snprintf(path, sizeof path, "/etc/profile.d/%s", names[i]->d_name);
        o = i < PROFILE_FILES_MAX ? scan_shell_file(ctx, path, errors) : NULL;
        if (o)
            json_array_append_new(arr, o);
        free(names[i]);
    }
    if (n >= 0)
        free(names);
    return arr;
}

json_t *gv_probe_environment(const struct gv_probe_ctx *ctx)
{
    json_t *s = gv_section_new("process environment (allowlist), /etc/environment, "
                               "/etc/profile.d/*.sh");
    json_t *withheld = json_array(), *errors = json_array();
    if (ctx->envp)
        json_object_set_new(s, "variables", process_vars(ctx->envp, withheld));
    json_object_set_new(s, "withheld", withheld);
    json_object_set_new(s, "profile_d", profile_files(ctx, errors));
    if (json_array_size(errors))
        json_object_set_new(s, "errors", errors);
    else
        json_decref(errors);
    return s;
}
