/* host: operating system (os-release), kernel, CPU and container detection. */
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "env/probe.h"
#include "env/sysutil.h"

#define OS_RELEASE_MAX (64 * 1024)

struct os_fields {
    char id[128], version_id[128], pretty[512], codename[128], ubuntu_codename[128];
};

static int os_line(char *line, void *arg)
{
    struct os_fields *f = arg;
    char *eq = strchr(line, '=');
    if (!eq || line[0] == '#')
        return 0;
    *eq = '\0';
    const char *key = gv_sys_trim(line);
    const char *val = gv_sys_trim(eq + 1);
    if (!strcmp(key, "ID"))
        gv_sys_unquote(val, f->id, sizeof f->id);
    else if (!strcmp(key, "VERSION_ID"))
        gv_sys_unquote(val, f->version_id, sizeof f->version_id);
    else if (!strcmp(key, "PRETTY_NAME"))
        gv_sys_unquote(val, f->pretty, sizeof f->pretty);
    else if (!strcmp(key, "VERSION_CODENAME"))
        gv_sys_unquote(val, f->codename, sizeof f->codename);
    else if (!strcmp(key, "UBUNTU_CODENAME"))
        gv_sys_unquote(val, f->ubuntu_codename, sizeof f->ubuntu_codename);
    return 0;
}

static void put_nonempty(json_t *o, const char *key, const char *val)
{
    if (val && val[0])
        gv_json_put_str(o, key, val);
}

/* os-release(5): /etc/os-release, falling back to /usr/lib/os-release. */
static json_t *probe_os(const struct gv_probe_ctx *ctx, const char **source)
{
    static const char *const paths[] = {"/etc/os-release", "/usr/lib/os-release"};
    char *data = NULL;
    struct gv_err err = {0};
    *source = paths[0];
    for (size_t i = 0; i < 2; i++) {
        gv_err_clear(&err);
        if (gv_sys_read(ctx, paths[i], OS_RELEASE_MAX, &data, NULL, &err) == 0) {
            *source = paths[i];
            break;
        }
        if (err.code != GV_E_NOTFOUND)
            return gv_section_missing(paths[i], err.msg);
    }
    if (!data)
        return gv_section_missing("/etc/os-release", "neither /etc/os-release nor "
                                                     "/usr/lib/os-release exists");
    struct os_fields f = {0};
    gv_sys_each_line(data, os_line, &f);
    free(data);
    json_t *os = gv_section_new(*source);
    put_nonempty(os, "id", f.id);
    put_nonempty(os, "version_id", f.version_id);
    put_nonempty(os, "pretty_name", f.pretty);
    put_nonempty(os, "codename", f.codename[0] ? f.codename : f.ubuntu_codename);
    return os;
}

static json_t *probe_kernel(const struct gv_probe_ctx *ctx)
{
    const char *src = "/proc/sys/kernel/osrelease", *reason;
    if (!gv_sys_have(ctx, "/proc/sys/kernel", &reason))
        return gv_section_missing(src, reason);
    char rel[256], ver[512];
    if (gv_sys_line(ctx, src, rel, sizeof rel) != 0 || !rel[0])
        return gv_section_missing(src, "unreadable or empty");
    json_t *k = gv_section_new(src);
    gv_json_put_str(k, "release", rel);
    if (gv_sys_line(ctx, "/proc/sys/kernel/version", ver, sizeof ver) == 0 && ver[0])
        gv_json_put_str(k, "version", ver);
    return k;
}

struct cpu_scan {
    char model[256];
    long count;
};

static int cpu_line(char *line, void *arg)
{
    struct cpu_scan *c = arg;
    char *colon = strchr(line, ':');
    if (!colon)
        return 0;
    *colon = '\0';
    const char *key = gv_sys_trim(line);
    if (!strcmp(key, "processor"))
        c->count++;
    else if (!c->model[0] && !strcmp(key, "model name"))
        snprintf(c->model, sizeof c->model, "%s", gv_sys_trim(colon + 1));
    return 0;
}

static json_t *probe_cpu(const struct gv_probe_ctx *ctx)
{
    const char *src = "/proc/cpuinfo", *reason;
    if (!gv_sys_have(ctx, "/proc", &reason))
        return gv_section_missing(src, reason);
    char *data;
    struct gv_err err = {0};
    if (gv_sys_read(ctx, src, 16 << 20, &data, NULL, &err))
        return gv_section_missing(src, err.msg);
    struct cpu_scan c = {{0}, 0};
    gv_sys_each_line(data, cpu_line, &c);
    free(data);
    json_t *s = gv_section_new(src);
    put_nonempty(s, "model", c.model);
    if (c.count > 0)
        json_object_set_new(s, "logical_cpus", json_integer(c.count));
    return s;
}

