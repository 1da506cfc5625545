/* Parsers for the Python package text gpuvet reads instead of running Python. */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "env/stackscan.h"

/* Parses one line into name and value spans (value NULL for None); 1 when it matched. */
static int parse_assignment(const char *l, const char *end, const char **name, size_t *nlen,
                            const char **val, size_t *vlen)
{
    const char *p = l;
    if (p >= end || !(isalpha((unsigned char)*p) || *p == '_'))
        return 0;
    *name = p;
    while (p < end && (isalnum((unsigned char)*p) || *p == '_'))
        p++;
    *nlen = (size_t)(p - *name);
    while (p < end && (*p == ' ' || *p == '\t'))
        p++;
    if (p < end && *p == ':') { /* annotation: skip to '=' */
        while (p < end && *p != '=')
            p++;
    }
    if (p >= end || *p != '=' || (p + 1 < end && p[1] == '='))
        return 0;
    p++;
    while (p < end && (*p == ' ' || *p == '\t'))
        p++;
    if (end - p >= 4 && strncmp(p, "None", 4) == 0) {
        *val = NULL;
        *vlen = 0;
        return 1;
    }
    if (p >= end || (*p != '\'' && *p != '"'))
        return 0;
    char q = *p++;
    const char *v = p;
    while (p < end && *p != q && *p != '\\')
        p++;
    if (p >= end || *p != q)
        return 0; /* escapes and unterminated strings are not simple values */
    *val = v;
    *vlen = (size_t)(p - v);
    return 1;
}

json_t *gv_parse_py_assignments(const char *text, size_t len)
{
    json_t *out = json_object();
    const char *end = text + len;
    for (const char *l = text; l < end;) {
        const char *nl = memchr(l, '\n', (size_t)(end - l));
        const char *le = nl ? nl : end;
        const char *name, *val;
        size_t nlen, vlen;
        if (parse_assignment(l, le, &name, &nlen, &val, &vlen) && nlen < 128) {
            char key[128];
            memcpy(key, name, nlen);
            key[nlen] = '\0';
            json_t *j = val ? json_stringn(val, vlen) : json_null();
            if (j)
                json_object_set_new(out, key, j);
        }
        l = nl ? nl + 1 : end;
    }
    return out;
}

static void copy_field(const char *v, const char *le, char *out, size_t outsz)
{
    while (v < le && (*v == ' ' || *v == '\t'))
        v++;
    while (le > v && (le[-1] == '\r' || le[-1] == ' ' || le[-1] == '\t'))
        le--;
    size_t n = (size_t)(le - v);
    if (n >= outsz)
        n = outsz - 1;
    memcpy(out, v, n);
    out[n] = '\0';
}

int gv_parse_pkg_metadata(const char *text, size_t len, char *name, size_t namesz, char *version,
                          size_t versionsz)
{
    name[0] = version[0] = '\0';
    const char *end = text + len;
    for (const char *l = text; l < end;) {
        const char *nl = memchr(l, '\n', (size_t)(end - l));
        const char *le = nl ? nl : end;
        if (le == l || (le - l == 1 && *l == '\r'))
            break; /* end of the header block */
        if (le - l > 5 && strncmp(l, "Name:", 5) == 0 && !name[0])
            copy_field(l + 5, le, name, namesz);
        else if (le - l > 8 && strncmp(l, "Version:", 8) == 0 && !version[0])
            copy_field(l + 8, le, version, versionsz);
        l = nl ? nl + 1 : end;
    }
    return name[0] && version[0] ? 0 : -1;
}
