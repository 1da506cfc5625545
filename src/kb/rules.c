/* The doctor rule table, the runner, the report document, and the snapshot
 * helpers the checks share. */
#include "kb/rules.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kb/rules_impl.h"

static const struct gv_rule rules[] = {
    {"gpu-access", GV_SEV_ERROR, "GPU device nodes are not accessible to the user",
     check_gpu_access, "rocm-facts §8 (render group); rocm-install-on-linux prerequisites.rst",
     "issue 4 rule 1"},
    {"kernel-driver", GV_SEV_ERROR, "a GPU is present but its kernel driver is not loaded",
     check_kernel_driver, "rocm-facts §5, §8", "issue 4 rule 2"},
    {"nouveau", GV_SEV_ERROR, "an NVIDIA GPU is bound to nouveau", check_nouveau,
     "anchor-tools §2.2 (DCGM Denylist)", "DCGM software check"},
    {"no-gpu", GV_SEV_INFO, "no AMD or NVIDIA GPU on the PCI bus", check_no_gpu,
     "docs/snapshot-schema.md (gpus)", "gpuvet"},
    {"torch-build", GV_SEV_ERROR, "the torch wheel does not match the GPU vendor (CPU/CUDA build)",
     check_torch_build, "rocm-facts §1; seed 002 §3.3", "issue 4 rule 3"},
    {"torch-runtime", GV_SEV_ERROR,
     "torch was built for one ROCm release but another runtime will load",
     check_torch_runtime, "rocm-facts §4b, §7a", "issue 4 rule 4"},
    {"ld-preload", GV_SEV_WARNING, "LD_PRELOAD forces GPU libraries into every process",
     check_ld_preload, "rocm-facts §7a (RPATH, LD_PRELOAD)", "issue 4 rule 4"},
    {"gfx-not-in-wheel", GV_SEV_ERROR, "the GPU's gfx target is not compiled into torch",
     check_gfx_not_in_wheel, "rocm-facts §2a, §3, §8 (hipErrorNoBinaryForGpu)",
     "issue 4 rule 5"},
    {"rocblas-kernels", GV_SEV_ERROR, "the ROCm line in use ships no rocBLAS kernels for the GPU",
     check_rocblas_kernels, "rocm-facts §2a caveat, §8 (TensileLibrary.dat)", "rocm-facts §2a"},
    {"torch-companions", GV_SEV_ERROR,
     "torchvision/torchaudio do not match the installed torch build", check_torch_companions,
     "rocm-facts §1, §8 (undefined symbol)", "seed 002 §2.3"},
    {"hsa-override", GV_SEV_ERROR, "HSA_OVERRIDE_GFX_VERSION is unneeded, unsafe or malformed",
     check_hsa_override, "rocm-facts §3", "issue 4 rule 6"},
    {"kmd-window", GV_SEV_WARNING,
     "ROCm user space is outside the kernel driver's supported window", check_kmd_window,
     "rocm-facts §5 (user-kernel-space-compat-matrix)", "issue 4 rule 7"},
    {"rocm-mixed-path", GV_SEV_ERROR, "libraries of several ROCm releases on the loader path",
     check_rocm_mixed_path, "rocm-facts §5; seed 000 (leftover 6.0 libraries)",
     "issue 4 rule 8"},
    {"rocm-unowned", GV_SEV_ERROR, "files in ROCm directories that no package owns",
     check_rocm_unowned, "seed 000 (diff the .so lists after a rollback)", "issue 4 rule 8"},
    {"rocm-link", GV_SEV_ERROR, "/opt/rocm points at a release other than the installed rocm-core",
     check_rocm_link, "rocm-facts §5 (update-alternatives, .info/version)", "issue 4 rule 9"},
    {"rocm-path-env", GV_SEV_WARNING, "ROCM_PATH/HIP_PATH select a release other than /opt/rocm",
     check_rocm_path_env, "seed 000 (restore ROCM_PATH in /etc/profile.d/rocm.sh); rocm-facts §5",
     "seed 000"},
    {"rocm-support", GV_SEV_INFO, "the GPU is not on the ROCm release's official support list",
     check_rocm_support, "rocm-facts §2b", "rocm-facts §2b"},
    {"igpu-dgpu", GV_SEV_WARNING, "an AMD integrated GPU next to a discrete one",
     check_igpu_dgpu, "rocm-facts §5 (disable iGPUs), §3 danger 3", "rocm-facts §5"},
    {"numerics-env", GV_SEV_WARNING, "environment variables that change numerics or kernel choice",
     check_numerics_env, "rocm-facts §6", "issue 4 rule 10"},
    {"debug-env", GV_SEV_WARNING, "debugging switches left on (slower, serialised)",
     check_debug_env, "rocm-facts §6; anchor-tools §2.2", "DCGM software check"},
    {"tooling-env", GV_SEV_WARNING, "profiler/debugger injection variables are set",
     check_tooling_env, "anchor-tools §2.2 (DCGM Environmental Variables)",
     "DCGM software check"},
    {"visible-devices", GV_SEV_ERROR, "*_VISIBLE_DEVICES hides GPUs", check_visible_devices,
     "rocm-facts §6 (visibility), §8 (No HIP GPUs are available)", "DCGM software check"},
    {"ldcache-stale", GV_SEV_ERROR,
     "/etc/ld.so.cache disagrees with the library directories (ldconfig not run)",
     check_ldcache_stale, "ld.so(8) search order; ldconfig(8)", "gpuvet"},
    {"cuda-stub", GV_SEV_ERROR, "the CUDA toolkit's stub libcuda is on the loader path",
     check_cuda_stub, "docs/snapshot-schema.md (loader.resolved stub)", "issue 4 rule 11"},
    {"cuda-driver", GV_SEV_ERROR, "a CUDA runtime newer than the NVIDIA driver supports",
     check_cuda_driver, "NVIDIA CUDA Toolkit Release Notes (minor version compatibility)",
     "issue 4 rule 11"},
    {"process-libs", GV_SEV_ERROR, "a process mapped two copies of one GPU library",
     check_process_libs, "rocm-facts §4b", "issue 4 rule 12"},
    {"unheld-packages", GV_SEV_WARNING, "some GPU-stack packages are held, others are not",
     check_unheld_packages, "seed 000 (apt-mark hold); anchor-tools §7.1", "issue 4 rule 13"},
};