/* Runtime named by a cgroup path, or NULL. */
static const char *cgroup_runtime(const char *data)
{
    static const struct {
        const char *needle, *runtime;
    } tab[] = {{"kubepods", "kubernetes"}, {"docker", "docker"}, {"libpod", "podman"},
               {"containerd", "containerd"}, {"lxc", "lxc"}, {"machine.slice", "systemd-nspawn"}};
    for (size_t i = 0; i < sizeof tab / sizeof tab[0]; i++)
        if (strstr(data, tab[i].needle))
            return tab[i].runtime;
    return NULL;
}

/* The runtime named by container= in pid 1's environment (NUL-separated):
 * NULL when unset or unreadable, "other" for a value not in the list of
 * known runtimes (an environment value outside the allowlist is never
 * copied into the snapshot). */
static const char *pid1_container_env(const struct gv_probe_ctx *ctx)
{
    static const char *const known[] = {"docker", "podman", "lxc", "lxc-libvirt",
                                        "systemd-nspawn", "rkt", "oci", "wsl", "proot",
                                        "containerd", "kubernetes", "crio"};
    char *data;
    size_t len;
    const char *rt = NULL;
    if (gv_sys_read(ctx, "/proc/1/environ", 1 << 20, &data, &len, NULL))
        return NULL;
    for (size_t i = 0; i < len && !rt; i += strlen(data + i) + 1) {
        if (strncmp(data + i, "container=", 10) != 0)
            continue;
        rt = "other";
        for (size_t k = 0; k < sizeof known / sizeof known[0]; k++)
            if (!strcmp(data + i + 10, known[k]))
                rt = known[k];
    }
    free(data);
    return rt;
}

/* Whether the root mount in mountinfo is an overlay file system. */
static int root_is_overlay(const struct gv_probe_ctx *ctx)
{
    char *data;
    if (gv_sys_read(ctx, "/proc/self/mountinfo", 8 << 20, &data, NULL, NULL))
        return 0;
    int overlay = 0;
    char *save = NULL;
    for (char *line = strtok_r(data, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        /* id parent major:minor root mountpoint opts [optional...] - fstype src opts */
        char mnt[8];
        if (sscanf(line, "%*s %*s %*s %*s %7s", mnt) == 1 && !strcmp(mnt, "/")) {
            char *dash = strstr(line, " - ");
            if (dash && !strncmp(dash + 3, "overlay ", 8))
                overlay = 1;
        }
    }
    free(data);
    return overlay;
}

static json_t *container_found(const char *runtime, const char *evidence)
{
    json_t *s = gv_section_new("/.dockerenv, /run/.containerenv, /proc/1/environ, "
                               "/proc/1/cgroup, /proc/self/mountinfo");
    json_object_set_new(s, "inside", json_boolean(evidence != NULL));
    if (runtime)
        gv_json_put_str(s, "runtime", runtime);
    if (evidence)
        gv_json_put_str(s, "evidence", evidence);
    return s;
}

static json_t *probe_container(const struct gv_probe_ctx *ctx)
{
    if (!ctx->live)
        return gv_section_missing("/.dockerenv, /run/.containerenv, /proc/1",
                                  "container detection describes a running system; not done "
                                  "for --root");
    const char *env = pid1_container_env(ctx);
    if (gv_sys_exists(ctx, "/.dockerenv"))
        return container_found("docker", "/.dockerenv");
    if (gv_sys_exists(ctx, "/run/.containerenv"))
        return container_found("podman", "/run/.containerenv");
    if (env)
        return container_found(env, "/proc/1/environ container=");
    char *cg;
    if (gv_sys_read(ctx, "/proc/1/cgroup", 1 << 20, &cg, NULL, NULL) == 0) {
        const char *rt = cgroup_runtime(cg);
        free(cg);
        if (rt)
            return container_found(rt, "/proc/1/cgroup");
    }
    if (root_is_overlay(ctx))
        return container_found(NULL, "/proc/self/mountinfo: / is an overlay mount");
    return container_found(NULL, NULL);
}

json_t *gv_probe_host(const struct gv_probe_ctx *ctx)
{
    const char *source;
    json_t *os = probe_os(ctx, &source);
    json_t *host = gv_section_new(source);
    json_object_set_new(host, "os", os);
    json_object_set_new(host, "kernel", probe_kernel(ctx));
    json_object_set_new(host, "cpu", probe_cpu(ctx));
    json_object_set_new(host, "container", probe_container(ctx));
    return host;
}
