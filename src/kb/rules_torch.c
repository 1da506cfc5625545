/* Rules about the PyTorch build: vendor, ROCm release, gfx targets, companions. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kb/rules_impl.h"

/* torch's build kind: the snapshot's "build", else inferred from torch.version. */
static const char *torch_build(const json_t *torch)
{
    const char *b = jstr(torch, "build");
    if (b)
        return b;
    if (jstr(torch, "hip"))
        return "rocm";
    if (jstr(torch, "cuda"))
        return "cuda";
    const char *label = kb_local_label(jstr(torch, "version"));
    if (label && !strncmp(label, "rocm", 4))
        return "rocm";
    if (label && !strncmp(label, "cu", 2))
        return "cuda";
    return jstr(torch, "version") ? "cpu" : NULL;
}

/* "gfx1030" -> "10.3.0" (the HSA_OVERRIDE_GFX_VERSION spelling). */
static const char *gfx_to_override(const char *gfx, char *buf, size_t size)
{
    size_t n = gfx ? strlen(gfx) : 0;
    if (n < 6 || strncmp(gfx, "gfx", 3) != 0)
        return NULL;
    char major[8];
    snprintf(major, sizeof major, "%.*s", (int)(n - 5), gfx + 3);
    char mi[2] = {gfx[n - 2], 0}, st[2] = {gfx[n - 1], 0};
    snprintf(buf, size, "%s.%lu.%lu", major, strtoul(mi, NULL, 16), strtoul(st, NULL, 16));
    return buf;
}

struct wheel_pick {
    char spec[96];           /* torch==2.3.0+rocm6.0 or torch==2.5.* */
    char variant[16];        /* "6.0" */
    const struct kb_torch_line *line;
};

static int wheel_has(const char *torch, const char *variant, const char *gfx)
{
    if (!gfx)
        return 1;
    const struct kb_wheel_arch *w = kb_wheel_arch(torch, variant);
    return w && kb_arch_in_list(w->archs, gfx);
}

/* The amdgpu-dkms driver's KMD row, when known. */
static const struct kb_kmd *kmd_of(const json_t *snap)
{
    const json_t *drv = section(snap, "drivers");
    char rel[32];
    const char *dv = jstr(jobj(jobj(drv, "dkms"), "amdgpu-dkms"), "version");
    return dv && kb_release_from_pkgver(dv, rel, sizeof rel) ? kb_kmd(rel) : NULL;
}

/* The newest variant of line t that the driver supports (any when k is NULL). */
static const char *variant_in_window(const struct kb_torch_line *t, const struct kb_kmd *k)
{
    for (int i = KB_MAX_VARIANTS; i-- > 0;)
        if (t->rocm[i] && (!k || kb_kmd_supports(k, t->rocm[i])))
            return t->rocm[i];
    return NULL;
}

/* The wheel to install: keep the installed torch version when it has a variant
 * for the system's ROCm line (and gfx); else the newest line with a variant for
 * that ROCm line; else the newest line with a variant the kernel driver
 * supports; else the newest line's stable variant. Lines must carry gfx. */
static int pick_wheel(const json_t *snap, const char *cur_public, const char *gfx,
                      struct wheel_pick *p)
{
    char mm[16];
    const json_t *in = default_rocm(snap, NULL);
    const char *rocm = in ? kb_major_minor(jstr(in, "version"), mm, sizeof mm) : NULL;
    const struct kb_torch_line *cur = kb_torch_line(cur_public);
    const char *v = rocm ? kb_torch_variant(cur, rocm) : NULL;
    if (cur && v && wheel_has(cur->torch, v, gfx)) {
        snprintf(p->spec, sizeof p->spec, "torch==%s+rocm%s", cur_public, v);
        snprintf(p->variant, sizeof p->variant, "%s", v);
        p->line = cur;
        return 0;
    }
    const struct kb_kmd *k = kmd_of(snap);
    size_t n;
    const struct kb_torch_line *t = kb_torch_lines(&n);
    for (int pass = 0; pass < 3; pass++) {
        for (size_t i = n; i-- > 0;) {
            v = pass == 0   ? (rocm ? kb_torch_variant(&t[i], rocm) : NULL)
                : pass == 1 ? (k ? variant_in_window(&t[i], k) : NULL)
                            : kb_torch_variant(&t[i], t[i].stable_rocm);
            if (!v || !wheel_has(t[i].torch, v, gfx) || !kb_wheel_arch(t[i].torch, v))
                continue;
            snprintf(p->spec, sizeof p->spec, "torch==%s.*", t[i].torch);
            snprintf(p->variant, sizeof p->variant, "%s", v);
            p->line = &t[i];
            return 0;
        }
    }
    return -1;
}