const struct gv_rule *gv_rules(size_t *n)
{
    *n = sizeof rules / sizeof rules[0];
    return rules;
}

const struct gv_rule *gv_rule_find(const char *id)
{
    for (size_t i = 0; id && i < sizeof rules / sizeof rules[0]; i++)
        if (!strcmp(rules[i].id, id))
            return &rules[i];
    return NULL;
}

const char *gv_severity_name(enum gv_severity s)
{
    return s == GV_SEV_ERROR ? "error" : s == GV_SEV_WARNING ? "warning" : "info";
}

static int severity_rank(const json_t *f)
{
    const char *s = jstr(f, "severity");
    return !s ? 0 : !strcmp(s, "error") ? 2 : !strcmp(s, "warning") ? 1 : 0;
}

/* Stable sort: checked findings by severity (most severe first), then the
 * "cannot check" notes. */
static json_t *sorted(json_t *findings)
{
    json_t *out = json_array();
    size_t i;
    json_t *f;
    for (int rank = 2; rank >= 0; rank--)
        json_array_foreach(findings, i, f)
            if (severity_rank(f) == rank && !json_is_false(json_object_get(f, "checked")))
                json_array_append(out, f);
    json_array_foreach(findings, i, f)
        if (json_is_false(json_object_get(f, "checked")))
            json_array_append(out, f);
    json_decref(findings);
    return out;
}

json_t *gv_doctor_run_rule(const json_t *snapshot, const struct gv_rule *rule)
{
    struct gv_rule_ctx c = {.snap = snapshot, .out = json_array(), .rule = rule};
    rule->check(&c);
    return c.out;
}

json_t *gv_doctor_run(const json_t *snapshot)
{
    json_t *all = json_array();
    for (size_t i = 0; i < sizeof rules / sizeof rules[0]; i++) {
        json_t *one = gv_doctor_run_rule(snapshot, &rules[i]);
        json_array_extend(all, one);
        json_decref(one);
    }
    return sorted(all);
}

