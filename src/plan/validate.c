/* Names, versions and paths that may appear in a generated plan. Anything
 * else is refused: a plan never carries a value it cannot vouch for. */
#include <ctype.h>
#include <string.h>

#include "base/buf.h"
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

void gv_sh_quote(struct gv_buf *buf, const char *s)
{
    gv_buf_add(buf, "'");
    for (const char *p = s; *p; p++) {
        if (*p == '\'')
            gv_buf_add(buf, "'\\''");
        else
            gv_buf_addn(buf, p, 1);
    }
    gv_buf_add(buf, "'");
}
