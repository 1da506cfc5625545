/* Rules about environment variables, CUDA, processes and package holds. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kb/rules_impl.h"

struct env_walk {
    struct gv_rule_ctx *c;
    enum kb_env_kind kinds[2];
};

static int env_visit(const char *name, const char *value, const char *path, void *arg)
{
    struct env_walk *w = arg;
    const struct kb_env *e = kb_env(name);
    if (!e || (e->kind != w->kinds[0] && e->kind != w->kinds[1]))
        return 0;
    if (kb_env_is_quiet(e, value))
        return 0;
    /* CUBLAS_WORKSPACE_CONFIG's documented deterministic values are no problem */
    if (!strcmp(name, "CUBLAS_WORKSPACE_CONFIG") &&
        (!strcmp(value, ":4096:8") || !strcmp(value, ":16:8")))
        return 0;
    json_t *f;
    if (e->kind == KB_ENV_DEBUG)
        f = finding(w->c, GV_SEV_WARNING, "%s=%s is left on: %s", name, value, e->effect);
    else if (e->kind == KB_ENV_TOOLING)
        f = finding(w->c, GV_SEV_WARNING, "%s is set: %s", name, e->effect);
    else
        f = finding(w->c, GV_SEV_WARNING, "%s=%s changes results: %s", name, value, e->effect);
    evidence_str(f, path, value);
    evidencef(f, "kb: default", "%s", e->dflt);
    reference(f, e->source);
    char file[256];
    if (profile_file(path, file, sizeof file))
        fix(f, "remove %s from %s (unless intended), then log in again", name, file);
    else
        fix(f, "unset %s   (unless intended; record it with the results if you keep it)", name);
    return 0;
}

static void env_rule(struct gv_rule_ctx *c, enum kb_env_kind a, enum kb_env_kind b)
{
    if (!need(c, "environment"))
        return;
    struct env_walk w = {c, {a, b}};
    env_each(c->snap, env_visit, &w);
}

static void check_numerics_env(struct gv_rule_ctx *c) { env_rule(c, KB_ENV_NUMERICS, KB_ENV_KERNELS); }
static void check_debug_env(struct gv_rule_ctx *c) { env_rule(c, KB_ENV_DEBUG, KB_ENV_DEBUG); }
static void check_tooling_env(struct gv_rule_ctx *c) { env_rule(c, KB_ENV_TOOLING, KB_ENV_TOOLING); }

/* ---- loader ---- */

/* loader.resolved answers where /etc/ld.so.cache (what the loader reads) and
 * the configured directories (what ldconfig would write) disagree. */
static void check_ldcache_stale(struct gv_rule_ctx *c)
{
    const json_t *ld = section(c->snap, "loader");
    const char *k;
    json_t *r;
    json_object_foreach((json_t *)jobj(ld, "resolved"), k, r) {
        if (!jbool(r, "stale_cache"))
            continue;
        const json_t *w = jobj(r, "ldconfig_would");
        const char *now = jstr(r, "path"), *would = jstr(w, "path");
        json_t *f;
        if (!jbool(r, "found"))
            f = finding(c, GV_SEV_ERROR,
                        "%s is in %s but not in /etc/ld.so.cache: programs fail with \"%s: "
                        "cannot open shared object file\" until ldconfig runs",
                        k, would ? would : "a configured directory", k);
        else if (!jbool(w, "found"))
            f = finding(c, GV_SEV_ERROR,
                        "%s still loads %s through /etc/ld.so.cache, which no configured "
                        "directory offers any more", k, now ? now : "?");
        else
            f = finding(c, GV_SEV_ERROR,
                        "%s loads %s through /etc/ld.so.cache, but the configured directories "
                        "now give %s", k, now ? now : "?", would);
        char path[300];
        snprintf(path, sizeof path, "loader.resolved.%s", k);
        evidence(f, path, r);
        fix(f, "sudo ldconfig   (rebuilds /etc/ld.so.cache from /etc/ld.so.conf and its "
               "directories; package installs do it, copying files by hand does not)");
    }
}

/* ---- CUDA ---- */

