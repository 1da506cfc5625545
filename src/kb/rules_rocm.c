/* Rules about the ROCm install: override, driver window, mixed releases,
 * unowned files, /opt/rocm. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kb/rocm_mix.h"
#include "kb/rules_impl.h"

/* ---- HSA_OVERRIDE_GFX_VERSION ---- */

struct ov_var {
    char name[64];
    char value[128];
    char path[256];
    int node;       /* -1 for the global variable */
};

static int collect_override(const char *name, const char *value, const char *path, void *arg)
{
    struct ov_var *vars = arg;
    static const char base[] = "HSA_OVERRIDE_GFX_VERSION";
    if (strncmp(name, base, sizeof base - 1) != 0)
        return 0;
    const char *rest = name + sizeof base - 1;
    int node = -1;
    if (*rest == '_') {
        char *end;
        long n = strtol(rest + 1, &end, 10);
        if (end == rest + 1 || *end || n < 0 || n > 1 << 20)
            return 0;
        node = (int)n;
    } else if (*rest) {
        return 0;
    }
    for (int i = 0; i < 16; i++) {
        if (vars[i].name[0])
            continue;
        snprintf(vars[i].name, sizeof vars[i].name, "%s", name);
        snprintf(vars[i].value, sizeof vars[i].value, "%s", value);
        snprintf(vars[i].path, sizeof vars[i].path, "%s", path);
        vars[i].node = node;
        return 0;
    }
    return 1;
}

/* Is gfx natively in some ROCm torch build of the snapshot? Returns the torch
 * version that has it, or NULL. */
static const char *native_in_torch(const json_t *snap, const char *gfx)
{
    const json_t *py = section(snap, "python");
    size_t i;
    json_t *env;
    json_array_foreach(jarr(py, "environments"), i, env) {
        const json_t *torch = jobj(env, "torch");
        const char *b = jstr(torch, "build");
        char targets[1024];
        int from_kb;
        if (!torch || (b && strcmp(b, "rocm") != 0) || (!b && !jstr(torch, "hip")))
            continue;
        if (torch_targets(torch, targets, sizeof targets, &from_kb) &&
            kb_arch_in_list(targets, gfx))
            return jstr(torch, "version");
    }
    return NULL;
}

static void override_device(struct gv_rule_ctx *c, const struct ov_var *v, size_t gi,
                            const json_t *d, const char *real, const char *as)
{
    const struct kb_gpu *rg = kb_gpu_by_gfx(real), *ag = kb_gpu_by_gfx(as);
    const struct kb_override *o = kb_override(real, as);
    const char *native = native_in_torch(c->snap, real);
    char dpath[64];
    snprintf(dpath, sizeof dpath, "gpus.devices[%zu].kfd", gi);
    json_t *f = NULL;
    if (!strcmp(real, as)) {
        f = finding(c, GV_SEV_INFO, "%s=%s names the GPU's own target %s: it has no effect",
                    v->name, v->value, real);
    } else if (o && o->verdict == KB_OVERRIDE_UNSAFE) {
        f = finding(c, GV_SEV_ERROR, "%s=%s makes %s run %s code: unsafe (%s)", v->name,
                    v->value, real, as, o->note);
        reference(f, o->source);
    } else if (!o && (!rg || !ag || strcmp(rg->isa, ag->isa) != 0)) {
        f = finding(c, GV_SEV_ERROR,
                    "%s=%s makes %s (%s) run %s (%s) code: another ISA family (page faults, "
                    "hangs or wrong results)",
                    v->name, v->value, real, rg ? rg->family : "unknown", as,
                    ag ? ag->family : "unknown");
    } else if (native) {
        f = finding(c, o && o->verdict == KB_OVERRIDE_SAFE ? GV_SEV_WARNING : GV_SEV_ERROR,
                    "%s=%s is set although torch %s has native %s kernels: it loads %s code "
                    "instead",
                    v->name, v->value, native, real, as);
    } else if (o && o->verdict == KB_OVERRIDE_RISKY) {
        f = finding(c, GV_SEV_WARNING, "%s=%s on %s is risky: %s", v->name, v->value, real,
                    o->note);
        reference(f, o->source);
    } else if (!o) {
        f = finding(c, GV_SEV_WARNING,
                    "%s=%s makes %s run %s code: same family, but not a pair the kb knows to "
                    "be safe",
                    v->name, v->value, real, as);
    } else {
        f = finding(c, GV_SEV_INFO, "%s=%s on %s: a known-safe pair (%s)", v->name, v->value,
                    real, o->note);
        reference(f, o->source);
    }
    evidence_str(f, v->path, v->value);
    evidence(f, dpath, jobj(d, "kfd"));
    if (!strcmp(jstr(f, "severity"), "info") && strcmp(real, as) != 0)
        return;
    fix(f, "unset %s   (and remove it from the shell profile or /etc/profile.d file that "
           "sets it)",
        v->name);
    const char *first = kb_first_torch_with_arch(real);
    if (strcmp(real, as) != 0 && first)
        fix(f, "install a torch wheel with native %s kernels instead (official wheels carry it "
               "from torch %s on; rule gfx-not-in-wheel computes the command)",
            real, first);
    else if (strcmp(real, as) != 0)
        fix(f, "no official wheel line in the kb carries %s: build torch (and extensions) with "
               "PYTORCH_ROCM_ARCH=%s",
            real, real);
}

