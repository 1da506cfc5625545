/* Queries over the knowledge-base tables (kb_tables.c). */
#include "kb/kb.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Reads one numeric component; *s advances past it and a following '.'.
 * Returns -1 at the end of the version (end of string, '+', '-', '~', ' '). */
static long next_component(const char **s)
{
    const char *p = *s;
    if (!isdigit((unsigned char)*p))
        return -1;
    long v = 0;
    while (isdigit((unsigned char)*p)) {
        if (v < 100000000)
            v = v * 10 + (*p - '0');
        p++;
    }
    while (*p && *p != '.' && *p != '+' && *p != '-' && *p != '~' && *p != ' ')
        p++; /* "2rc1": ignore the non-numeric tail of a component */
    if (*p == '.')
        p++;
    *s = p;
    return v;
}

int kb_vercmp_n(const char *a, const char *b, int n)
{
    if (!a || !b)
        return a ? 1 : b ? -1 : 0;
    for (int i = 0; n <= 0 || i < n; i++) {
        long x = next_component(&a), y = next_component(&b);
        if (x < 0 && y < 0)
            return 0;
        if (x < 0)
            x = 0;
        if (y < 0)
            y = 0;
        if (x != y)
            return x < y ? -1 : 1;
    }
    return 0;
}

int kb_vercmp(const char *a, const char *b) { return kb_vercmp_n(a, b, 0); }

int kb_major(const char *v)
{
    if (!v)
        return -1;
    long m = next_component(&v);
    return m < 0 || m > 1000 ? -1 : (int)m;
}

char *kb_major_minor(const char *v, char *buf, size_t size)
{
    if (!v)
        return NULL;
    long a = next_component(&v);
    if (a < 0)
        return NULL;
    long b = next_component(&v);
    snprintf(buf, size, "%ld.%ld", a, b < 0 ? 0 : b);
    return buf;
}

const char *kb_local_label(const char *version)
{
    const char *p = version ? strchr(version, '+') : NULL;
    return p && p[1] ? p + 1 : NULL;
}

char *kb_public_version(const char *version, char *buf, size_t size)
{
    if (!version)
        return NULL;
    size_t n = strcspn(version, "+");
    snprintf(buf, size, "%.*s", (int)n, version);
    return buf;
}

char *kb_release_from_pkgver(const char *pkgver, char *buf, size_t size)
{
    if (!pkgver)
        return NULL;
    const char *colon = strchr(pkgver, ':');
    const char *s = colon ? colon + 1 : pkgver;
    size_t end = strcspn(s, "-~");
    /* the last dotted component before the Debian revision is the ROCm integer */
    const char *last = NULL;
    for (size_t i = 0; i < end; i++)
        if (s[i] == '.')
            last = s + i + 1;
    if (!last)
        return NULL;
    char *stop;
    unsigned long n = strtoul(last, &stop, 10);
    if (stop == last || (size_t)(stop - s) != end || stop - last < 5)
        return NULL;
    if (stop - last >= 8) /* 30100000: amdgpu 30.10 [inferred] */
        snprintf(buf, size, "%lu.%lu.%lu", n / 1000000, n / 10000 % 100, n / 100 % 100);
    else
        snprintf(buf, size, "%lu.%lu.%lu", n / 10000, n / 100 % 100, n % 100);
    return buf;
}

static int in_range_mm(const char *v, const char *lo, const char *hi)
{
    return (!lo || kb_vercmp_n(v, lo, 2) >= 0) && (!hi || kb_vercmp_n(v, hi, 2) <= 0);
}

const struct kb_torch_line *kb_torch_line(const char *torch_version)
{
    size_t n;
    const struct kb_torch_line *t = kb_torch_lines(&n);
    for (size_t i = 0; torch_version && i < n; i++)
        if (kb_vercmp_n(torch_version, t[i].torch, 2) == 0)
            return &t[i];
    return NULL;
}