static void check_cuda_stub(struct gv_rule_ctx *c)
{
    const json_t *ld = section(c->snap, "loader");
    const json_t *r = jobj(jobj(ld, "resolved"), "libcuda.so.1");
    const char *p = jstr(r, "path");
    int stub = jbool(r, "stub") || (p && strstr(p, "/stubs/"));
    if (!stub) {
        size_t i;
        json_t *d;
        json_array_foreach(jarr(ld, "ld_library_path"), i, d) {
            const char *s = json_string_value(d);
            if (!s || !strstr(s, "/stubs") || !strstr(s, "cuda"))
                continue;
            json_t *f = finding(c, GV_SEV_WARNING,
                                "LD_LIBRARY_PATH contains the CUDA stub directory %s", s);
            char path[64];
            snprintf(path, sizeof path, "loader.ld_library_path[%zu]", i);
            evidence_str(f, path, s);
            fix(f, "remove %s from LD_LIBRARY_PATH: stubs are for linking only", s);
        }
        return;
    }
    json_t *f = finding(c, GV_SEV_ERROR,
                        "libcuda.so.1 resolves to the toolkit's stub %s: every CUDA call fails "
                        "(CUDA_ERROR_STUB_LIBRARY)",
                        p ? p : "?");
    evidence(f, "loader.resolved.libcuda.so.1", r);
    const char *via = jstr(r, "via");
    if (via && !strcmp(via, "LD_LIBRARY_PATH"))
        fix(f, "remove the .../stubs directory from LD_LIBRARY_PATH");
    else
        fix(f, "remove the .../stubs directory from /etc/ld.so.conf.d/*, then sudo ldconfig");
    fix(f, "the real libcuda.so.1 comes with the NVIDIA driver (it is absent on a machine "
           "without one)");
}

static const char *nvidia_driver(const json_t *snap, char *path, size_t size)
{
    const json_t *st = section(snap, "stacks");
    size_t i;
    json_t *in;
    json_array_foreach(jarr(st, "installs"), i, in) {
        const char *k = jstr(in, "kind"), *l = jstr(in, "layout");
        if (k && l && !strcmp(k, "cuda") && !strcmp(l, "driver") && jstr(in, "version")) {
            snprintf(path, size, "stacks.installs[%zu].version", i);
            return jstr(in, "version");
        }
    }
    const json_t *m = jobj(jobj(section(snap, "drivers"), "modules"), "nvidia");
    if (jbool(m, "loaded") && jstr(m, "version")) {
        snprintf(path, size, "drivers.modules.nvidia.version");
        return jstr(m, "version");
    }
    return NULL;
}

static void cuda_one(struct gv_rule_ctx *c, const char *cuda, const char *what,
                     const char *cpath, const char *drv, const char *dpath)
{
    const struct kb_cuda_driver *k = kb_cuda_driver(cuda);
    if (!k || kb_vercmp(drv, k->min_driver) >= 0)
        return;
    json_t *f = finding(c, GV_SEV_ERROR,
                        "%s is CUDA %s, which needs NVIDIA driver >= %s; the driver is %s "
                        "(cudaErrorInsufficientDriver)",
                        what, cuda, k->min_driver, drv);
    evidence_str(f, cpath, cuda);
    evidence_str(f, dpath, drv);
    reference(f, k->source);
    fix(f, "upgrade the NVIDIA driver to %s or newer, or use a CUDA %d.x build that this "
           "driver supports",
        k->min_driver, kb_major(cuda) - 1);
}

static void check_cuda_driver(struct gv_rule_ctx *c)
{
    char dpath[96];
    const char *drv = nvidia_driver(c->snap, dpath, sizeof dpath);
    if (!drv)
        return; /* no NVIDIA driver: nothing to be too old */
    const json_t *st = section(c->snap, "stacks");
    size_t i;
    json_t *in;
    json_array_foreach(jarr(st, "installs"), i, in) {
        const char *k = jstr(in, "kind"), *l = jstr(in, "layout");
        if (!k || strcmp(k, "cuda") != 0 || (l && !strcmp(l, "driver")) || !jstr(in, "version"))
            continue;
        char p[64], what[300];
        snprintf(p, sizeof p, "stacks.installs[%zu].version", i);
        snprintf(what, sizeof what, "the CUDA toolkit in %s",
                 jstr(in, "prefix") ? jstr(in, "prefix") : "?");
        cuda_one(c, jstr(in, "version"), what, p, drv, dpath);
    }
    const json_t *py = section(c->snap, "python");
    json_t *env;
    json_array_foreach(jarr(py, "environments"), i, env) {
        const json_t *torch = jobj(env, "torch");
        const char *cu = jstr(torch, "cuda");
        if (!cu)
            continue;
        char p[96];
        snprintf(p, sizeof p, "python.environments[%zu].torch.cuda", i);
        cuda_one(c, cu, "torch's CUDA runtime", p, drv, dpath);
    }
}

/* ---- a process with two copies of a library ---- */