static void override_var(struct gv_rule_ctx *c, const struct ov_var *v, const json_t *gpus)
{
    unsigned a, b, s;
    if (kb_parse_override(v->value, &a, &b, &s)) {
        json_t *f = finding(c, GV_SEV_ERROR,
                            "%s=\"%s\" is malformed: libhsakmt rejects it ('%s is invalid') "
                            "and GPU initialisation fails",
                            v->name, v->value, v->value);
        evidence_str(f, v->path, v->value);
        fix(f, "unset %s, or use major.minor.stepping in decimal (e.g. 10.3.0 for gfx1030, "
               "9.0.10 for gfx90a)",
            v->name);
        reference(f, "docs/facts/rocm-facts.md §3 (libhsakmt topology.c sscanf \"%u.%u.%u\")");
        return;
    }
    char as[32];
    kb_gfx_name(a, b, s, as, sizeof as);
    int seen = 0;
    size_t gi;
    json_t *d;
    json_array_foreach(jarr(gpus, "devices"), gi, d) {
        char real[32];
        if (!is_vendor(d, "amd"))
            continue;
        json_t *node = json_object_get(jobj(d, "kfd"), "node");
        if (v->node >= 0 && (!json_is_integer(node) || json_integer_value(node) != v->node))
            continue;
        seen = 1;
        if (!dev_gfx(d, real, sizeof real)) {
            json_t *f = finding(c, GV_SEV_INFO,
                                "cannot check %s=%s: the GPU's real gfx target is unknown (no "
                                "KFD topology in the snapshot)",
                                v->name, v->value);
            json_object_set_new(f, "checked", json_false());
            evidence_str(f, v->path, v->value);
            continue;
        }
        override_device(c, v, gi, d, real, as);
    }
    if (!seen && count_gpus(c->snap, "amd") == 0) {
        json_t *f = finding(c, GV_SEV_INFO, "%s=%s is set but there is no AMD GPU", v->name,
                            v->value);
        evidence_str(f, v->path, v->value);
        fix(f, "unset %s", v->name);
    }
}