static int has_pkg(const json_t *env, const char *name)
{
    return jobj(jobj(env, "packages"), name) != NULL;
}

static void add_wheel_fix(json_t *f, const json_t *env, const struct wheel_pick *p)
{
    char pip[600];
    pip_cmd(env, pip, sizeof pip);
    char extra[64] = "";
    int tv = has_pkg(env, "torchvision") && p->line->torchvision;
    if (tv)
        snprintf(extra, sizeof extra, " torchvision==%s.*", p->line->torchvision);
    fix(f, "%s uninstall -y torch%s%s", pip, has_pkg(env, "torchvision") ? " torchvision" : "",
        has_pkg(env, "torchaudio") ? " torchaudio" : "");
    fix(f, "%s install --index-url %s%s %s%s%s", pip, KB_WHEEL_INDEX, p->variant, p->spec, extra,
        has_pkg(env, "torchaudio") ? " torchaudio" : "");
}

/* When the pick changes the torch line, offer to keep the installed line with
 * its own newest ROCm variant the driver supports: official wheels bundle
 * their ROCm user space, so the system ROCm does not have to match. */
static void keep_line_fix(json_t *f, const json_t *snap, const json_t *env, const char *pub,
                          const char *gfx, const struct wheel_pick *p)
{
    const struct kb_torch_line *cur = kb_torch_line(pub);
    if (!cur || cur == p->line)
        return;
    const char *v = variant_in_window(cur, kmd_of(snap));
    if (!v || !wheel_has(cur->torch, v, gfx))
        return;
    char pip[600];
    fix(f, "or keep torch %s: %s install --index-url %s%s torch==%s+rocm%s (the wheel bundles "
           "its own ROCm %s user space)",
        cur->torch, pip_cmd(env, pip, sizeof pip), KB_WHEEL_INDEX, v, pub, v, v);
}

static void env_path(char *buf, size_t size, size_t i, const char *rest)
{
    snprintf(buf, size, "python.environments[%zu].%s", i, rest);
}

/* Calls fn for every Python environment with torch. */
#define FOREACH_TORCH(py, i, env, torch)                                                     \
    json_array_foreach(jarr(py, "environments"), i, env)                                     \
        if (((torch) = jobj(env, "torch")) != NULL)

static const char *first_amd_gfx(const json_t *snap, char *buf, size_t size)
{
    const json_t *gpus = section(snap, "gpus");
    size_t i;
    json_t *d;
    json_array_foreach(jarr(gpus, "devices"), i, d)
        if (is_vendor(d, "amd") && dev_gfx(d, buf, size))
            return buf;
    return NULL;
}

