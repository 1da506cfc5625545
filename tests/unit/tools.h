/* Helpers for tests that build inputs with real tools (gcc, clang, nvcc) and
 * compare against independent ones (readelf, clang-offload-bundler). */
#ifndef GV_TEST_TOOLS_H
#define GV_TEST_TOOLS_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

/* Runs a shell command; returns its exit status (-1 if it did not run). */
static int tl_sh(const char *fmt, ...) __attribute__((format(printf, 1, 2), unused));
static int tl_sh(const char *fmt, ...)
{
    char cmd[8192];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    int rc = system(cmd);
    if (rc == -1 || !WIFEXITED(rc))
        return -1;
    return WEXITSTATUS(rc);
}

/* stdout of a shell command, NUL-terminated (free it); NULL on failure. */
static char *tl_capture(const char *fmt, ...) __attribute__((format(printf, 1, 2), unused));
static char *tl_capture(const char *fmt, ...)
{
    char cmd[8192];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    FILE *p = popen(cmd, "r");
    if (!p)
        return NULL;
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap);
    size_t n;
    while (buf && (n = fread(buf + len, 1, cap - len - 1, p)) > 0) {
        len += n;
        if (cap - len < 2) {
            cap *= 2;
            buf = realloc(buf, cap);
        }
    }
    int rc = pclose(p);
    if (!buf)
        return NULL;
    buf[len] = '\0';
    if (rc != 0) {
        free(buf);
        return NULL;
    }
    return buf;
}

static __attribute__((unused)) int tl_have(const char *tool)
{
    return tl_sh("command -v '%s' >/dev/null 2>&1", tool) == 0;
}

/* A fresh scratch directory under $GV_TEST_TMP (or /tmp). */
static __attribute__((unused)) void tl_tmpdir(const char *name, char *out, size_t outsz)
{
    const char *base = getenv("GV_TEST_TMP");
    snprintf(out, outsz, "%s/%s", base && *base ? base : "/tmp", name);
    tl_sh("rm -rf '%s' && mkdir -p '%s'", out, out);
}

static __attribute__((unused)) int tl_read(const char *path, uint8_t **data, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return -1;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    *data = malloc(n > 0 ? (size_t)n : 1);
    *len = n > 0 && fread(*data, 1, (size_t)n, f) == (size_t)n ? (size_t)n : 0;
    fclose(f);
    return n >= 0 && *len == (size_t)n ? 0 : -1;
}

static __attribute__((unused)) int tl_write(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    size_t w = len ? fwrite(data, 1, len, f) : 0;
    return fclose(f) == 0 && w == len ? 0 : -1;
}

/* What `readelf -d` says about a file. */
struct tl_dyn {
    char soname[512], rpath[1024], runpath[1024];
    int has_soname, has_rpath, has_runpath;
    char needed[64][256];
    int n_needed;
};

/* Copies the text between '[' and the last ']' of a readelf line. */
static __attribute__((unused)) void tl_bracket(const char *line, char *out, size_t outsz)
{
    const char *a = strchr(line, '['), *b = strrchr(line, ']');
    out[0] = '\0';
    if (a && b && b > a)
        snprintf(out, outsz, "%.*s", (int)(b - a - 1), a + 1);
}

static __attribute__((unused)) int tl_readelf_dynamic(const char *path, struct tl_dyn *d)
{
    memset(d, 0, sizeof *d);
    char *txt = tl_capture("readelf -d -W '%s' 2>/dev/null", path);
    if (!txt)
        return -1;
    for (char *line = strtok(txt, "\n"); line; line = strtok(NULL, "\n")) {
        if (strstr(line, "(NEEDED)") && d->n_needed < 64)
            tl_bracket(line, d->needed[d->n_needed++], sizeof d->needed[0]);
        else if (strstr(line, "(SONAME)") && !d->has_soname) {
            tl_bracket(line, d->soname, sizeof d->soname);
            d->has_soname = 1;
        } else if (strstr(line, "(RPATH)") && !d->has_rpath) {
            tl_bracket(line, d->rpath, sizeof d->rpath);
            d->has_rpath = 1;
        } else if (strstr(line, "(RUNPATH)") && !d->has_runpath) {
            tl_bracket(line, d->runpath, sizeof d->runpath);
            d->has_runpath = 1;
        }
    }
    free(txt);
    return 0;
}

/* A number from `readelf -h` ("Number of section headers:  31"), or -1. */
static __attribute__((unused)) long long tl_readelf_header_num(const char *path, const char *key)
{
    char *txt = tl_capture("readelf -h -W '%s' 2>/dev/null", path);
    if (!txt)
        return -1;
    long long v = -1;
    char *p = strstr(txt, key);
    if (p) {
        p = strchr(p, ':');
        if (p)
            v = strtoll(p + 1, NULL, 0);
    }
    free(txt);
    return v;
}

/* An LLVM toolchain with clang-NN, ld.lld-NN and clang-offload-bundler-NN,
 * NN >= 17 (gfx942 needs LLVM 17). *ver gets "19" etc. Returns 0 if none. */
static __attribute__((unused)) int tl_find_llvm(char *ver, size_t versz)
{
    static const char *const vs[] = {"19", "20", "21", "18", "17"};
    for (size_t i = 0; i < sizeof vs / sizeof vs[0]; i++) {
        char c[64], l[64], b[64];
        snprintf(c, sizeof c, "clang-%s", vs[i]);
        snprintf(l, sizeof l, "ld.lld-%s", vs[i]);
        snprintf(b, sizeof b, "clang-offload-bundler-%s", vs[i]);
        if (tl_have(c) && tl_have(l) && tl_have(b)) {
            snprintf(ver, versz, "%s", vs[i]);
            return 1;
        }
    }
    return 0;
}

#endif