/* A global override on GPUs of different targets (docs/facts/rocm-facts.md §3 danger 3). */
static void override_mixed(struct gv_rule_ctx *c, const struct ov_var *vars, const json_t *gpus)
{
    const struct ov_var *global = NULL;
    int per_node = 0;
    for (int i = 0; i < 16 && vars[i].name[0]; i++) {
        if (vars[i].node < 0)
            global = &vars[i];
        else
            per_node = 1;
    }
    if (!global || per_node)
        return;
    char first[32] = "", gfx[32];
    size_t gi;
    json_t *d;
    json_array_foreach(jarr(gpus, "devices"), gi, d) {
        if (!is_vendor(d, "amd") || !dev_gfx(d, gfx, sizeof gfx))
            continue;
        if (!first[0]) {
            snprintf(first, sizeof first, "%s", gfx);
        } else if (strcmp(first, gfx) != 0) {
            json_t *f = finding(c, GV_SEV_WARNING,
                                "%s=%s applies to every GPU, but they are different targets "
                                "(%s and %s)",
                                global->name, global->value, first, gfx);
            evidence_str(f, global->path, global->value);
            fix(f, "use the per-node form HSA_OVERRIDE_GFX_VERSION_<kfd node>=... for the one "
                   "GPU that needs it (ROCm with ROCR commit 84567b64, likely 6.3+), or hide "
                   "the other GPU with ROCR_VISIBLE_DEVICES");
            return;
        }
    }
}

static void check_hsa_override(struct gv_rule_ctx *c)
{
    if (!need(c, "environment"))
        return;
    struct ov_var vars[16];
    memset(vars, 0, sizeof vars);
    env_each(c->snap, collect_override, vars);
    if (!vars[0].name[0])
        return;
    const json_t *gpus = need(c, "gpus");
    if (!gpus) {
        for (int i = 0; i < 16 && vars[i].name[0]; i++) {
            unsigned a, b, s;
            if (kb_parse_override(vars[i].value, &a, &b, &s) == 0)
                continue;
            override_var(c, &vars[i], NULL); /* malformed needs no GPU */
        }
        return;
    }
    for (int i = 0; i < 16 && vars[i].name[0]; i++)
        override_var(c, &vars[i], gpus);
    override_mixed(c, vars, gpus);
}

/* ---- kernel driver window ---- */

static void kmd_one(struct gv_rule_ctx *c, const struct kb_kmd *k, const char *kmd_rel,
                    const char *kmd_path, const char *user, const char *what, const char *upath)
{
    char mm[16];
    if (!user || !kb_major_minor(user, mm, sizeof mm) || kb_kmd_supports(k, mm))
        return;
    json_t *f = finding(c, GV_SEV_WARNING,
                        "%s (ROCm %s) is outside the amdgpu driver %s's supported window "
                        "(ROCm %s to %s)",
                        what, mm, k->kmd, k->user_min, k->user_max);
    evidence_str(f, kmd_path, kmd_rel);
    evidence_str(f, upath, user);
    evidencef(f, "kb: KMD compatibility", "driver %s supports user space %s-%s (%s)", k->kmd,
              k->user_min, k->user_max, k->source);
    fix(f, "install an amdgpu driver whose window covers ROCm %s (sudo amdgpu-install "
           "--usecase=dkms from the repo of that ROCm release), or a ROCm release between %s "
           "and %s",
        mm, k->user_min, k->user_max);
}