static void check_process_libs(struct gv_rule_ctx *c)
{
    const json_t *pr = section(c->snap, "process");
    const json_t *m = jarr(pr, "mapped");
    size_t n = m ? json_array_size(m) : 0;
    for (size_t i = 0; i < n; i++) {
        const json_t *a = json_array_get(m, i);
        const char *name = jstr(a, "name"), *pa = jstr(a, "path");
        if (!name || !pa)
            continue;
        int first = 1;
        for (size_t k = 0; k < i; k++) /* report each name once, at its first copy */
            if (jstr(json_array_get(m, k), "name") &&
                !strcmp(jstr(json_array_get(m, k), "name"), name))
                first = 0;
        if (!first)
            continue;
        for (size_t j = i + 1; j < n; j++) {
            const json_t *b = json_array_get(m, j);
            const char *nb = jstr(b, "name"), *pb = jstr(b, "path");
            if (!nb || !pb || strcmp(nb, name) != 0 || !strcmp(pa, pb))
                continue;
            json_t *f = finding(c, GV_SEV_ERROR,
                                "process %lld mapped two copies of %s: %s and %s",
                                (long long)json_integer_value(json_object_get(pr, "pid")), name,
                                pa, pb);
            char p1[64], p2[64];
            snprintf(p1, sizeof p1, "process.mapped[%zu]", i);
            snprintf(p2, sizeof p2, "process.mapped[%zu]", j);
            evidence(f, p1, a);
            evidence(f, p2, b);
            const char *base = strrchr(pa, '/') ? strrchr(pa, '/') + 1 : pa;
            fix(f, "find which module pulls in the second copy (LD_PRELOAD, LD_LIBRARY_PATH, an "
                   "extension's RPATH): grep '%.*s' /proc/%lld/maps; keep one ROCm/CUDA release "
                   "per process",
                (int)strcspn(base, "."), base,
                (long long)json_integer_value(json_object_get(pr, "pid")));
            break;
        }
    }
}

/* ---- holds ---- */

/* The GPU stack a package belongs to, for holds: NVIDIA/CUDA or AMD/ROCm. */
static int nvidia_pkg(const char *name)
{
    return strstr(name, "nvidia") || strstr(name, "cuda") || !strncmp(name, "libcu", 5) ||
           !strncmp(name, "libnv", 5) || !strncmp(name, "libnccl", 7) || strstr(name, "cudnn");
}

static void unheld_family(struct gv_rule_ctx *c, const json_t *pk, int nvidia)
{
    int held = 0, unheld = 0;
    char list[1500] = "";
    size_t used = 0, i;
    json_t *it;
    json_array_foreach(jarr(pk, "items"), i, it) {
        const char *n = jstr(it, "name");
        if (!n || !jbool(it, "gpu") || nvidia_pkg(n) != nvidia)
            continue;
        if (jbool(it, "hold")) {
            held++;
            continue;
        }
        unheld++;
        if (used + strlen(n) + 2 < sizeof list - 8 && !strpbrk(n, " '\"$`\\;&|"))
            used += (size_t)snprintf(list + used, sizeof list - used, "%s%s", used ? " " : "", n);
    }
    if (!held || !unheld)
        return;
    json_t *f = finding(c, GV_SEV_WARNING,
                        "%d %s package%s held but %d %s not: an upgrade moves the unheld ones "
                        "and breaks the pinned combination",
                        held, nvidia ? "NVIDIA/CUDA" : "ROCm/AMD GPU", held == 1 ? " is" : "s are",
                        unheld, unheld == 1 ? "is" : "are");
    evidencef(f, "packages.items[gpu=true]", "%d held, %d not held: %s", held, unheld, list);
    const char *mgr = jstr(pk, "manager");
    if (mgr && !strcmp(mgr, "rpm"))
        fix(f, "sudo dnf versionlock add %s", list);
    else
        fix(f, "sudo apt-mark hold %s", list);
}

static void check_unheld_packages(struct gv_rule_ctx *c)
{
    const json_t *pk = need(c, "packages");
    if (!pk)
        return;
    unheld_family(c, pk, 0);
    unheld_family(c, pk, 1);
}

/* ---- visibility ---- */

/* Count the entries of a *_VISIBLE_DEVICES list that can select one of n GPUs.
 * Indices >= n select nothing; UUIDs (GPU-...) are assumed to select one. */
static int visible_count(const char *v, int n)
{
    int count = 0;
    for (const char *p = v; *p;) {
        size_t len = strcspn(p, ",");
        if (len > 0) {
            char *end;
            long idx = strtol(p, &end, 10);
            if (end == p + len && end != p) {
                if (idx >= 0 && (n < 0 || idx < n))
                    count++;
                else if (idx < 0)
                    break; /* CUDA: -1 and everything after it hide the rest */
            } else if (!strncmp(p, "GPU-", 4) || !strncmp(p, "MIG-", 4)) {
                count++;
            }
        }
        p += len;
        if (*p == ',')
            p++;
    }
    return count;
}