static void check_torch_build(struct gv_rule_ctx *c)
{
    const json_t *py = need(c, "python");
    if (!py)
        return;
    int amd = amd_compute_gpus(c->snap), nv = count_gpus(c->snap, "nvidia");
    const json_t *rocm = default_rocm(c->snap, NULL);
    size_t i;
    json_t *env;
    const json_t *torch;
    FOREACH_TORCH(py, i, env, torch) {
        const char *build = torch_build(torch);
        const char *ver = jstr(torch, "version");
        if (!build)
            continue;
        char path[128], pub[64], gfx[32];
        env_path(path, sizeof path, i, "torch.version");
        kb_public_version(ver, pub, sizeof pub);
        if (nv > 0 && amd > 0 && strcmp(build, "cpu") != 0)
            continue; /* both vendors: a ROCm or a CUDA build each has its GPU */
        if ((amd > 0 || (amd < 0 && rocm)) && strcmp(build, "rocm") != 0) {
            json_t *f = finding(
                c, amd > 0 ? GV_SEV_ERROR : GV_SEV_WARNING,
                "torch %s in %s is a %s build: on this AMD %s torch.cuda.is_available() is "
                "False",
                ver ? ver : "?", jstr(env, "prefix") ? jstr(env, "prefix") : "?",
                !strcmp(build, "cuda") ? "CUDA" : "CPU-only",
                amd > 0 ? "machine" : "ROCm install (GPUs not collected)");
            evidence_str(f, path, ver);
            env_path(path, sizeof path, i, "torch.build");
            evidence_str(f, path, build);
            if (rocm)
                evidence_str(f, "stacks.installs[default].version", jstr(rocm, "version"));
            struct wheel_pick p;
            const char *g = first_amd_gfx(c->snap, gfx, sizeof gfx);
            if (!pick_wheel(c->snap, pub, g, &p)) {
                add_wheel_fix(f, env, &p);
                keep_line_fix(f, c->snap, env, pub, g, &p);
                char pip[600];
                pip_cmd(env, pip, sizeof pip);
                fix(f, "check: %.*s -c 'import torch; print(torch.version.hip, "
                       "torch.cuda.is_available())'",
                    (int)(strlen(pip) - strlen(" -m pip")), pip);
            } else {
                fix(f, "install a ROCm build of torch: pip install --index-url "
                       "https://download.pytorch.org/whl/rocmX.Y torch (the kb has no wheel "
                       "line for this GPU/ROCm)");
            }
        } else if (nv > 0 && amd <= 0 && strcmp(build, "cuda") != 0) {
            json_t *f = finding(c, GV_SEV_ERROR,
                                "torch %s is a %s build on an NVIDIA machine: "
                                "torch.cuda.is_available() is False",
                                ver ? ver : "?", !strcmp(build, "rocm") ? "ROCm" : "CPU-only");
            evidence_str(f, path, ver);
            char pip[600];
            fix(f, "%s uninstall -y torch", pip_cmd(env, pip, sizeof pip));
            fix(f, "%s install --index-url https://download.pytorch.org/whl/cuXYZ torch==%s "
                   "(XYZ: a CUDA line your driver supports; the kb has no CUDA wheel matrix)",
                pip, pub);
        }
    }
}

static int soname_major(const char *soname)
{
    const char *p = soname ? strstr(soname, ".so.") : NULL;
    return p ? kb_major(p + 4) : -1;
}

static const json_t *bundled(const json_t *torch, const char *name)
{
    size_t i;
    json_t *b;
    json_array_foreach(jarr(torch, "bundled_libraries"), i, b)
        if (jstr(b, "name") && !strcmp(jstr(b, "name"), name))
            return b;
    return NULL;
}

static void runtime_unbundled(struct gv_rule_ctx *c, size_t i, const json_t *torch,
                              const char *want)
{
    const char *soname = kb_soname_for(kb_soname("hip-runtime"), kb_major(want));
    if (!soname)
        return;
    const json_t *ld = need(c, "loader");
    if (!ld)
        return;
    const json_t *r = jobj(jobj(ld, "resolved"), soname);
    char path[160];
    env_path(path, sizeof path, i, "torch.hip");
    if (!r || !jstr(r, "path")) {
        json_t *f = finding(c, GV_SEV_ERROR,
                            "torch (built for ROCm %s, not bundling its runtime) needs %s, which "
                            "the loader cannot find: import torch fails",
                            want, soname);
        evidence_str(f, path, jstr(torch, "hip"));
        evidence(f, "loader.search_dirs", json_object_get(ld, "search_dirs"));
        fix(f, "install ROCm %s (it provides %s) or put its lib directory in "
               "/etc/ld.so.conf.d/rocm.conf and run sudo ldconfig",
            want, soname);
        return;
    }
    const char *got = release_of_path(c->snap, jstr(r, "path"));
    if (!got || kb_vercmp_n(got, want, 2) == 0)
        return;
    json_t *f = finding(c, GV_SEV_WARNING,
                        "torch was built for ROCm %s but the loader resolves %s from ROCm %s",
                        want, soname, got);
    evidence_str(f, path, jstr(torch, "hip"));
    char rp[128];
    snprintf(rp, sizeof rp, "loader.resolved.%s", soname);
    evidence(f, rp, r);
    fix(f, "make ROCm %s the runtime the loader finds (LD_LIBRARY_PATH / ld.so.conf), or "
           "install a torch built for ROCm %s",
        want, got);
}