static void check_kmd_window(struct gv_rule_ctx *c)
{
    const json_t *drv = section(c->snap, "drivers");
    const json_t *dkms = jobj(jobj(drv, "dkms"), "amdgpu-dkms");
    const json_t *rocm = default_rocm(c->snap, NULL);
    const json_t *py = section(c->snap, "python");
    if (!dkms && !rocm)
        return;
    if (!drv) {
        need(c, "drivers");
        return;
    }
    char rel[32];
    const char *dv = jstr(dkms, "version");
    if (!dv || !kb_release_from_pkgver(dv, rel, sizeof rel)) {
        if (rocm && count_gpus(c->snap, "amd") > 0 && jbool(jobj(jobj(drv, "modules"), "amdgpu"), "loaded")) {
            json_t *f = finding(c, GV_SEV_INFO,
                                "cannot check the driver window: amdgpu is the kernel's own "
                                "(no amdgpu-dkms package); AMD's matrix covers amdgpu-dkms");
            json_object_set_new(f, "checked", json_false());
            evidence(f, "drivers.modules.amdgpu", jobj(jobj(drv, "modules"), "amdgpu"));
        }
        return;
    }
    const struct kb_kmd *k = kb_kmd(rel);
    if (!k) {
        json_t *f = finding(c, GV_SEV_INFO,
                            "cannot check the driver window: the kb has no row for amdgpu "
                            "driver %s",
                            rel);
        json_object_set_new(f, "checked", json_false());
        evidence_str(f, "drivers.dkms.amdgpu-dkms.version", dv);
        return;
    }
    if (rocm)
        kmd_one(c, k, dv, "drivers.dkms.amdgpu-dkms.version", jstr(rocm, "version"),
                "the system ROCm", "stacks.installs[default].version");
    size_t i;
    json_t *env;
    json_array_foreach(jarr(py, "environments"), i, env) {
        const json_t *torch = jobj(env, "torch");
        char want[32], path[128];
        if (!torch || !jarr(torch, "bundled_libraries") || !torch_rocm(torch, want, sizeof want))
            continue;
        snprintf(path, sizeof path, "python.environments[%zu].torch.version", i);
        kmd_one(c, k, dv, "drivers.dkms.amdgpu-dkms.version", want,
                "the torch wheel's bundled ROCm", path);
    }
}

/* ---- mixed releases on the loader path ---- */

struct dir_rel {
    const char *dir;
    const char *release;
    char path[256];
};

/* The release of an AMD-layout install holding dir. A distribution's ROCm
 * lives in the system library directory, which is on every loader path:
 * whether it shadows anything is judged per SONAME (mixed_resolved). */
static const char *dir_release(const json_t *snap, const char *dir)
{
    const json_t *in = install_of_path(snap, dir);
    const char *layout = jstr(in, "layout");
    if (!in || (layout && !strcmp(layout, "distro")))
        return NULL;
    return jstr(in, "version");
}

/* A profile file's value with shell expansions removed:
 * "/opt/rocm-5.7.0/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" -> "/opt/rocm-5.7.0/lib". */
static void strip_shell(const char *v, char *out, size_t size)
{
    size_t o = 0;
    for (const char *p = v; *p && o + 1 < size;) {
        if (p[0] == '$' && p[1] == '{') {
            int depth = 0;
            p++;
            do {
                depth += *p == '{';
                depth -= *p == '}';
                p++;
            } while (*p && depth > 0);
        } else if (p[0] == '$') {
            p++;
            while (*p && (isalnum((unsigned char)*p) || *p == '_'))
                p++;
        } else if (*p == '"' || *p == '\'') {
            p++;
        } else {
            out[o++] = *p++;
        }
    }
    out[o] = '\0';
}

