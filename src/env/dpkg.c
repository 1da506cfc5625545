/* The dpkg status file (deb822 stanzas), parsed directly: one pass over the
 * bytes, only Package/Version/Architecture/Status/Source kept. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "env/pkgdb.h"

struct slice {
    const char *p;
    size_t n;
};

struct stanza {
    struct slice name, version, arch, status, source;
    const char *bad; /* why the stanza cannot be used, NULL when fine */
    int any;         /* saw at least one field line */
};

static char *dup_slice(struct slice s)
{
    char *r = malloc(s.n + 1);
    if (r) {
        memcpy(r, s.p, s.n);
        r[s.n] = '\0';
    }
    return r;
}

static struct slice trim(const char *p, size_t n)
{
    while (n && (*p == ' ' || *p == '\t')) {
        p++;
        n--;
    }
    while (n && (p[n - 1] == ' ' || p[n - 1] == '\t' || p[n - 1] == '\r'))
        n--;
    return (struct slice){p, n};
}

static int blank_line(const char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != ' ' && p[i] != '\t' && p[i] != '\r')
            return 0;
    return 1;
}

static int has_space_or_nul(struct slice s)
{
    for (size_t i = 0; i < s.n; i++)
        if (s.p[i] == ' ' || s.p[i] == '\t' || s.p[i] == '\0')
            return 1;
    return 0;
}

static void field_line(struct stanza *st, const char *p, size_t n)
{
    const char *colon = memchr(p, ':', n);
    st->any = 1;
    if (!colon) {
        st->bad = "a line that is neither a field nor a continuation";
        return;
    }
    size_t klen = (size_t)(colon - p);
    struct slice v = trim(colon + 1, n - klen - 1);
    static const struct {
        const char *key;
        size_t off;
    } keys[] = {{"Package", offsetof(struct stanza, name)},
                {"Version", offsetof(struct stanza, version)},
                {"Architecture", offsetof(struct stanza, arch)},
                {"Status", offsetof(struct stanza, status)},
                {"Source", offsetof(struct stanza, source)}};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        if (strlen(keys[i].key) != klen || strncasecmp(p, keys[i].key, klen) != 0)
            continue;
        if (v.n > GV_DPKG_FIELD_MAX) {
            st->bad = "a field value longer than the limit";
            return;
        }
        *(struct slice *)((char *)st + keys[i].off) = v;
        return;
    }
}

/* Split "want flag state" into its words. 0 when there are exactly three. */
static int split_status(struct slice s, struct slice w[3])
{
    size_t i = 0;
    for (int k = 0; k < 3; k++) {
        while (i < s.n && (s.p[i] == ' ' || s.p[i] == '\t'))
            i++;
        size_t start = i;
        while (i < s.n && s.p[i] != ' ' && s.p[i] != '\t')
            i++;
        if (i == start)
            return -1;
        w[k] = (struct slice){s.p + start, i - start};
    }
    while (i < s.n && (s.p[i] == ' ' || s.p[i] == '\t'))
        i++;
    return i == s.n ? 0 : -1;
}

/* The words dpkg itself writes in a Status field (dpkg's lib/dpkg/parsehelp.c
 * tables wantinfos, eflaginfos, statusinfos). dpkg refuses a status file with
 * any other word ("value for 'Status' field not allowed in this context"); a
 * snapshot keeps going, skips that stanza and says so. */
static int one_of(struct slice w, const char *const *words)
{
    for (; *words; words++)
        if (strlen(*words) == w.n && !memcmp(*words, w.p, w.n))
            return 1;
    return 0;
}

static int dpkg_status_words(const struct slice w[3])
{
    static const char *const want[] = {"unknown", "install", "hold", "deinstall", "purge", NULL};
    static const char *const flag[] = {"ok", "reinstreq", NULL};
    static const char *const state[] = {"not-installed", "config-files", "half-installed",
                                        "unpacked", "half-configured", "triggers-awaited",
                                        "triggers-pending", "installed", NULL};
    return one_of(w[0], want) && one_of(w[1], flag) && one_of(w[2], state);
}

/* dpkg's package names (pkg_name_is_illegal): a letter or digit first, then
 * letters, digits and "-+._" (the underscore deprecated but accepted). */
static int dpkg_name_ok(struct slice s)
{
    if (!s.n || !((s.p[0] >= 'a' && s.p[0] <= 'z') || (s.p[0] >= 'A' && s.p[0] <= 'Z') ||
                  (s.p[0] >= '0' && s.p[0] <= '9')))
        return 0;
    for (size_t i = 0; i < s.n; i++) {
        char c = s.p[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '+' || c == '-' || c == '.' || c == '_'))
            return 0;
    }
    return 1;
}

static void skip(struct gv_pkg_list *out, const char *why)
{
    if (!out->skipped++)
        snprintf(out->first_skip, sizeof out->first_skip, "%s", why);
}

static int push(struct gv_pkg_list *out, struct gv_pkg *pkg)
{
    if (out->n == out->cap) {
        size_t ncap = out->cap ? out->cap * 2 : 256;
        struct gv_pkg *ni = realloc(out->items, ncap * sizeof *ni);
        if (!ni)
            return GV_E_NOMEM;
        out->items = ni;
        out->cap = ncap;
    }
    out->items[out->n++] = *pkg;
    return GV_OK;
}