static void check_torch_runtime(struct gv_rule_ctx *c)
{
    const json_t *py = section(c->snap, "python");
    size_t i;
    json_t *env;
    const json_t *torch;
    FOREACH_TORCH(py, i, env, torch) {
        const char *b = torch_build(torch);
        char want[32];
        if (!b || strcmp(b, "rocm") != 0 || !torch_rocm(torch, want, sizeof want))
            continue;
        const json_t *hip = bundled(torch, "hip-runtime");
        if (!hip) {
            runtime_unbundled(c, i, torch, want);
            continue;
        }
        int major = soname_major(jstr(hip, "soname"));
        if (major < 0 || major == kb_major(want))
            continue; /* RPATH=$ORIGIN: the bundled copy loads, whatever the system has */
        json_t *f = finding(c, GV_SEV_ERROR,
                            "torch built for ROCm %s bundles a HIP runtime of ROCm %d (%s): "
                            "files in torch/lib were replaced",
                            want, major, jstr(hip, "soname"));
        char path[128];
        env_path(path, sizeof path, i, "torch.bundled_libraries[hip-runtime]");
        evidence(f, path, hip);
        char pub[64], pip[600];
        fix(f, "%s install --force-reinstall --no-deps --index-url %s%s torch==%s",
            pip_cmd(env, pip, sizeof pip), KB_WHEEL_INDEX, want,
            kb_public_version(jstr(torch, "version"), pub, sizeof pub));
    }
}

static int is_gpu_lib(const char *path)
{
    static const char *const prefixes[] = {
        "libamdhip64", "libhsa-runtime64", "librocblas", "libhipblas", "libMIOpen", "librccl",
        "libamd_comgr", "libhiprtc", "libcuda.", "libcudart", "libcublas", "libcudnn",
        "libnccl", "libnvrtc",
    };
    const char *base = path ? strrchr(path, '/') : NULL;
    base = base ? base + 1 : path;
    for (size_t i = 0; base && i < sizeof prefixes / sizeof prefixes[0]; i++)
        if (!strncmp(base, prefixes[i], strlen(prefixes[i])))
            return 1;
    return 0;
}

static void check_ld_preload(struct gv_rule_ctx *c)
{
    const json_t *ld = section(c->snap, "loader");
    size_t i;
    json_t *p;
    json_array_foreach(jarr(ld, "ld_preload"), i, p) {
        if (!json_is_string(p) || !is_gpu_lib(json_string_value(p)))
            continue;
        json_t *f = finding(c, GV_SEV_WARNING,
                            "LD_PRELOAD loads %s into every process, before the copies torch "
                            "bundles (which RPATH would otherwise pick)",
                            json_string_value(p));
        char path[64];
        snprintf(path, sizeof path, "loader.ld_preload[%zu]", i);
        evidence(f, path, p);
        fix(f, "unset LD_PRELOAD (or remove %s from it) unless you mean to swap that library",
            json_string_value(p));
    }
}

static void override_advice(json_t *f, const char *gfx, const char *targets)
{
    size_t n;
    const struct kb_override *o = kb_overrides(&n);
    char val[32];
    for (size_t k = 0; k < n; k++) {
        if (strcmp(o[k].real, gfx) != 0 || !kb_arch_in_list(targets, o[k].as) ||
            !gfx_to_override(o[k].as, val, sizeof val))
            continue;
        if (o[k].verdict == KB_OVERRIDE_SAFE)
            fix(f, "or keep this wheel: export HSA_OVERRIDE_GFX_VERSION=%s (safe: %s)", val,
                o[k].note);
        else if (o[k].verdict == KB_OVERRIDE_RISKY)
            fix(f, "HSA_OVERRIDE_GFX_VERSION=%s would run %s code here: risky (%s); if you "
                   "use it, verify results with 'gpuvet check'",
                val, o[k].as, o[k].note);
        else
            fix(f, "do NOT use HSA_OVERRIDE_GFX_VERSION=%s: %s", val, o[k].note);
    }
}

