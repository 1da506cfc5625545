/* Fuzz target: the system probes' file parsers (os-release, cpuinfo,
 * ld.so.conf, profile.d and /etc/environment shell lines, /etc/group, KFD
 * node properties, PCI class, dpkg status) and the environment filter, run
 * through the real probes on a scratch --root. The first input byte picks the
 * file, the rest is its content. /etc/environment is also read as the root's
 * environment (env/rootenv.h), as snapshot --root does, and given to the
 * environment and loader probes as their envp. Checks: no crash/leak/hang,
 * the section serialises, every parsed variable is NAME=VALUE with a shell
 * name and a bounded value, and no value of a variable outside the allowlist
 * appears. */
#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/fs.h"
#include "base/json.h"
#include "env/envpolicy.h"
#include "env/probe.h"
#include "env/rootenv.h"

static char root[512];

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(p);
}

static void cleanup(void)
{
    if (root[0])
        nftw(root, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static void put(const char *rel, const void *data, size_t n)
{
    char p[1024], dir[1024];
    snprintf(p, sizeof p, "%s%s", root, rel);
    snprintf(dir, sizeof dir, "%s", p);
    *strrchr(dir, '/') = '\0';
    gv_mkdirs(dir, 0755);
    FILE *f = fopen(p, "wb");
    if (f) {
        fwrite(data, 1, n, f);
        fclose(f);
    }
}

static void setup(void)
{
    const char *t = getenv("GV_TEST_TMP");
    char base[400];
    snprintf(base, sizeof base, "%s", t ? t : "/tmp");
    gv_mkdirs(base, 0755);
    snprintf(root, sizeof root, "%s/fuzz-sysfiles-XXXXXX", base);
    if (!mkdtemp(root))
        abort();
    atexit(cleanup);
    put("/sys/bus/pci/devices/0000:03:00.0/vendor", "0x1002\n", 7);
    put("/sys/bus/pci/devices/0000:03:00.0/class", "0x038000\n", 9);
    put("/sys/class/kfd/kfd/topology/nodes/1/properties",
        "gfx_target_version 90010\nlocation_id 768\ndomain 0\n", 49);
    put("/proc/cpuinfo", "processor\t: 0\n", 14);
}

static const char *const files[] = {
    "/etc/os-release", "/proc/cpuinfo", "/etc/ld.so.conf", "/etc/profile.d/a.sh",
    "/etc/environment", "/etc/group", "/sys/class/kfd/kfd/topology/nodes/1/properties",
    "/sys/bus/pci/devices/0000:03:00.0/class", "/var/lib/dpkg/status",
};
#define NFILES (sizeof files / sizeof files[0])

/* A value nothing in the input or the machine can produce: the leak check
 * looks for it, so text the output holds for other reasons ("/usr/lib") never
 * looks like a leak. Random per process, so the fuzzer cannot learn it. */
static unsigned long long secret_seed;

static void secret_for(size_t i, char *out, size_t n)
{
    if (!secret_seed) {
        FILE *f = fopen("/dev/urandom", "rb");
        if (!f || fread(&secret_seed, sizeof secret_seed, 1, f) != 1)
            abort();
        fclose(f);
        secret_seed |= 1;
    }
    snprintf(out, n, "gvSECRET%016llx%04zuX", secret_seed, i);
}

/* Whether needle occurs in hay. Written out, not strstr: libFuzzer watches
 * strstr's arguments and would learn the secret from them. */
static int contains(const char *hay, const char *needle)
{
    size_t n = strlen(needle);
    for (; *hay; hay++) {
        size_t k = 0;
        while (k < n && hay[k] == needle[k])
            k++;
        if (k == n)
            return 1;
    }
    return 0;
}

/* The input as an environment: lines NAME=VALUE. Every variable that may not be
 * recorded gets a secret value instead of its own; none may show up in the
 * output. Recordable variables keep the fuzzer's values. */
static void check_env(const uint8_t *data, size_t size)
{
    char *buf = malloc(size + 1), *envp[64], secrets[64][48], *owned[64] = {NULL};
    int secret[64] = {0};
    size_t n = 0;
    memcpy(buf, data, size);
    buf[size] = '\0';
    for (char *s, *l = strtok_r(buf, "\n", &s); l && n < 63; l = strtok_r(NULL, "\n", &s)) {
        char *eq = strchr(l, '=');
        envp[n] = l;
        if (eq && !gv_env_recordable(l, (size_t)(eq - l))) {
            secret_for(n, secrets[n], sizeof secrets[n]);
            size_t len = (size_t)(eq - l) + 1 + strlen(secrets[n]) + 1;
            owned[n] = malloc(len);
            snprintf(owned[n], len, "%.*s=%s", (int)(eq - l), l, secrets[n]);
            envp[n] = owned[n];
            secret[n] = 1;
        }
        n++;
    }
    envp[n] = NULL;
    struct gv_probe_ctx ctx = {.root = root, .live = 0, .envp = envp};
    json_t *sec = gv_probe_environment(&ctx);
    json_t *ld = gv_probe_loader(&ctx, NULL);
    char *a = gv_json_dump(sec), *b = gv_json_dump(ld);
    if (!a || !b)
        abort();
    for (size_t i = 0; i < n; i++) {
        int echoed = 0; /* a recordable value that holds the secret text may be recorded */
        for (size_t j = 0; j < n && secret[i]; j++)
            echoed |= !secret[j] && strchr(envp[j], '=') && contains(strchr(envp[j], '='), secrets[i]);
        if (secret[i] && !echoed && (contains(a, secrets[i]) || contains(b, secrets[i]))) {
            fprintf(stderr, "leaked the value of %.*s\n", (int)strcspn(envp[i], "="), envp[i]);
            abort(); /* a value outside the allowlist reached the output */
        }
        free(owned[i]);
    }
    free(a);
    free(b);
    json_decref(sec);
    json_decref(ld);
    free(buf);
}

/* The root's environment as snapshot --root reads it: each entry a shell
 * name, '=', a value of at most GV_ROOTENV_VALUE_MAX bytes; names unique. */
static char **root_environment(void)
{
    char **envp = NULL;
    if (gv_rootenv_read(root, &envp, NULL) || !envp)
        abort();
    for (size_t i = 0; envp[i]; i++) {
        const char *e = envp[i];
        size_t n = strspn(e, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_");
        if (n == 0 || n > 256 || (e[0] >= '0' && e[0] <= '9') || e[n] != '=' ||
            strlen(e + n + 1) > GV_ROOTENV_VALUE_MAX)
            abort();
        for (size_t j = 0; j < i; j++)
            if (!strncmp(envp[j], e, n + 1))
                abort(); /* a name twice */
    }
    return envp;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!root[0])
        setup();
    if (size < 1)
        return 0;
    unsigned which = data[0] % (NFILES + 1);
    if (which == NFILES) {
        check_env(data + 1, size - 1);
        return 0;
    }
    put(files[which], data + 1, size - 1);
    char *env0[] = {NULL};
    struct gv_probe_ctx ctx = {.root = root, .live = 0, .envp = env0};
    json_t *secs[4] = {NULL};
    char **root_env = NULL;
    switch (which) {
    case 0: case 1: secs[0] = gv_probe_host(&ctx); break;
    case 2: secs[0] = gv_probe_loader(&ctx, NULL); break;
    case 3: secs[0] = gv_probe_environment(&ctx); break;
    case 4:
        secs[0] = gv_probe_environment(&ctx);
        ctx.envp = root_env = root_environment();
        secs[1] = gv_probe_environment(&ctx);
        secs[2] = gv_probe_loader(&ctx, NULL);
        break;
    case 5: secs[0] = gv_probe_permissions(&ctx); break;
    case 6: case 7: secs[0] = gv_probe_gpus(&ctx); break;
    default:
        secs[0] = gv_probe_packages(&ctx);
        secs[1] = gv_probe_drivers(&ctx, secs[0]);
        break;
    }
    for (int i = 0; i < 4 && secs[i]; i++) {
        char *s = gv_json_dump(secs[i]);
        if (!s)
            abort();
        free(s);
        json_decref(secs[i]);
    }
    gv_rootenv_free(root_env);
    char p[1024];
    snprintf(p, sizeof p, "%s%s", root, files[which]);
    if (which != 1 && which != 6 && which != 7)
        unlink(p);
    return 0;
}
