/* The ld.so.cache reader (src/env/ldcache.c) against glibc's own ldconfig:
 * a cache written by the real `ldconfig -C FILE` for a scratch tree (and this
 * machine's /etc/ld.so.cache) must give, entry by entry and in order, what
 * `ldconfig -p` prints; every truncation and a set of corruptions give
 * GV_E_FORMAT with a message, never a crash. */
#include <unistd.h>

#include "env/ldcache.h"
#include "t.h"
#include "tools.h"

static char tmp[512];

/* "soname => path" lines of `ldconfig -p -C FILE` for this machine's flags. */
static char *ldconfig_listing(const char *cache)
{
    return tl_capture("ldconfig -p -C '%s' | sed -n 's/^\\t\\([^ ]*\\) (libc6,%s[^)]*) => \\(.*\\)$/\\1 => \\2/p'",
                      cache, sizeof(void *) == 8 ? "x86-64" : "");
}

static char *our_listing(const uint8_t *d, size_t n)
{
    struct gv_ldcache c;
    struct gv_err err = {0};
    T_EQ_INT(gv_ldcache_parse(d, n, &c, &err), GV_OK);
    size_t cap = 1 << 16, used = 0;
    char *out = malloc(cap);
    out[0] = '\0';
    for (size_t i = 0; i < c.n; i++) {
        if (c.items[i].flags != gv_ldcache_native_flags())
            continue;
        size_t need = strlen(c.items[i].soname) + strlen(c.items[i].path) + 8;
        if (used + need >= cap)
            out = realloc(out, cap = cap * 2 + need);
        used += (size_t)sprintf(out + used, "%s => %s\n", c.items[i].soname, c.items[i].path);
    }
    gv_ldcache_free(&c);
    return out;
}

static void same_as_ldconfig(const char *cache, size_t *entries)
{
    uint8_t *d = NULL;
    size_t n = 0;
    T_EQ_INT(tl_read(cache, &d, &n), 0);
    if (!d)
        return;
    char *want = ldconfig_listing(cache), *got = our_listing(d, n);
    T_CHECK(want && got && strlen(want) > 0);
    if (want && got && strcmp(want, got) != 0)
        fprintf(stderr, "  %s: listing differs from ldconfig -p:\n--- ldconfig\n%.600s\n--- gpuvet\n%.600s\n",
                cache, want, got);
    T_CHECK(want && got && strcmp(want, got) == 0);
    *entries = 0;
    for (const char *p = got; p && *p; p++)
        *entries += *p == '\n';
    free(want);
    free(got);
    free(d);
}

/* A scratch tree with two versions of one library in two directories: the
 * cache must name the one ldconfig chose, and the lookup must return it. */
static void written_by_ldconfig(void)
{
    T_EQ_INT(tl_sh("set -e; cd '%s'; mkdir -p a b; "
                   "printf 'int f(void){return 1;}\\n' > f.c; "
                   "cc -shared -fPIC -Wl,-soname,libgvtest.so.6 -o a/libgvtest.so.6.0.1 f.c; "
                   "cc -shared -fPIC -Wl,-soname,libgvtest.so.6 -o b/libgvtest.so.6.2.0 f.c; "
                   "cc -shared -fPIC -Wl,-soname,libgvother.so.1 -o b/libgvother.so.1.0 f.c; "
                   "ldconfig -n a b; printf '%%s\\n' \"$PWD/b\" \"$PWD/a\" > ld.so.conf; "
                   "ldconfig -X -f ld.so.conf -C ld.so.cache",
                   tmp), 0);
    char cache[700];
    snprintf(cache, sizeof cache, "%s/ld.so.cache", tmp);
    size_t n = 0;
    same_as_ldconfig(cache, &n);
    T_CHECK(n >= 2);
    uint8_t *d = NULL;
    size_t len = 0;
    T_EQ_INT(tl_read(cache, &d, &len), 0);
    struct gv_ldcache c;
    struct gv_err err = {0};
    T_EQ_INT(gv_ldcache_parse(d, len, &c, &err), GV_OK);
    const char *p = gv_ldcache_lookup(&c, "libgvtest.so.6", gv_ldcache_native_flags());
    char want[800];
    snprintf(want, sizeof want, "%s/b/libgvtest.so.6", tmp); /* b comes first in the conf */
    T_CHECK(p && strcmp(p, want) == 0);
    T_CHECK(gv_ldcache_lookup(&c, "libgvnone.so.1", gv_ldcache_native_flags()) == NULL);
    T_CHECK(gv_ldcache_lookup(&c, "libgvtest.so.6", 0x0003) == NULL); /* 32-bit flags */
    gv_ldcache_free(&c);
    free(d);
}