const char *kb_torch_variant(const struct kb_torch_line *t, const char *rocm_mm)
{
    for (int i = 0; t && i < KB_MAX_VARIANTS && t->rocm[i]; i++)
        if (kb_vercmp_n(t->rocm[i], rocm_mm, 2) == 0)
            return t->rocm[i];
    return NULL;
}

const struct kb_torch_line *kb_torch_for_rocm(const char *rocm_mm)
{
    size_t n;
    const struct kb_torch_line *t = kb_torch_lines(&n);
    for (size_t i = n; i-- > 0;)
        if (kb_torch_variant(&t[i], rocm_mm))
            return &t[i];
    return NULL;
}

const struct kb_wheel_arch *kb_wheel_arch(const char *torch, const char *rocm)
{
    size_t n;
    const struct kb_wheel_arch *w = kb_wheel_archs(&n);
    for (size_t i = 0; torch && i < n; i++) {
        if (!in_range_mm(torch, w[i].torch_from, w[i].torch_to))
            continue;
        if (rocm && !in_range_mm(rocm, w[i].rocm_min, w[i].rocm_max))
            continue;
        return &w[i];
    }
    return NULL;
}

int kb_arch_in_list(const char *list, const char *gfx)
{
    if (!list || !gfx || !*gfx)
        return 0;
    size_t len = strlen(gfx);
    for (const char *p = list; *p;) {
        size_t n = strcspn(p, ";, ");
        if (n == len && strncmp(p, gfx, n) == 0)
            return 1;
        p += n;
        while (*p == ';' || *p == ',' || *p == ' ')
            p++;
    }
    return 0;
}

const char *kb_first_torch_with_arch(const char *gfx)
{
    size_t n;
    const struct kb_wheel_arch *w = kb_wheel_archs(&n);
    for (size_t i = 0; i < n; i++)
        if (kb_arch_in_list(w[i].archs, gfx))
            return w[i].torch_from;
    return NULL;
}

const struct kb_rocm_support *kb_rocm_support(const char *rocm)
{
    size_t n;
    const struct kb_rocm_support *s = kb_rocm_supports(&n);
    for (size_t i = 0; rocm && i < n; i++)
        if (kb_vercmp_n(rocm, s[i].rocm, 2) == 0)
            return &s[i];
    return NULL;
}

const struct kb_gpu *kb_gpu_by_gfx(const char *gfx)
{
    size_t n;
    const struct kb_gpu *g = kb_gpus(&n);
    for (size_t i = 0; gfx && i < n; i++)
        if (strcmp(g[i].gfx, gfx) == 0)
            return &g[i];
    return NULL;
}

const struct kb_gpu *kb_gpu_by_target_version(unsigned v)
{
    size_t n;
    const struct kb_gpu *g = kb_gpus(&n);
    for (size_t i = 0; i < n; i++)
        if (g[i].gfx_target_version == v)
            return &g[i];
    return NULL;
}

void kb_gfx_name(unsigned major, unsigned minor, unsigned stepping, char *buf, size_t size)
{
    snprintf(buf, size, "gfx%u%x%x", major, minor, stepping);
}

int kb_parse_override(const char *value, unsigned *major, unsigned *minor, unsigned *stepping)
{
    if (!value)
        return -1;
    /* libhsakmt: sscanf("%u.%u.%u%c") must match exactly three numbers. We also
     * refuse signs and spaces, which %u would silently accept. */
    for (const char *p = value; *p; p++)
        if (!isdigit((unsigned char)*p) && *p != '.')
            return -1;
    unsigned a, b, c;
    char extra;
    if (sscanf(value, "%u.%u.%u%c", &a, &b, &c, &extra) != 3)
        return -1;
    if (a > 63 || b > 255 || c > 255)
        return -1;
    *major = a;
    *minor = b;
    *stepping = c;
    return 0;
}

const struct kb_override *kb_override(const char *real, const char *as)
{
    size_t n;
    const struct kb_override *o = kb_overrides(&n);
    for (size_t i = 0; real && as && i < n; i++)
        if (!strcmp(o[i].real, real) && !strcmp(o[i].as, as))
            return &o[i];
    return NULL;
}