/* The override that applies to device d (per-node first), or NULL. */
static const char *override_for(const json_t *snap, const json_t *d, char *path, size_t size)
{
    json_t *node = json_object_get(jobj(d, "kfd"), "node");
    if (json_is_integer(node)) {
        char name[64];
        snprintf(name, sizeof name, "HSA_OVERRIDE_GFX_VERSION_%lld",
                 (long long)json_integer_value(node));
        const char *v = env_get(snap, name, path, size);
        if (v)
            return v;
    }
    return env_get(snap, "HSA_OVERRIDE_GFX_VERSION", path, size);
}

static void gfx_check_one(struct gv_rule_ctx *c, size_t gi, const json_t *d, const char *gfx,
                          size_t ei, const json_t *env, const json_t *torch)
{
    char targets[1024];
    int from_kb = 0;
    if (!torch_targets(torch, targets, sizeof targets, &from_kb)) {
        json_t *f = finding(c, GV_SEV_INFO,
                            "cannot check: the gfx targets of torch %s are unknown (not "
                            "collected, and the kb has no PYTORCH_ROCM_ARCH row for it)",
                            jstr(torch, "version") ? jstr(torch, "version") : "?");
        json_object_set_new(f, "checked", json_false());
        return;
    }
    if (kb_arch_in_list(targets, gfx))
        return;
    char opath[256], tpath[128], dpath[64];
    const char *ov = override_for(c->snap, d, opath, sizeof opath);
    unsigned a, b, s;
    char as[32] = "";
    if (ov && !kb_parse_override(ov, &a, &b, &s))
        kb_gfx_name(a, b, s, as, sizeof as);
    if (as[0] && kb_arch_in_list(targets, as))
        return; /* runs as another target: the hsa-override rule judges that */
    json_t *f = finding(c, GV_SEV_ERROR,
                        "%s is not compiled into torch %s: GPU work fails with "
                        "hipErrorNoBinaryForGpu / 'invalid device function'",
                        gfx, jstr(torch, "version") ? jstr(torch, "version") : "?");
    snprintf(dpath, sizeof dpath, "gpus.devices[%zu].kfd", gi);
    evidence(f, dpath, jobj(d, "kfd"));
    if (from_kb)
        snprintf(tpath, sizeof tpath, "kb: PYTORCH_ROCM_ARCH of the official wheel");
    else
        env_path(tpath, sizeof tpath, ei, "torch.gpu_targets.targets");
    evidence_str(f, tpath, targets);
    if (ov)
        evidence_str(f, opath, ov);
    struct wheel_pick p;
    char pub[64];
    kb_public_version(jstr(torch, "version"), pub, sizeof pub);
    if (!pick_wheel(c->snap, pub, gfx, &p))
        add_wheel_fix(f, env, &p);
    else
        fix(f, "no official wheel in the kb carries %s: build torch with "
               "PYTORCH_ROCM_ARCH=%s",
            gfx, gfx);
    override_advice(f, gfx, targets);
}

static void check_gfx_not_in_wheel(struct gv_rule_ctx *c)
{
    const json_t *gpus = section(c->snap, "gpus");
    const json_t *py = section(c->snap, "python");
    if (!gpus || !py)
        return; /* torch-build / kernel-driver already say what was not collected */
    size_t gi;
    json_t *d;
    json_array_foreach(jarr(gpus, "devices"), gi, d) {
        char gfx[32];
        if (!is_vendor(d, "amd") || !dev_gfx(d, gfx, sizeof gfx))
            continue;
        size_t ei;
        json_t *env;
        const json_t *torch;
        FOREACH_TORCH(py, ei, env, torch) {
            const char *b = torch_build(torch);
            if (b && !strcmp(b, "rocm"))
                gfx_check_one(c, gi, d, gfx, ei, env, torch);
        }
    }
}