static void visible_one(struct gv_rule_ctx *c, const char *name, const char *vendor)
{
    char path[256];
    const char *v = env_get(c->snap, name, path, sizeof path);
    if (!v)
        return;
    int n = !strcmp(vendor, "amd") ? amd_compute_gpus(c->snap) : count_gpus(c->snap, vendor);
    if (n == 0)
        return; /* no GPU of that vendor: the variable hides nothing */
    int vis = visible_count(v, n);
    if (vis > 0)
        return;
    json_t *f = finding(c, GV_SEV_ERROR,
                        "%s=\"%s\" hides every %s GPU (torch.cuda.is_available() is False)",
                        name, v, !strcmp(vendor, "amd") ? "AMD" : "NVIDIA");
    evidence_str(f, path, v);
    if (n > 0)
        evidencef(f, "gpus.devices", "%d %s GPU(s)", n, vendor);
    fix(f, "unset %s   (or list the GPUs to use, e.g. %s=0)", name, name);
    char file[256];
    if (profile_file(path, file, sizeof file))
        fix(f, "and remove it from %s", file);
}

static void check_visible_devices(struct gv_rule_ctx *c)
{
    if (!need(c, "environment"))
        return;
    int amd = amd_compute_gpus(c->snap);
    visible_one(c, "HIP_VISIBLE_DEVICES", "amd");
    visible_one(c, "ROCR_VISIBLE_DEVICES", "amd");
    visible_one(c, "GPU_DEVICE_ORDINAL", "amd");
    /* HIP honours CUDA_VISIBLE_DEVICES as an alias, so it hides AMD GPUs too */
    visible_one(c, "CUDA_VISIBLE_DEVICES", amd > 0 ? "amd" : "nvidia");
    char p1[256], p2[256];
    const char *rocr = env_get(c->snap, "ROCR_VISIBLE_DEVICES", p1, sizeof p1);
    const char *hip = env_get(c->snap, "HIP_VISIBLE_DEVICES", p2, sizeof p2);
    if (!hip)
        hip = env_get(c->snap, "CUDA_VISIBLE_DEVICES", p2, sizeof p2);
    if (rocr && hip && amd != 0) {
        json_t *f = finding(c, GV_SEV_WARNING,
                            "ROCR_VISIBLE_DEVICES and HIP/CUDA_VISIBLE_DEVICES are both set: "
                            "HIP indexes the GPUs ROCr left, and vLLM/verl refuse this");
        evidence_str(f, p1, rocr);
        evidence_str(f, p2, hip);
        fix(f, "keep one of them: unset HIP_VISIBLE_DEVICES CUDA_VISIBLE_DEVICES (and select "
               "with ROCR_VISIBLE_DEVICES only)");
    }
}

/* This area's doctor rules, in report order (rules.c joins the areas). */
const struct gv_rule gv_rules_env[] = {
    {"numerics-env", GV_SEV_WARNING, "environment variables that change numerics or kernel choice",
     check_numerics_env, "docs/facts/rocm-facts.md §6", "docs/doctor.md origin 10"},
    {"debug-env", GV_SEV_WARNING, "debugging switches left on (slower, serialised)",
     check_debug_env, "docs/facts/rocm-facts.md §6; docs/facts/anchor-tools.md §2.2",
     "DCGM software check"},
    {"tooling-env", GV_SEV_WARNING, "profiler/debugger injection variables are set",
     check_tooling_env, "docs/facts/anchor-tools.md §2.2 (DCGM Environmental Variables)",
     "DCGM software check"},
    {"visible-devices", GV_SEV_ERROR, "*_VISIBLE_DEVICES hides GPUs", check_visible_devices,
     "docs/facts/rocm-facts.md §6 (visibility), §8 (No HIP GPUs are available)", "DCGM software check"},
    {"ldcache-stale", GV_SEV_ERROR,
     "/etc/ld.so.cache disagrees with the library directories (ldconfig not run)",
     check_ldcache_stale, "ld.so(8) search order; ldconfig(8)", "gpuvet"},
    {"cuda-stub", GV_SEV_ERROR, "the CUDA toolkit's stub libcuda is on the loader path",
     check_cuda_stub, "docs/snapshot-schema.md (loader.resolved stub)", "docs/doctor.md origin 11"},
    {"cuda-driver", GV_SEV_ERROR, "a CUDA runtime newer than the NVIDIA driver supports",
     check_cuda_driver, "NVIDIA CUDA Toolkit Release Notes (minor version compatibility)",
     "docs/doctor.md origin 11"},
    {"process-libs", GV_SEV_ERROR, "a process mapped two copies of one GPU library",
     check_process_libs, "docs/facts/rocm-facts.md §4b", "docs/doctor.md origin 12"},
    {"unheld-packages", GV_SEV_WARNING, "some GPU-stack packages are held, others are not",
     check_unheld_packages,
     "docs/seeds/seed-000.txt (apt-mark hold); docs/facts/anchor-tools.md §7.1",
     "docs/doctor.md origin 13"},
};
const size_t gv_rules_env_n = sizeof gv_rules_env / sizeof gv_rules_env[0];