static void mixed_dirs(struct gv_rule_ctx *c, const char *want, const char *want_path)
{
    const json_t *ld = section(c->snap, "loader");
    size_t i, j;
    json_t *dir;
    json_array_foreach(jarr(ld, "ld_library_path"), i, dir) {
        const char *d = json_string_value(dir);
        const char *r = d ? dir_release(c->snap, d) : NULL;
        if (!r || kb_vercmp(r, want) == 0)
            continue;
        json_t *f = finding(c, GV_SEV_ERROR,
                            "LD_LIBRARY_PATH puts ROCm %s (%s) ahead of the default ROCm %s",
                            r, d, want);
        char p[64];
        snprintf(p, sizeof p, "loader.ld_library_path[%zu]", i);
        evidence_str(f, p, d);
        evidence_str(f, want_path, want);
        fix(f, "remove %s from LD_LIBRARY_PATH (shell profile, /etc/profile.d, the service "
               "unit or container env that sets it)",
            d);
    }
    json_t *conf;
    json_array_foreach(jarr(ld, "conf_files"), i, conf) {
        json_array_foreach(jarr(conf, "dirs"), j, dir) {
            const char *d = json_string_value(dir);
            const char *r = d ? dir_release(c->snap, d) : NULL;
            if (!r || kb_vercmp(r, want) == 0)
                continue;
            json_t *f = finding(c, GV_SEV_ERROR,
                                "%s adds ROCm %s (%s) to the loader path next to the default "
                                "ROCm %s",
                                jstr(conf, "path") ? jstr(conf, "path") : "an ld.so.conf file",
                                r, d, want);
            char p[96];
            snprintf(p, sizeof p, "loader.conf_files[%zu].dirs[%zu]", i, j);
            evidence_str(f, p, d);
            evidence_str(f, want_path, want);
            fix(f, "remove the line %s from %s, then run sudo ldconfig", d,
                jstr(conf, "path") ? jstr(conf, "path") : "that file");
        }
    }
    char epath[256];
    const char *prof = env_get(c->snap, "LD_LIBRARY_PATH", epath, sizeof epath);
    if (prof && strstr(epath, "profile_d")) {
        char buf[4096];
        strip_shell(prof, buf, sizeof buf);
        for (char *save, *tok = strtok_r(buf, ":", &save); tok; tok = strtok_r(NULL, ":", &save)) {
            const char *r = dir_release(c->snap, tok);
            if (!r || kb_vercmp(r, want) == 0)
                continue;
            json_t *f = finding(c, GV_SEV_ERROR,
                                "a profile file sets LD_LIBRARY_PATH to ROCm %s (%s) while "
                                "the default ROCm is %s",
                                r, tok, want);
            evidence_str(f, epath, prof);
            evidence_str(f, want_path, want);
            char file[256];
            fix(f, "remove %s from the LD_LIBRARY_PATH line in %s, then log in again", tok,
                profile_file(epath, file, sizeof file) ? file : "the profile file");
        }
    }
}

/* loader.resolved: a SONAME the default release ships resolving into another
 * release (the classic: a 6.0 libamdhip64 next to 5.7's libhsa-runtime64.so.1),
 * judged by the predicate `gpuvet diff` uses too (kb/rocm_mix.h). */
struct mixed_arg {
    struct gv_rule_ctx *c;
    const char *want_path;
};

static void mixed_resolved(const struct gv_rocm_mix *m, void *arg)
{
    struct mixed_arg *a = arg;
    const char *via = jstr(m->resolved, "via");
    if (via && !strcmp(via, "LD_LIBRARY_PATH"))
        return; /* already reported as an LD_LIBRARY_PATH entry */
    json_t *f = finding(a->c, GV_SEV_ERROR, "%s resolves to ROCm %s (%s), not the default %s",
                        m->soname, m->release, m->path, m->reference);
    char path[160];
    snprintf(path, sizeof path, "loader.resolved.%s", m->soname);
    evidence(f, path, m->resolved);
    evidence_str(f, a->want_path, m->reference);
    fix(f, "find what puts %s first (via %s) and remove it; then sudo ldconfig", m->path,
        via ? via : "?");
}

static void check_rocm_mixed_path(struct gv_rule_ctx *c)
{
    int idx = -1;
    const json_t *in = default_rocm(c->snap, &idx);
    if (!in || !jstr(in, "version"))
        return;
    if (!need(c, "loader"))
        return;
    char want_path[64];
    snprintf(want_path, sizeof want_path, "stacks.installs[%d].version", idx);
    mixed_dirs(c, jstr(in, "version"), want_path);
    struct mixed_arg arg = {c, want_path};
    gv_rocm_mixed_each(c->snap, mixed_resolved, &arg);
}

/* ---- unowned files ---- */

/* The ROCm major a library file belongs to by its SONAME, when only one
 * major uses that SONAME (§4b); -1 otherwise. */
static int major_by_soname(const char *soname)
{
    unsigned m = kb_soname_majors(soname);
    for (int major = 5; major <= 7; major++)
        if (m == 1u << major)
            return major;
    return -1;
}