json_t *gv_doctor_report(const json_t *snapshot, const char *snapshot_source)
{
    json_t *doc = json_object();
    json_object_set_new(doc, "schema", json_string(GV_DOCTOR_SCHEMA));
    json_object_set_new(doc, "schema_version", json_integer(GV_DOCTOR_SCHEMA_VERSION));
    json_object_set_new(doc, "gpuvet_version", json_string(GPUVET_VERSION));
    json_t *snap = json_object();
    json_object_set_new(snap, "source", json_string(snapshot_source ? snapshot_source : "live"));
    const char *root = jstr(snapshot, "root"), *created = jstr(snapshot, "created");
    if (root)
        json_object_set_new(snap, "root", json_string(root));
    if (created)
        json_object_set_new(snap, "created", json_string(created));
    json_object_set_new(doc, "snapshot", snap);

    json_t *findings = gv_doctor_run(snapshot);
    int counts[3] = {0, 0, 0}, unchecked = 0;
    size_t i;
    json_t *f;
    json_array_foreach(findings, i, f) {
        if (json_is_false(json_object_get(f, "checked")))
            unchecked++;
        else
            counts[severity_rank(f)]++;
    }
    json_t *sum = json_object();
    json_object_set_new(sum, "errors", json_integer(counts[2]));
    json_object_set_new(sum, "warnings", json_integer(counts[1]));
    json_object_set_new(sum, "info", json_integer(counts[0]));
    json_object_set_new(sum, "not_checked", json_integer(unchecked));
    json_object_set_new(sum, "rules", json_integer((json_int_t)(sizeof rules / sizeof rules[0])));
    json_object_set_new(doc, "summary", sum);
    json_object_set_new(doc, "findings", findings);
    return doc;
}

/* ---- finding construction ---- */

