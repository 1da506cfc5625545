#include "env/sysutil.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/fs.h"
#include "base/utf8.h"

int gv_sys_path(const struct gv_probe_ctx *ctx, const char *path, char *out, size_t outsz)
{
    return gv_root_join(out, outsz, ctx->root, path);
}

int gv_sys_read(const struct gv_probe_ctx *ctx, const char *path, size_t max, char **data,
                size_t *len, struct gv_err *err)
{
    return gv_root_read_file(ctx->root, path, max, data, len, err);
}

int gv_sys_line(const struct gv_probe_ctx *ctx, const char *path, char *out, size_t outsz)
{
    return gv_root_read_line(ctx->root, path, out, outsz, NULL);
}

int gv_sys_is_dir(const struct gv_probe_ctx *ctx, const char *path)
{
    return gv_root_is_dir(ctx->root, path);
}

int gv_sys_exists(const struct gv_probe_ctx *ctx, const char *path)
{
    return gv_root_exists(ctx->root, path);
}

int gv_sys_readlink(const struct gv_probe_ctx *ctx, const char *path, char *out, size_t outsz)
{
    return gv_root_readlink(ctx->root, path, out, outsz);
}

int gv_sys_scandir(const struct gv_probe_ctx *ctx, const char *dir, struct dirent ***names,
                   int (*filter)(const struct dirent *),
                   int (*compar)(const struct dirent **, const struct dirent **))
{
    return gv_root_scandir(ctx->root, dir, names, filter, compar);
}

int gv_sys_have(const struct gv_probe_ctx *ctx, const char *dir, const char **reason)
{
    if (gv_sys_is_dir(ctx, dir))
        return 1;
    if (reason) {
        int proc = strncmp(dir, "/proc", 5) == 0;
        if (ctx->live)
            *reason = proc ? "/proc is not mounted" : "/sys is not mounted or lacks this entry";
        else
            *reason = proc ? "no such directory under --root (a running system's /proc is "
                             "never read for --root)"
                           : "no such directory under --root (a running system's /sys is "
                             "never read for --root)";
    }
    return 0;
}

json_t *gv_json_str_bytes(const char *s, size_t n)
{
    char *buf = malloc(n + 1);
    if (!buf)
        return json_string("");
    const unsigned char *u = (const unsigned char *)s;
    size_t i = 0, o = 0;
    while (i < n) {
        size_t l = u[i] == 0 ? 0 : gv_utf8_len(u + i, n - i);
        if (l == 0 || (l == 1 && u[i] < 0x20 && u[i] != '\t')) {
            buf[o++] = '?';
            i++;
            continue;
        }
        memcpy(buf + o, s + i, l);
        o += l;
        i += l;
    }
    json_t *j = json_stringn(buf, o);
    free(buf);
    return j ? j : json_string("");
}

json_t *gv_json_str(const char *s)
{
    return gv_json_str_bytes(s, strlen(s));
}

void gv_json_put_str(json_t *obj, const char *key, const char *val)
{
    if (val)
        json_object_set_new(obj, key, gv_json_str(val));
}

char *gv_sys_trim(char *s)
{
    while (*s == ' ' || *s == '\t' || *s == '\r' || *s == '\n')
        s++;
    size_t n = strlen(s);
    while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r' || s[n - 1] == '\n'))
        s[--n] = '\0';
    return s;
}

void gv_sys_each_line(char *data, gv_line_fn fn, void *arg)
{
    char *p = data;
    while (p && *p) {
        char *nl = strchr(p, '\n');
        if (nl)
            *nl = '\0';
        if (fn(p, arg))
            return;
        p = nl ? nl + 1 : NULL;
    }
}

void gv_sys_unquote(const char *in, char *out, size_t outsz)
{
    size_t o = 0;
    char q = 0;
    for (const char *p = in; *p && o + 1 < outsz; p++) {
        if (!q && (*p == '"' || *p == '\'')) {
            q = *p;
            continue;
        }
        if (q && *p == q) {
            q = 0;
            continue;
        }
        if (q != '\'' && *p == '\\' && p[1]) {
            p++;
            out[o++] = *p;
            continue;
        }
        out[o++] = *p;
    }
    out[o] = '\0';
}

const char *gv_sys_base(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

int gv_sys_strcmp_p(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}