static void system_cache(void)
{
    size_t n = 0;
    same_as_ldconfig("/etc/ld.so.cache", &n);
    fprintf(stderr, "  /etc/ld.so.cache: %zu entries, as ldconfig -p lists them\n", n);
}

static void damaged(void)
{
    char cache[700];
    snprintf(cache, sizeof cache, "%s/ld.so.cache", tmp);
    uint8_t *d = NULL;
    size_t n = 0;
    T_EQ_INT(tl_read(cache, &d, &n), 0);
    if (!d)
        return;
    struct gv_ldcache c;
    struct gv_err err = {0};
    int ok = 0, bad = 0;
    for (size_t len = 0; len < n; len++) { /* every truncation */
        gv_err_clear(&err);
        int rc = gv_ldcache_parse(d, len, &c, &err);
        if (rc == GV_OK) {
            ok++;
            gv_ldcache_free(&c);
        } else {
            bad++;
            T_CHECK(rc == GV_E_FORMAT && err.msg[0]);
        }
    }
    T_EQ_INT(bad + ok, (long long)n);
    T_CHECK(bad > 0);
    uint8_t *x = malloc(n);
    memcpy(x, d, n);
    x[17] = '2'; /* version 2.1 */
    T_EQ_INT(gv_ldcache_parse(x, n, &c, &err), GV_E_FORMAT);
    T_CHECK(strstr(err.msg, "version") != NULL);
    memcpy(x, d, n);
    x[20] = 0xff, x[21] = 0xff, x[22] = 0xff, x[23] = 0x7f; /* nlibs */
    T_EQ_INT(gv_ldcache_parse(x, n, &c, &err), GV_E_FORMAT);
    memcpy(x, d, n);
    x[48 + 8] = 0xff, x[48 + 9] = 0xff, x[48 + 10] = 0xff, x[48 + 11] = 0xff; /* a value offset */
    T_EQ_INT(gv_ldcache_parse(x, n, &c, &err), GV_E_FORMAT);
    T_CHECK(strstr(err.msg, "entry 0") != NULL);
    memcpy(x, d, n);
    { /* entry 0's path points at the last byte, which is not a terminator */
        uint32_t off = (uint32_t)(n - 1);
        memcpy(x + 48 + 8, &off, 4); /* little-endian host */
        x[n - 1] = 'x';
        T_EQ_INT(gv_ldcache_parse(x, n, &c, &err), GV_E_FORMAT);
        T_CHECK(strstr(err.msg, "unterminated") != NULL);
    }
    memcpy(x, "ld.so-1.7.0", 11);
    T_EQ_INT(gv_ldcache_parse(x, n, &c, &err), GV_E_FORMAT);
    T_CHECK(strstr(err.msg, "old-format") != NULL);
    free(x);
    free(d);
}

int main(void)
{
    if (!tl_have("ldconfig") || !tl_have("cc")) {
        printf("skipped: needs ldconfig and cc\n");
        return 77;
    }
    tl_tmpdir("test_ldcache", tmp, sizeof tmp);
    T_RUN(written_by_ldconfig);
    if (access("/etc/ld.so.cache", R_OK) == 0)
        T_RUN(system_cache);
    else
        fprintf(stderr, "skipped: system_cache (this machine has no /etc/ld.so.cache)\n");
    T_RUN(damaged);
    return t_done();
}