static void tensile_one(struct gv_rule_ctx *c, const char *gfx, const char *rocm,
                        const char *what, const char *path, const json_t *env)
{
    const struct kb_tensile_gap *g = kb_tensile_gap(gfx, rocm);
    if (!g)
        return;
    json_t *f = finding(c, GV_SEV_ERROR,
                        "%s uses ROCm %s, whose rocBLAS has no Tensile kernels for %s: the "
                        "first GEMM aborts ('Cannot read TensileLibrary.dat')",
                        what, rocm, gfx);
    evidence_str(f, path, rocm);
    evidencef(f, "kb: rocBLAS kernel gap", "%s: none from ROCm %s on (%s)", gfx, g->rocm_from,
              g->source);
    reference(f, g->source);
    const struct kb_torch_line *t = kb_torch_for_rocm(g->last_good_rocm);
    const char *v = kb_torch_variant(t, g->last_good_rocm);
    if (env && t && v) {
        char pip[600];
        fix(f, "%s install --force-reinstall --index-url %s%s torch==%s.*",
            pip_cmd(env, pip, sizeof pip), KB_WHEEL_INDEX, v, t->torch);
    } else {
        fix(f, "stay on ROCm %s or older for %s", g->last_good_rocm, gfx);
    }
}

static void check_rocblas_kernels(struct gv_rule_ctx *c)
{
    const json_t *gpus = section(c->snap, "gpus");
    const json_t *py = section(c->snap, "python");
    const json_t *in = default_rocm(c->snap, NULL);
    size_t gi;
    json_t *d;
    json_array_foreach(jarr(gpus, "devices"), gi, d) {
        char gfx[32];
        if (!is_vendor(d, "amd") || !dev_gfx(d, gfx, sizeof gfx))
            continue;
        size_t ei;
        json_t *env;
        const json_t *torch;
        int wheel_bundles = 0;
        FOREACH_TORCH(py, ei, env, torch) {
            char rocm[32], path[128];
            if (!bundled(torch, "rocblas") || !torch_rocm(torch, rocm, sizeof rocm))
                continue;
            wheel_bundles = 1;
            env_path(path, sizeof path, ei, "torch.version");
            tensile_one(c, gfx, rocm, "the torch wheel's bundled rocBLAS", path, env);
        }
        if (in && !wheel_bundles && jstr(in, "version"))
            tensile_one(c, gfx, jstr(in, "version"), "the system ROCm",
                        "stacks.installs[default].version", NULL);
    }
}