json_t *finding(struct gv_rule_ctx *c, enum gv_severity sev, const char *fmt, ...)
{
    char title[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(title, sizeof title, fmt, ap);
    va_end(ap);
    json_t *f = json_object();
    json_object_set_new(f, "rule", json_string(c->rule->id));
    json_object_set_new(f, "severity", json_string(gv_severity_name(sev)));
    json_t *t = json_string(title);
    json_object_set_new(f, "title", t ? t : json_string("(title not valid UTF-8)"));
    json_object_set_new(f, "evidence", json_array());
    json_object_set_new(f, "fix", json_array());
    json_object_set_new(f, "reference", json_string(c->rule->reference));
    json_array_append_new(c->out, f);
    return f;
}

void evidence(json_t *f, const char *path, const json_t *value)
{
    json_t *e = json_object();
    json_object_set_new(e, "path", json_string(path));
    json_object_set_new(e, "value", value ? json_deep_copy(value) : json_null());
    json_array_append_new(json_object_get(f, "evidence"), e);
}

void evidence_str(json_t *f, const char *path, const char *value)
{
    json_t *v = value ? json_string(value) : json_null();
    if (!v)
        v = json_string("(not valid UTF-8)");
    evidence(f, path, v);
    json_decref(v);
}

void evidencef(json_t *f, const char *path, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    evidence_str(f, path, buf);
}

void fix(json_t *f, const char *fmt, ...)
{
    char buf[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    json_t *s = json_string(buf);
    if (s)
        json_array_append_new(json_object_get(f, "fix"), s);
}

void reference(json_t *f, const char *ref)
{
    char buf[512];
    /* kb rows cite rocm-facts.md by section ("§6 ..."): say which document */
    if (ref && !strncmp(ref, "§", strlen("§"))) {
        snprintf(buf, sizeof buf, "rocm-facts %s", ref);
        ref = buf;
    }
    json_object_set_new(f, "reference", json_string(ref ? ref : ""));
}

/* ---- snapshot access ---- */

const char *jstr(const json_t *o, const char *key) { return json_string_value(json_object_get(o, key)); }
int jbool(const json_t *o, const char *key) { return json_is_true(json_object_get(o, key)); }
int jhas_false(const json_t *o, const char *key) { return json_is_false(json_object_get(o, key)); }

const json_t *jarr(const json_t *o, const char *key)
{
    json_t *a = json_object_get(o, key);
    return json_is_array(a) ? a : NULL;
}

const json_t *jobj(const json_t *o, const char *key)
{
    json_t *a = json_object_get(o, key);
    return json_is_object(a) ? a : NULL;
}

const json_t *section(const json_t *snap, const char *name)
{
    const json_t *s = jobj(snap, name);
    return s && jbool(s, "collected") ? s : NULL;
}

const json_t *need(struct gv_rule_ctx *c, const char *name)
{
    const json_t *s = section(c->snap, name);
    if (s || c->noted_missing)
        return s;
    c->noted_missing = 1;
    const json_t *raw = jobj(c->snap, name);
    const char *reason = raw ? jstr(raw, "reason") : "section absent";
    json_t *f = finding(c, GV_SEV_INFO, "cannot check: %s not collected (%s)", name,
                        reason ? reason : "no reason given");
    json_object_set_new(f, "checked", json_false());
    evidence(f, name, raw);
    return NULL;
}

int is_vendor(const json_t *dev, const char *vendor)
{
    const char *v = jstr(dev, "vendor");
    if (v)
        return !strcmp(v, vendor);
    const char *id = jstr(dev, "vendor_id");
    return id && !strcmp(id, !strcmp(vendor, "amd") ? "0x1002" : "0x10de");
}

const char *dev_gfx(const json_t *dev, char *buf, size_t size)
{
    const json_t *kfd = jobj(dev, "kfd");
    const char *g = jstr(kfd, "gfx_target");
    if (g && !strncmp(g, "gfx", 3)) {
        snprintf(buf, size, "%.*s", (int)strcspn(g, ":"), g); /* drop ":sramecc+:xnack-" */
        return buf;
    }
    json_t *v = json_object_get(kfd, "gfx_target_version");
    if (json_is_integer(v) && json_integer_value(v) > 0 && json_integer_value(v) < 640000) {
        long n = (long)json_integer_value(v);
        kb_gfx_name((unsigned)(n / 10000 % 100), (unsigned)(n / 100 % 100), (unsigned)(n % 100),
                    buf, size);
        return buf;
    }
    return NULL;
}

int count_gpus(const json_t *snap, const char *vendor)
{
    const json_t *g = section(snap, "gpus");
    if (!g)
        return -1;
    int n = 0;
    size_t i;
    json_t *d;
    json_array_foreach(jarr(g, "devices"), i, d)
        n += is_vendor(d, vendor);
    return n;
}

/* Is any ROCm software installed (a ROCm stack, or a ROCm build of torch)? */
static int uses_rocm(const json_t *snap)
{
    size_t i;
    json_t *x;
    json_array_foreach(jarr(section(snap, "stacks"), "installs"), i, x)
        if (jstr(x, "kind") && !strcmp(jstr(x, "kind"), "rocm"))
            return 1;
    json_array_foreach(jarr(section(snap, "python"), "environments"), i, x) {
        const json_t *t = jobj(x, "torch");
        if (jstr(t, "hip") || (jstr(t, "build") && !strcmp(jstr(t, "build"), "rocm")))
            return 1;
    }
    return 0;
}

int amd_compute_gpus(const json_t *snap)
{
    int amd = count_gpus(snap, "amd");
    if (amd <= 0 || count_gpus(snap, "nvidia") == 0 || uses_rocm(snap))
        return amd;
    int n = 0;
    size_t i;
    json_t *d;
    char gfx[32];
    json_array_foreach(jarr(section(snap, "gpus"), "devices"), i, d) {
        if (!is_vendor(d, "amd") || !dev_gfx(d, gfx, sizeof gfx))
            continue;
        const struct kb_gpu *g = kb_gpu_by_gfx(gfx);
        n += !(g && g->apu);
    }
    return n;
}

const char *env_get(const json_t *snap, const char *name, char *path, size_t size)
{
    const json_t *e = section(snap, "environment");
    const char *v = jstr(jobj(e, "variables"), name);
    if (v) {
        snprintf(path, size, "environment.variables.%s", name);
        return v;
    }
    size_t i;
    json_t *p;
    json_array_foreach(jarr(e, "profile_d"), i, p) {
        v = jstr(jobj(p, "sets"), name);
        if (v) {
            snprintf(path, size, "environment.profile_d[%zu].sets.%s (%s)", i, name,
                     jstr(p, "path") ? jstr(p, "path") : "?");
            return v;
        }
    }
    return NULL;
}

const char *profile_file(const char *path, char *buf, size_t size)
{
    const char *open = path ? strstr(path, " (") : NULL;
    if (!open || !strstr(path, "profile_d"))
        return NULL;
    snprintf(buf, size, "%.*s", (int)strcspn(open + 2, ")"), open + 2);
    return buf;
}

void env_each(const json_t *snap,
              int (*fn)(const char *name, const char *value, const char *path, void *arg),
              void *arg)
{
    const json_t *e = section(snap, "environment");
    char path[512];
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)jobj(e, "variables"), k, v) {
        if (!json_is_string(v))
            continue;
        snprintf(path, sizeof path, "environment.variables.%s", k);
        if (fn(k, json_string_value(v), path, arg))
            return;
    }
    size_t i;
    json_t *p;
    json_array_foreach(jarr(e, "profile_d"), i, p) {
        json_object_foreach((json_t *)jobj(p, "sets"), k, v) {
            if (!json_is_string(v))
                continue;
            /* the process value wins: skip names already seen there */
            if (json_object_get(jobj(e, "variables"), k))
                continue;
            snprintf(path, sizeof path, "environment.profile_d[%zu].sets.%s (%s)", i, k,
                     jstr(p, "path") ? jstr(p, "path") : "?");
            if (fn(k, json_string_value(v), path, arg))
                return;
        }
    }
}

