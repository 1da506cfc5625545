/* Names, versions and paths that may appear in a generated plan. Anything
 * else is refused: a plan never carries a value it cannot vouch for. */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "base/buf.h"
#include "base/sha256.h"
#include "env/envpolicy.h"
#include "env/libnames.h"
#include "plan/plan.h"

static int all_in(const char *s, const char *extra)
{
    for (; *s; s++)
        if (!isalnum((unsigned char)*s) && !strchr(extra, *s))
            return 0;
    return 1;
}

int gv_valid_deb_name(const char *s)
{
    /* lower case letters, digits, + - . ; at least two characters; starts alphanumeric */
    size_t n = s ? strlen(s) : 0;
    if (n < 2 || n > 128 || !(islower((unsigned char)s[0]) || isdigit((unsigned char)s[0])))
        return 0;
    for (const char *p = s; *p; p++)
        if (!(islower((unsigned char)*p) || isdigit((unsigned char)*p) || strchr("+-.", *p)))
            return 0;
    return 1;
}

int gv_valid_deb_version(const char *s)
{
    size_t n = s ? strlen(s) : 0;
    if (n == 0 || n > 128)
        return 0;
    const char *colon = strchr(s, ':');
    if (colon) {
        if (colon == s)
            return 0;
        for (const char *p = s; p < colon; p++)
            if (!isdigit((unsigned char)*p))
                return 0;
        s = colon + 1;
    }
    if (!isdigit((unsigned char)s[0]))
        return 0;
    return all_in(s, ".+~-:");
}

int gv_valid_rpm_name(const char *s)
{
    size_t n = s ? strlen(s) : 0;
    return n >= 1 && n <= 128 && isalnum((unsigned char)s[0]) && all_in(s, "+-._");
}

int gv_valid_pip_name(const char *s)
{
    size_t n = s ? strlen(s) : 0;
    return n >= 1 && n <= 128 && isalnum((unsigned char)s[0]) &&
           isalnum((unsigned char)s[n - 1]) && all_in(s, "-_.");
}

int gv_valid_pip_version(const char *s)
{
    size_t n = s ? strlen(s) : 0;
    return n >= 1 && n <= 128 && isdigit((unsigned char)s[0]) && all_in(s, ".+!_-");
}

int gv_valid_abs_path(const char *s)
{
    if (!s || s[0] != '/')
        return 0;
    size_t n = strlen(s);
    if (n > 1024)
        return 0;
    for (const char *p = s; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            return 0;
    if (strstr(s, "/../") || (n >= 3 && strcmp(s + n - 3, "/..") == 0))
        return 0;
    return 1;
}

/* The one quoting function of the plan renderers. A value with a newline or
 * another control character (tab aside) is refused, never quoted: it has no
 * place in a line of a plan. */
int gv_sh_quote(struct gv_buf *buf, const char *s)
{
    if (!s)
        return -1;
    for (const char *p = s; *p; p++)
        if (((unsigned char)*p < 0x20 && *p != '\t') || *p == 0x7f)
            return -1;
    gv_buf_add(buf, "'");
    for (const char *p = s; *p; p++) {
        if (*p == '\'')
            gv_buf_add(buf, "'\\''");
        else
            gv_buf_addn(buf, p, 1);
    }
    gv_buf_add(buf, "'");
    return 0;
}

/* ---- the destination policy -------------------------------------------------- */

static int plain_char(char c)
{
    return isalnum((unsigned char)c) || c == '.' || c == '_' || c == '-' || c == '+' || c == '@';
}

/* A file name: plain characters, no '/', not hidden, not "." or "..". */
static int plain_name(const char *s, size_t n)
{
    if (n == 0 || n > 255 || s[0] == '.')
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!plain_char(s[i]))
            return 0;
    return 1;
}

int gv_valid_plain_path(const char *s)
{
    if (!s || s[0] != '/' || !s[1] || strlen(s) > 1024)
        return 0;
    const char *p = s;
    while (*p) {
        p++; /* the '/' */
        size_t n = strcspn(p, "/");
        if (n == 0 || (n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
            return 0; /* "//", a trailing "/", "." or ".." */
        for (size_t i = 0; i < n; i++)
            if (!plain_char(p[i]))
                return 0;
        p += n;
    }
    return 1;
}

/* path is DIR/NAME.EXT with NAME a plain file name. */
static int name_in(const char *path, const char *dir, const char *ext)
{
    size_t d = strlen(dir), e = strlen(ext), n = strlen(path);
    if (n <= d + e || strncmp(path, dir, d) || strcmp(path + n - e, ext))
        return 0;
    return plain_name(path + d, n - d) && !strchr(path + d, '/');
}

/* A directory the loader and packages keep libraries in: .../lib, .../lib64,
 * .../lib32, or a multiarch directory /usr/lib/TRIPLET, /lib/TRIPLET. */
static int library_dir(const char *dir, size_t n)
{
    const char *last = dir + n;
    while (last > dir && last[-1] != '/')
        last--;
    size_t l = (size_t)(dir + n - last);
    if ((l == 3 && !strncmp(last, "lib", 3)) || (l == 5 && !strncmp(last, "lib64", 5)) ||
        (l == 5 && !strncmp(last, "lib32", 5)))
        return 1;
    size_t parent = (size_t)(last - dir);
    return ((parent == 9 && !strncmp(dir, "/usr/lib/", 9)) ||
            (parent == 5 && !strncmp(dir, "/lib/", 5))) &&
           l < 64 && memmem(last, l, "-linux-", 7) != NULL;
}

enum gv_dest gv_plan_dest(const char *path)
{
    if (!gv_valid_plain_path(path))
        return GV_DEST_NONE;
    if (!strcmp(path, "/etc/environment"))
        return GV_DEST_ENVIRONMENT;
    if (name_in(path, "/etc/profile.d/", ".sh"))
        return GV_DEST_PROFILE_D;
    if (name_in(path, "/etc/ld.so.conf.d/", ".conf"))
        return GV_DEST_LOADER_CONF;
    const char *base = strrchr(path, '/') + 1;
    if (base > path + 1 && gv_libname_for_file(base) && library_dir(path, (size_t)(base - 1 - path)))
        return GV_DEST_GPU_LIBRARY;
    return GV_DEST_NONE;
}

/* What each kind of plan command may touch. */
static const struct {
    const char *cmd;
    unsigned dests;
} dest_rules[] = {
    {"write_file", GV_DEST_ENVIRONMENT | GV_DEST_PROFILE_D | GV_DEST_LOADER_CONF},
    {"remove_file", GV_DEST_PROFILE_D | GV_DEST_LOADER_CONF},
    {"move_to_backup", GV_DEST_GPU_LIBRARY},
};

int gv_plan_dest_allowed(const char *cmd, const char *path)
{
    enum gv_dest d = gv_plan_dest(path);
    for (size_t i = 0; cmd && i < sizeof dest_rules / sizeof dest_rules[0]; i++)
        if (!strcmp(cmd, dest_rules[i].cmd))
            return d != GV_DEST_NONE && (dest_rules[i].dests & d) != 0;
    return 0;
}

int gv_plan_content_ok(const char *content, size_t len, const char *sha256, char *why, size_t whysz)
{
    char hex[65];
    if (!gv_env_profile_restorable(content, len, why, whysz))
        return 0;
    gv_sha256_buf_hex(content, len, hex);
    if (!sha256 || strcmp(hex, sha256)) {
        snprintf(why, whysz, "its content does not match its recorded sha256");
        return 0;
    }
    return 1;
}