static void check_rocm_unowned(struct gv_rule_ctx *c)
{
    const json_t *libs = need(c, "libraries");
    if (!libs)
        return;
    const json_t *pk = section(c->snap, "packages");
    const char *mgr = jstr(pk, "manager");
    int rpm = mgr && !strcmp(mgr, "rpm");
    size_t i;
    json_t *it;
    json_array_foreach(jarr(libs, "items"), i, it) {
        if (!jbool(it, "unowned"))
            continue;
        const char *p = jstr(it, "path");
        const json_t *in = p ? install_of_path(c->snap, p) : NULL;
        const char *home = in ? jstr(in, "version") : NULL;
        const char *rel = jstr(it, "rocm_release");
        char by_soname[16] = "";
        int sm = major_by_soname(jstr(it, "soname"));
        if (!rel && sm >= 0) {
            snprintf(by_soname, sizeof by_soname, "%d", sm);
            rel = by_soname;
        }
        int foreign = rel && home &&
                      (by_soname[0] ? kb_major(home) != sm : kb_vercmp_n(rel, home, 2) != 0);
        json_t *f;
        if (foreign)
            f = finding(c, GV_SEV_ERROR,
                        "%s belongs to ROCm %s%s but sits in the ROCm %s tree and no package "
                        "owns it (a leftover of an upgrade or rollback)",
                        p, rel, by_soname[0] ? ".x (by its SONAME)" : "", home);
        else
            f = finding(c, GV_SEV_WARNING,
                        "%s is in a package-managed GPU directory but no package owns it", p);
        char path[64];
        snprintf(path, sizeof path, "libraries.items[%zu]", i);
        evidence(f, path, it);
        if (by_soname[0])
            evidencef(f, "kb: SONAME", "%s is the ROCm %d SONAME (docs/facts/rocm-facts.md §4b)",
                      jstr(it, "soname"), sm);
        fix(f, "confirm: %s %s", rpm ? "rpm -qf" : "dpkg -S", p);
        fix(f, "move it aside: sudo mkdir -p /root/gpuvet-quarantine && sudo mv %s "
               "/root/gpuvet-quarantine/ && sudo ldconfig",
            p);
    }
}

/* ---- /opt/rocm vs rocm-core ---- */

static void check_rocm_link(struct gv_rule_ctx *c)
{
    const json_t *st = need(c, "stacks");
    if (!st)
        return;
    const json_t *link = jobj(st, "rocm_link");
    const json_t *core = jobj(st, "rocm_core");
    if (!link)
        return;
    const char *resolved = jstr(link, "resolved");
    const json_t *in = resolved ? install_of_path(c->snap, resolved) : NULL;
    if (resolved && in && jstr(in, "prefix") && strcmp(jstr(in, "prefix"), resolved) != 0)
        in = NULL;
    const char *target_ver = in ? jstr(in, "version") : NULL;
    if (!resolved || !in) {
        json_t *f = finding(c, GV_SEV_ERROR, "/opt/rocm does not resolve to a ROCm install%s",
                            resolved ? "" : " (dangling or looping link)");
        evidence(f, "stacks.rocm_link", link);
        fix(f, "sudo update-alternatives --config rocm   (or sudo ln -sfn /opt/rocm-X.Y.Z "
               "/opt/rocm)");
        return;
    }
    char rel[32];
    const char *cv = jstr(core, "version");
    if (!cv || !kb_release_from_pkgver(cv, rel, sizeof rel) || !target_ver ||
        kb_vercmp_n(rel, target_ver, 3) == 0)
        return;
    json_t *f = finding(c, GV_SEV_ERROR,
                        "/opt/rocm points at ROCm %s but the installed %s is %s: tools and "
                        "ld.so.conf entries under /opt/rocm use the wrong release",
                        target_ver, jstr(core, "package") ? jstr(core, "package") : "rocm-core",
                        rel);
    evidence(f, "stacks.rocm_link", link);
    evidence(f, "stacks.rocm_core", core);
    const json_t *alt = jobj(jobj(st, "alternatives"), "rocm");
    char prefix[64];
    snprintf(prefix, sizeof prefix, "/opt/rocm-%s", rel);
    const json_t *want = install_of_path(c->snap, prefix);
    if (want && jstr(want, "prefix"))
        snprintf(prefix, sizeof prefix, "%s", jstr(want, "prefix"));
    if (alt)
        fix(f, "sudo update-alternatives --set rocm %s", prefix);
    else
        fix(f, "sudo ln -sfn %s /opt/rocm", prefix);
    fix(f, "sudo ldconfig");
}