static void pkg_free(struct gv_pkg *p)
{
    free(p->name);
    free(p->version);
    free(p->arch);
    free(p->source);
    free(p->want);
    free(p->state);
}

static int finish(struct stanza *st, struct gv_pkg_list *out)
{
    if (!st->any)
        return GV_OK;
    struct slice w[3];
    if (st->bad)
        skip(out, st->bad);
    else if (!dpkg_name_ok(st->name))
        skip(out, "a stanza without a valid Package field");
    else if (split_status(st->status, w) != 0 || !dpkg_status_words(w))
        skip(out, "a stanza without a valid Status field (want flag state, in dpkg's words)");
    else if (!(w[2].n == 13 && !memcmp(w[2].p, "not-installed", 13))) {
        struct slice src = st->source;
        const char *paren = src.n ? memchr(src.p, '(', src.n) : NULL;
        if (paren)
            src = trim(src.p, (size_t)(paren - src.p));
        struct gv_pkg pkg = {
            .name = dup_slice(st->name),
            .version = st->version.n ? dup_slice(st->version) : NULL,
            .arch = st->arch.n ? dup_slice(st->arch) : NULL,
            .source = src.n ? dup_slice(src) : NULL,
            .want = dup_slice(w[0]),
            .state = dup_slice(w[2]),
            .hold = w[0].n == 4 && !memcmp(w[0].p, "hold", 4),
        };
        if (!pkg.name || !pkg.want || !pkg.state || push(out, &pkg)) {
            pkg_free(&pkg);
            return GV_E_NOMEM;
        }
    }
    memset(st, 0, sizeof *st);
    return GV_OK;
}

int gv_dpkg_parse(const char *data, size_t len, struct gv_pkg_list *out, struct gv_err *err)
{
    memset(out, 0, sizeof *out);
    struct stanza st;
    memset(&st, 0, sizeof st);
    size_t i = 0;
    while (i < len) {
        const char *nl = memchr(data + i, '\n', len - i);
        size_t n = nl ? (size_t)(nl - (data + i)) : len - i;
        const char *line = data + i;
        i += n + (nl ? 1 : 0);
        int rc = GV_OK;
        if (blank_line(line, n))
            rc = finish(&st, out);
        else if (line[0] == ' ' || line[0] == '\t')
            st.any = 1; /* continuation of a multi-line field we do not keep */
        else if (line[0] != '#')
            field_line(&st, line, n);
        if (rc) {
            gv_pkg_list_free(out);
            return gv_err_set(err, GV_E_NOMEM, "dpkg status: out of memory");
        }
    }
    if (finish(&st, out)) {
        gv_pkg_list_free(out);
        return gv_err_set(err, GV_E_NOMEM, "dpkg status: out of memory");
    }
    return GV_OK;
}

void gv_pkg_list_free(struct gv_pkg_list *l)
{
    for (size_t i = 0; i < l->n; i++)
        pkg_free(&l->items[i]);
    free(l->items);
    l->items = NULL;
    l->n = l->cap = 0;
}

/* rpm query output: NAME \t VERSION \t ARCH \t SOURCERPM per line. */
int gv_rpm_parse(const char *data, size_t len, struct gv_pkg_list *out, struct gv_err *err)
{
    memset(out, 0, sizeof *out);
    size_t i = 0;
    while (i < len) {
        const char *nl = memchr(data + i, '\n', len - i);
        size_t n = nl ? (size_t)(nl - (data + i)) : len - i;
        const char *line = data + i;
        i += n + (nl ? 1 : 0);
        struct slice f[4] = {{0}};
        size_t k = 0, start = 0;
        for (size_t j = 0; j <= n && k < 4; j++)
            if (j == n || line[j] == '\t') {
                f[k++] = (struct slice){line + start, j - start};
                start = j + 1;
            }
        if (k < 3 || !f[0].n || has_space_or_nul(f[0]) || f[0].n > GV_DPKG_FIELD_MAX ||
            f[1].n > GV_DPKG_FIELD_MAX || f[2].n > GV_DPKG_FIELD_MAX ||
            f[3].n > GV_DPKG_FIELD_MAX) {
            if (n)
                skip(out, "an rpm query line that is not NAME<tab>VERSION<tab>ARCH<tab>SRPM");
            continue;
        }
        int has_src = k == 4 && f[3].n && !(f[3].n == 6 && !memcmp(f[3].p, "(none)", 6));
        struct gv_pkg pkg = {
            .name = dup_slice(f[0]),
            .version = dup_slice(f[1]),
            .arch = dup_slice(f[2]),
            .source = has_src ? dup_slice(f[3]) : NULL,
            .want = NULL,
            .state = dup_slice((struct slice){"installed", 9}),
        };
        if (!pkg.name || !pkg.version || !pkg.arch || !pkg.state || push(out, &pkg)) {
            pkg_free(&pkg);
            gv_pkg_list_free(out);
            return gv_err_set(err, GV_E_NOMEM, "rpm query: out of memory");
        }
    }
    return GV_OK;
}