static void companion_one(struct gv_rule_ctx *c, size_t ei, const json_t *env,
                          const json_t *torch, const char *name)
{
    const char *tv = jstr(jobj(jobj(env, "packages"), name), "version");
    const char *tver = jstr(torch, "version");
    if (!tv || !tver)
        return;
    const char *tl = kb_local_label(tver), *cl = kb_local_label(tv);
    const struct kb_torch_line *line = kb_torch_line(tver);
    /* Both labelled and different: certainly another build. Only one
     * labelled (a plain PyPI wheel next to an index wheel): likely, not certain. */
    const char *one = tl ? tl : cl; /* the label present when only one is */
    int label_bad = (tl && cl && strcmp(tl, cl) != 0) ||
                    (!tl != !cl && !strncmp(one, "rocm", 4)); /* PyPI has no ROCm builds */
    int label_unsure = !label_bad && (!tl != !cl);
    int line_bad = !strcmp(name, "torchvision") && line && line->torchvision &&
                   kb_vercmp_n(tv, line->torchvision, 2) != 0;
    if (!label_bad && !line_bad && !label_unsure)
        return;
    json_t *f;
    if (label_unsure && !line_bad)
        f = finding(c, GV_SEV_WARNING,
                    "%s %s carries no build label while torch is %s (or the reverse): if the two "
                    "came from different indexes, %s's compiled operators may fail to load",
                    name, tv, tver, name);
    else if (label_bad)
        f = finding(c, GV_SEV_ERROR,
                    "%s %s was built for another torch variant than torch %s (import fails "
                    "with 'undefined symbol' or missing operators)",
                    name, tv, tver);
    else
        f = finding(c, GV_SEV_ERROR, "%s %s does not belong to torch %s (it pairs with %s.x)",
                    name, tv, tver, line->torchvision);
    char path[160];
    env_path(path, sizeof path, ei, "torch.version");
    evidence_str(f, path, tver);
    snprintf(path, sizeof path, "python.environments[%zu].packages.%s.version", ei, name);
    evidence_str(f, path, tv);
    char pip[600], pub[64];
    pip_cmd(env, pip, sizeof pip);
    kb_public_version(tver, pub, sizeof pub);
    const char *idx = tl && !strncmp(tl, "rocm", 4) ? tl + 4 : NULL;
    int cuda_idx = tl && (!strncmp(tl, "cu", 2) || !strcmp(tl, "cpu"));
    char spec[64] = "";
    if (!strcmp(name, "torchvision") && line && line->torchvision)
        snprintf(spec, sizeof spec, "==%s.*", line->torchvision);
    fix(f, "%s uninstall -y %s", pip, name);
    if (idx)
        fix(f, "%s install --index-url %s%s %s%s  (torch==%s stays)", pip, KB_WHEEL_INDEX, idx,
            name, spec, tver);
    else if (cuda_idx)
        fix(f, "%s install --index-url https://download.pytorch.org/whl/%s %s%s  (torch==%s "
               "stays)",
            pip, tl, name, spec, tver);
    else
        fix(f, "%s install %s%s from the same index torch %s came from", pip, name, spec, tver);
}

static void check_torch_companions(struct gv_rule_ctx *c)
{
    const json_t *py = section(c->snap, "python");
    size_t i;
    json_t *env;
    const json_t *torch;
    FOREACH_TORCH(py, i, env, torch) {
        companion_one(c, i, env, torch, "torchvision");
        companion_one(c, i, env, torch, "torchaudio");
    }
}

/* This area's doctor rules, in report order (rules.c joins the areas). */
const struct gv_rule gv_rules_torch[] = {
    {"torch-build", GV_SEV_ERROR, "the torch wheel does not match the GPU vendor (CPU/CUDA build)",
     check_torch_build, "docs/facts/rocm-facts.md §1; docs/seeds/seed-002.txt §3.3",
     "docs/doctor.md origin 3"},
    {"torch-runtime", GV_SEV_ERROR,
     "torch was built for one ROCm release but another runtime will load",
     check_torch_runtime, "docs/facts/rocm-facts.md §4b, §7a", "docs/doctor.md origin 4"},
    {"ld-preload", GV_SEV_WARNING, "LD_PRELOAD forces GPU libraries into every process",
     check_ld_preload, "docs/facts/rocm-facts.md §7a (RPATH, LD_PRELOAD)", "docs/doctor.md origin 4"},
    {"gfx-not-in-wheel", GV_SEV_ERROR, "the GPU's gfx target is not compiled into torch",
     check_gfx_not_in_wheel, "docs/facts/rocm-facts.md §2a, §3, §8 (hipErrorNoBinaryForGpu)",
     "docs/doctor.md origin 5"},
    {"rocblas-kernels", GV_SEV_ERROR, "the ROCm line in use ships no rocBLAS kernels for the GPU",
     check_rocblas_kernels, "docs/facts/rocm-facts.md §2a caveat, §8 (TensileLibrary.dat)",
     "docs/facts/rocm-facts.md §2a"},
    {"torch-companions", GV_SEV_ERROR,
     "torchvision/torchaudio do not match the installed torch build", check_torch_companions,
     "docs/facts/rocm-facts.md §1, §8 (undefined symbol)", "docs/seeds/seed-002.txt §2.3"},
};
const size_t gv_rules_torch_n = sizeof gv_rules_torch / sizeof gv_rules_torch[0];