/* ---- ROCM_PATH / HIP_PATH pointing at another release ---- */

static void path_var(struct gv_rule_ctx *c, const char *name, const char *want,
                     const char *want_path)
{
    char path[256], clean[1024];
    const char *v = env_get(c->snap, name, path, sizeof path);
    if (!v)
        return;
    strip_shell(v, clean, sizeof clean);
    const json_t *in = install_of_path(c->snap, clean);
    const char *rel = in ? jstr(in, "version") : NULL;
    if (!rel || kb_vercmp(rel, want) == 0)
        return;
    json_t *f = finding(c, GV_SEV_WARNING,
                        "%s=%s selects ROCm %s while /opt/rocm is ROCm %s: hipcc, CMake and "
                        "torch.utils.cpp_extension build against %s",
                        name, v, rel, want, rel);
    evidence_str(f, path, v);
    evidence_str(f, want_path, want);
    char file[256];
    if (profile_file(path, file, sizeof file))
        fix(f, "set %s=/opt/rocm in %s (or the release you mean), then log in again", name,
            file);
    else
        fix(f, "export %s=/opt/rocm   (or unset it)", name);
}

static void check_rocm_path_env(struct gv_rule_ctx *c)
{
    int idx = -1;
    const json_t *in = default_rocm(c->snap, &idx);
    if (!in || !jstr(in, "version") || !section(c->snap, "environment"))
        return;
    char want_path[64];
    snprintf(want_path, sizeof want_path, "stacks.installs[%d].version", idx);
    path_var(c, "ROCM_PATH", jstr(in, "version"), want_path);
    path_var(c, "ROCM_HOME", jstr(in, "version"), want_path);
    path_var(c, "HIP_PATH", jstr(in, "version"), want_path);
}

/* ---- GPUs next to this ROCm release ---- */

static void check_igpu_dgpu(struct gv_rule_ctx *c)
{
    const json_t *gpus = section(c->snap, "gpus");
    const json_t *apu = NULL, *dgpu = NULL;
    char gfx[32], agfx[32] = "", dgfx[32] = "";
    size_t i;
    json_t *d;
    json_array_foreach(jarr(gpus, "devices"), i, d) {
        if (!is_vendor(d, "amd") || !dev_gfx(d, gfx, sizeof gfx))
            continue;
        const struct kb_gpu *g = kb_gpu_by_gfx(gfx);
        if (!g)
            continue;
        if (g->apu && !apu) {
            apu = d;
            snprintf(agfx, sizeof agfx, "%s", gfx);
        } else if (!g->apu && !dgpu) {
            dgpu = d;
            snprintf(dgfx, sizeof dgfx, "%s", gfx);
        }
    }
    if (!apu || !dgpu)
        return;
    json_t *f = finding(c, GV_SEV_WARNING,
                        "integrated %s next to discrete %s: the ROCm runtime may crash even "
                        "when told to skip the iGPU",
                        agfx, dgfx);
    evidence(f, "gpus.devices (integrated)", apu);
    evidence(f, "gpus.devices (discrete)", dgpu);
    fix(f, "disable the integrated GPU in the BIOS/UEFI setup (AMD's advice)");
    fix(f, "meanwhile hide it from ROCm: export ROCR_VISIBLE_DEVICES=<index of the dGPU>");
}