static int is_rocm_install(const json_t *in)
{
    const char *k = jstr(in, "kind");
    return k && !strcmp(k, "rocm");
}

const json_t *default_rocm(const json_t *snap, int *idx)
{
    const json_t *st = section(snap, "stacks");
    const json_t *only = NULL;
    int count = 0, only_idx = -1;
    size_t i;
    json_t *in;
    json_array_foreach(jarr(st, "installs"), i, in) {
        if (!is_rocm_install(in))
            continue;
        if (jbool(in, "is_default")) {
            if (idx)
                *idx = (int)i;
            return in;
        }
        count++;
        only = in;
        only_idx = (int)i;
    }
    if (count == 1) {
        if (idx)
            *idx = only_idx;
        return only;
    }
    return NULL;
}

static int path_under(const char *path, const char *prefix)
{
    size_t n = prefix ? strlen(prefix) : 0;
    while (n > 1 && prefix[n - 1] == '/')
        n--;
    return n > 1 && path && !strncmp(path, prefix, n) && (path[n] == '/' || path[n] == '\0');
}

const json_t *install_of_path(const json_t *snap, const char *path)
{
    const json_t *st = section(snap, "stacks");
    const json_t *best = NULL;
    size_t best_len = 0, i;
    json_t *in;
    json_array_foreach(jarr(st, "installs"), i, in) {
        if (!is_rocm_install(in))
            continue;
        const char *dirs[2] = {jstr(in, "prefix"), jstr(in, "libdir")};
        for (int k = 0; k < 2; k++)
            if (dirs[k] && strcmp(dirs[k], "/usr") != 0 && path_under(path, dirs[k]) &&
                strlen(dirs[k]) > best_len) {
                best = in;
                best_len = strlen(dirs[k]);
            }
    }
    /* /opt/rocm/... belongs to the install the link resolves to */
    if (!best && path_under(path, "/opt/rocm"))
        best = default_rocm(snap, NULL);
    return best;
}

const char *release_of_path(const json_t *snap, const char *path)
{
    const json_t *libs = section(snap, "libraries");
    size_t i;
    json_t *it;
    json_array_foreach(jarr(libs, "items"), i, it) {
        const char *p = jstr(it, "path");
        int hit = p && path && !strcmp(p, path);
        size_t j;
        json_t *l;
        json_array_foreach(jarr(it, "links"), j, l)
            hit |= json_is_string(l) && path && !strcmp(json_string_value(l), path);
        if (hit && jstr(it, "rocm_release"))
            return jstr(it, "rocm_release");
    }
    const json_t *in = install_of_path(snap, path);
    return in ? jstr(in, "version") : NULL;
}

const char *torch_rocm(const json_t *torch, char *buf, size_t size)
{
    const char *label = kb_local_label(jstr(torch, "version"));
    if (label && !strncmp(label, "rocm", 4) && kb_major(label + 4) >= 0) {
        snprintf(buf, size, "%s", label + 4);
        return buf;
    }
    return kb_rocm_from_hip(jstr(torch, "hip"), buf, size);
}

const char *pip_cmd(const json_t *env, char *buf, size_t size)
{
    const char *py = jstr(env, "interpreter");
    if (py && !strpbrk(py, " \t'\"$`\\;&|<>()"))
        snprintf(buf, size, "%s -m pip", py);
    else
        snprintf(buf, size, "python3 -m pip");
    return buf;
}

const char *torch_targets(const json_t *torch, char *buf, size_t size, int *from_kb)
{
    const json_t *gt = jobj(torch, "gpu_targets");
    if (gt && jbool(gt, "collected") && jarr(gt, "targets")) {
        buf[0] = '\0';
        size_t i, used = 0;
        json_t *t;
        json_array_foreach(jarr(gt, "targets"), i, t) {
            if (!json_is_string(t))
                continue;
            int n = snprintf(buf + used, size - used, "%s%.*s", used ? ";" : "",
                             (int)strcspn(json_string_value(t), ":"), json_string_value(t));
            if (n < 0 || (size_t)n >= size - used)
                break;
            used += (size_t)n;
        }
        *from_kb = 0;
        return buf;
    }
    char rocm[32], pub[64];
    const struct kb_wheel_arch *w =
        kb_wheel_arch(kb_public_version(jstr(torch, "version"), pub, sizeof pub),
                      torch_rocm(torch, rocm, sizeof rocm));
    if (!w)
        return NULL;
    *from_kb = 1;
    snprintf(buf, size, "%s", w->archs);
    return buf;
}