const struct kb_soname *kb_soname(const char *name)
{
    size_t n;
    const struct kb_soname *s = kb_sonames(&n);
    for (size_t i = 0; name && i < n; i++)
        if (!strcmp(s[i].name, name))
            return &s[i];
    return NULL;
}

const char *kb_soname_for(const struct kb_soname *s, int rocm_major)
{
    if (!s)
        return NULL;
    return rocm_major == 5 ? s->rocm5 : rocm_major == 6 ? s->rocm6 : rocm_major == 7 ? s->rocm7
                                                                                     : NULL;
}

unsigned kb_soname_majors(const char *soname)
{
    size_t n;
    const struct kb_soname *s = kb_sonames(&n);
    unsigned mask = 0;
    for (size_t i = 0; soname && i < n; i++)
        for (int major = 5; major <= 7; major++) {
            const char *x = kb_soname_for(&s[i], major);
            if (x && !strcmp(x, soname))
                mask |= 1u << major;
        }
    return mask;
}

const char *kb_rocm_from_hip(const char *hip, char *buf, size_t size)
{
    if (!hip)
        return NULL;
    size_t n;
    const struct kb_hip_version *h = kb_hip_versions(&n);
    for (size_t i = 0; i < n; i++) {
        size_t len = strlen(h[i].hip);
        if (!strncmp(hip, h[i].hip, len) && !isdigit((unsigned char)hip[len])) {
            snprintf(buf, size, "%s", h[i].rocm);
            return buf;
        }
    }
    return kb_major_minor(hip, buf, size);
}

const struct kb_kmd *kb_kmd(const char *kmd_release)
{
    size_t n;
    const struct kb_kmd *k = kb_kmds(&n);
    for (size_t i = 0; kmd_release && i < n; i++)
        if (kb_vercmp_n(kmd_release, k[i].kmd, 2) == 0)
            return &k[i];
    return NULL;
}

int kb_kmd_supports(const struct kb_kmd *k, const char *user_release)
{
    return k && user_release && in_range_mm(user_release, k->user_min, k->user_max);
}

const struct kb_env *kb_env(const char *name)
{
    size_t n;
    const struct kb_env *e = kb_envs(&n);
    const struct kb_env *prefix_hit = NULL;
    for (size_t i = 0; name && i < n; i++) {
        size_t len = strlen(e[i].name);
        if (e[i].name[len - 1] == '*') {
            if (!prefix_hit && !strncmp(name, e[i].name, len - 1) && name[len - 1])
                prefix_hit = &e[i];
        } else if (!strcmp(name, e[i].name)) {
            return &e[i];
        }
    }
    return prefix_hit;
}

int kb_env_is_quiet(const struct kb_env *e, const char *value)
{
    return e && e->quiet && value && kb_arch_in_list(e->quiet, value);
}

const struct kb_error *kb_error_match(const char *text)
{
    size_t n;
    const struct kb_error *e = kb_errors(&n);
    for (size_t i = 0; text && i < n; i++)
        if (strstr(text, e[i].pattern))
            return &e[i];
    return NULL;
}

const struct kb_tensile_gap *kb_tensile_gap(const char *gfx, const char *rocm)
{
    size_t n;
    const struct kb_tensile_gap *t = kb_tensile_gaps(&n);
    for (size_t i = 0; gfx && rocm && i < n; i++)
        if (!strcmp(t[i].gfx, gfx) && kb_vercmp_n(rocm, t[i].rocm_from, 2) >= 0)
            return &t[i];
    return NULL;
}

const struct kb_cuda_driver *kb_cuda_driver(const char *cuda_version)
{
    size_t n;
    const struct kb_cuda_driver *d = kb_cuda_drivers(&n);
    int major = kb_major(cuda_version);
    for (size_t i = 0; major >= 0 && i < n; i++)
        if (kb_major(d[i].cuda) == major)
            return &d[i];
    return NULL;
}