static void check_rocm_support(struct gv_rule_ctx *c)
{
    const json_t *gpus = section(c->snap, "gpus");
    const json_t *in = default_rocm(c->snap, NULL);
    if (!gpus || !in)
        return;
    const char *ver = jstr(in, "version");
    const struct kb_rocm_support *s = kb_rocm_support(ver);
    if (!s)
        return;
    char gfx[32];
    size_t i;
    json_t *d;
    json_array_foreach(jarr(gpus, "devices"), i, d) {
        if (!is_vendor(d, "amd") || !dev_gfx(d, gfx, sizeof gfx) ||
            kb_arch_in_list(s->archs, gfx))
            continue;
        const struct kb_gpu *g = kb_gpu_by_gfx(gfx);
        json_t *f = finding(c, GV_SEV_INFO,
                            "%s (%s) is not on ROCm %s's official support list: it may work, "
                            "but AMD does not test it",
                            gfx, g ? g->products : "unknown product", ver);
        char path[64];
        snprintf(path, sizeof path, "gpus.devices[%zu].kfd", i);
        evidence(f, path, jobj(d, "kfd"));
        evidence_str(f, "stacks.installs[default].version", ver);
        evidencef(f, "kb: officially supported targets", "ROCm %s: %s (%s)", s->rocm, s->archs,
                  s->source);
    }
}

/* This area's doctor rules, in report order (rules.c joins the areas). */
const struct gv_rule gv_rules_rocm[] = {
    {"hsa-override", GV_SEV_ERROR, "HSA_OVERRIDE_GFX_VERSION is unneeded, unsafe or malformed",
     check_hsa_override, "docs/facts/rocm-facts.md §3", "docs/doctor.md origin 6"},
    {"kmd-window", GV_SEV_WARNING,
     "ROCm user space is outside the kernel driver's supported window", check_kmd_window,
     "docs/facts/rocm-facts.md §5 (user-kernel-space-compat-matrix)", "docs/doctor.md origin 7"},
    {"rocm-mixed-path", GV_SEV_ERROR, "libraries of several ROCm releases on the loader path",
     check_rocm_mixed_path,
     "docs/facts/rocm-facts.md §5; docs/seeds/seed-000.txt (leftover 6.0 libraries)",
     "docs/doctor.md origin 8"},
    {"rocm-unowned", GV_SEV_ERROR, "files in ROCm directories that no package owns",
     check_rocm_unowned, "docs/seeds/seed-000.txt (diff the .so lists after a rollback)",
     "docs/doctor.md origin 8"},
    {"rocm-link", GV_SEV_ERROR, "/opt/rocm points at a release other than the installed rocm-core",
     check_rocm_link, "docs/facts/rocm-facts.md §5 (update-alternatives, .info/version)",
     "docs/doctor.md origin 9"},
    {"rocm-path-env", GV_SEV_WARNING, "ROCM_PATH/HIP_PATH select a release other than /opt/rocm",
     check_rocm_path_env,
     "docs/seeds/seed-000.txt (restore ROCM_PATH in /etc/profile.d/rocm.sh); "
     "docs/facts/rocm-facts.md §5",
     "docs/seeds/seed-000.txt"},
    {"rocm-support", GV_SEV_INFO, "the GPU is not on the ROCm release's official support list",
     check_rocm_support, "docs/facts/rocm-facts.md §2b", "docs/facts/rocm-facts.md §2b"},
    {"igpu-dgpu", GV_SEV_WARNING, "an AMD integrated GPU next to a discrete one",
     check_igpu_dgpu, "docs/facts/rocm-facts.md §5 (disable iGPUs), §3 danger 3",
     "docs/facts/rocm-facts.md §5"},
};
const size_t gv_rules_rocm_n = sizeof gv_rules_rocm / sizeof gv_rules_rocm[0];
