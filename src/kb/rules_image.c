/* Rules about a container image (issue 33, docs/image.md): what its config
 * and tags say (image-env, image-tag), and, with a host snapshot (doctor
 * --image --host), what the host must give it: a kernel driver whose window
 * covers the image's ROCm (image-kmd), an NVIDIA driver new enough for its
 * CUDA runtime (image-cuda-driver), GPUs its torch has kernels for
 * (image-gpu-targets), and the device nodes and groups (image-devices).
 * Every rule is silent on a snapshot without an image section; the host rules
 * are silent without a host. Nothing from a document reaches a fix string
 * except names and numbers checked here (safe_word, numbers printed as such). */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "kb/image_tags.h"
#include "kb/rules_impl.h"

static const json_t *image_of(struct gv_rule_ctx *c) { return section(c->snap, "image"); }

/* s is 1 to max bytes of letters, digits and extra, not starting with '-'. */
static int only_chars(const char *s, size_t max, const char *extra)
{
    if (!s || !*s || strlen(s) > max || *s == '-')
        return 0;
    for (const char *p = s; *p; p++)
        if (!isalnum((unsigned char)*p) && !strchr(extra, *p))
            return 0;
    return 1;
}

/* What may be printed into a fix: an image name, tag or digest; a variable
 * or gfx name; a version. */
static int safe_word(const char *s) { return only_chars(s, 200, "._/:@-"); }
static int safe_name(const char *s)
{
    return s && !isdigit((unsigned char)*s) && only_chars(s, 128, "_");
}
static int safe_version(const char *s) { return only_chars(s, 64, "._+~-"); }

static int is_digest(const char *s)
{
    if (!s || strncmp(s, "sha256:", 7) || strlen(s) != 71)
        return 0;
    for (const char *p = s + 7; *p; p++)
        if (!isdigit((unsigned char)*p) && !(*p >= 'a' && *p <= 'f'))
            return 0;
    return 1;
}

/* What to put after `docker run` for this image: NAME@sha256:… when a tag
 * names the repository and the manifest digest is known, else the first safe
 * tag, else "IMAGE". */
static const char *image_word(const json_t *img, char *buf, size_t size)
{
    const char *name = NULL;
    size_t i;
    json_t *t;
    json_array_foreach(jarr(img, "tags"), i, t)
        if (!name && safe_word(json_string_value(t)) && strchr(json_string_value(t), ':') &&
            !strchr(json_string_value(t), '@'))
            name = json_string_value(t);
    const char *digest = jstr(img, "manifest_digest");
    if (name && is_digest(digest)) {
        const char *slash = strrchr(name, '/');
        const char *colon = strrchr(slash ? slash : name, ':');
        snprintf(buf, size, "%.*s@%s", colon ? (int)(colon - name) : (int)strlen(name), name,
                 digest);
    } else
        snprintf(buf, size, "%s", name ? name : "IMAGE");
    return buf;
}

/* ---- image-env: variables the config bakes in ---- */

static void env_entry(struct gv_rule_ctx *c, const json_t *img, size_t i, const json_t *e)
{
    const char *name = jstr(e, "name"), *value = jstr(e, "value");
    const struct kb_env *k = name ? kb_env(name) : NULL;
    char path[64];
    snprintf(path, sizeof path, "image.env[%zu]", i);
    if (!k || (k->kind != KB_ENV_NUMERICS && k->kind != KB_ENV_KERNELS &&
               k->kind != KB_ENV_OVERRIDE && k->kind != KB_ENV_VISIBILITY))
        return;
    if (value && kb_env_is_quiet(k, value))
        return;
    json_t *f = finding(c, GV_SEV_WARNING,
                        "the image's config sets %s%s%s: every container started from it "
                        "inherits it (%s)",
                        name, value ? "=" : "", value ? value : " (value redacted)", k->effect);
    evidence(f, path, e);
    evidencef(f, "kb: default", "%s", k->dflt);
    reference(f, k->source);
    char word[300];
    if (safe_name(name))
        fix(f, "remove ENV %s from the image's Dockerfile/Containerfile and rebuild, or start "
               "it with the default: docker run -e '%s=' … '%s' (unless intended)",
            name, name, image_word(img, word, sizeof word));
    else
        fix(f, "remove that ENV line from the image's Dockerfile/Containerfile and rebuild "
               "(its name is not a plain variable name)");
}

/* LD_LIBRARY_PATH: a directory of it where the image has no library gpuvet
 * found and no stack (a path from the build machine, or a typo). */
static int dir_known(const json_t *snap, const char *dir, size_t len)
{
    size_t i;
    json_t *x;
    json_array_foreach(jarr(section(snap, "libraries"), "items"), i, x) {
        const char *p = jstr(x, "path"), *o = jstr(x, "origin");
        if ((p && !strncmp(p, dir, len) && p[len] == '/') ||
            (o && strlen(o) == len && !strncmp(o, dir, len)))
            return 1;
    }
    json_array_foreach(jarr(section(snap, "stacks"), "installs"), i, x) {
        size_t j;
        json_t *d;
        json_array_foreach(jarr(x, "libdirs"), j, d)
            if (json_is_string(d) && strlen(json_string_value(d)) == len &&
                !strncmp(json_string_value(d), dir, len))
                return 1;
    }
    return 0;
}

static void env_ld_path(struct gv_rule_ctx *c, size_t i, const json_t *e)
{
    const char *v = jstr(e, "value");
    if (!v || !section(c->snap, "libraries"))
        return;
    for (const char *p = v; *p;) {
        size_t len = strcspn(p, ":");
        if (len && p[0] == '/' && !dir_known(c->snap, p, len)) {
            json_t *f = finding(c, GV_SEV_INFO,
                                "the image's LD_LIBRARY_PATH names %.*s, where the image has no "
                                "GPU library or stack",
                                (int)len, p);
            char path[64];
            snprintf(path, sizeof path, "image.env[%zu]", i);
            evidence(f, path, e);
            char dir[256];
            snprintf(dir, sizeof dir, "%.*s", (int)len, p);
            fix(f, "drop %s from ENV LD_LIBRARY_PATH in the image's Dockerfile/Containerfile "
                   "(a directory of the machine the image was built on?)",
                safe_word(dir) ? dir : "that directory");
        }
        p += len + (p[len] == ':');
    }
}

static void check_image_env(struct gv_rule_ctx *c)
{
    const json_t *img = image_of(c);
    size_t i;
    json_t *e;
    json_array_foreach(jarr(img, "env"), i, e) {
        const char *name = jstr(e, "name");
        if (name && !strcmp(name, "LD_LIBRARY_PATH"))
            env_ld_path(c, i, e);
        else
            env_entry(c, img, i, e);
    }
}

/* ---- image-tag ---- */

static void check_image_tag(struct gv_rule_ctx *c)
{
    const json_t *img = image_of(c);
    json_t *found = json_array();
    gv_kb_image_tag_findings(c->snap, found);
    size_t i;
    json_t *t;
    json_array_foreach(found, i, t) {
        json_t *f = finding(c, GV_SEV_WARNING, "%s", jstr(t, "message"));
        size_t j;
        json_t *e;
        json_array_foreach(jarr(t, "evidence"), j, e)
            evidence(f, jstr(e, "path"), json_object_get(e, "value"));
        const char *digest = jstr(img, "manifest_digest");
        if (!is_digest(digest))
            digest = jstr(img, "config_digest");
        char word[300];
        if (is_digest(digest))
            fix(f, "use the image by its digest, not its tag: '%s'",
                image_word(img, word, sizeof word));
        const char *held = jstr(json_array_get(jarr(t, "evidence"), 1), "value");
        fix(f, "fix the tag or label: it should name %s %s as the content holds",
            !strcmp(jstr(t, "kind"), "rocm") ? "ROCm" : !strcmp(jstr(t, "kind"), "cuda") ? "CUDA"
                                                                                     : "PyTorch",
            safe_version(held) ? held : "the version");
    }
    json_decref(found);
}

/* ---- host rules ---- */

/* The image's ROCm user space: the default install's version, else each
 * torch's bundled ROCm. Calls fn for each with its evidence path. */
static void each_image_rocm(struct gv_rule_ctx *c,
                            void (*fn)(struct gv_rule_ctx *, const char *ver, const char *path,
                                       const char *what, const void *arg),
                            const void *arg)
{
    int idx = -1;
    const json_t *rocm = default_rocm(c->snap, &idx);
    char path[128];
    if (rocm && jstr(rocm, "version")) {
        snprintf(path, sizeof path, "stacks.installs[%d].version", idx);
        fn(c, jstr(rocm, "version"), path, "the image's ROCm", arg);
    }
    size_t i;
    json_t *env;
    json_array_foreach(jarr(section(c->snap, "python"), "environments"), i, env) {
        const json_t *torch = jobj(env, "torch");
        char want[32];
        if (!torch || !jarr(torch, "bundled_libraries") || !torch_rocm(torch, want, sizeof want))
            continue;
        snprintf(path, sizeof path, "python.environments[%zu].torch.version", i);
        fn(c, want, path, "the image's torch wheel's bundled ROCm", arg);
    }
}

static void kmd_one(struct gv_rule_ctx *c, const char *ver, const char *path, const char *what,
                    const void *arg)
{
    const struct kb_kmd *k = arg;
    char mm[16];
    if (!kb_major_minor(ver, mm, sizeof mm) || kb_kmd_supports(k, mm))
        return;
    const json_t *drv = section(c->host, "drivers");
    const char *dv = jstr(jobj(jobj(drv, "dkms"), "amdgpu-dkms"), "version");
    json_t *f = finding(c, GV_SEV_WARNING,
                        "%s (ROCm %s) is outside the host's amdgpu driver %s window (ROCm %s to "
                        "%s): a container carries no kernel driver",
                        what, mm, k->kmd, k->user_min, k->user_max);
    evidence_str(f, "host:drivers.dkms.amdgpu-dkms.version", dv);
    evidence_str(f, path, ver);
    evidencef(f, "kb: KMD compatibility", "driver %s supports user space %s-%s (%s)", k->kmd,
              k->user_min, k->user_max, k->source);
    reference(f, k->source);
    fix(f, "run an image whose ROCm is between %s and %s, or install on the host an amdgpu "
           "driver whose window covers ROCm %s (sudo amdgpu-install --usecase=dkms from that "
           "release's repository)",
        k->user_min, k->user_max, mm);
}

static void check_image_kmd(struct gv_rule_ctx *c)
{
    if (!image_of(c) || !c->host || !uses_stack(c->snap, "rocm"))
        return;
    const json_t *drv = section(c->host, "drivers");
    const char *dv = jstr(jobj(jobj(drv, "dkms"), "amdgpu-dkms"), "version");
    char rel[32];
    const struct kb_kmd *k = NULL;
    if (dv && kb_release_from_pkgver(dv, rel, sizeof rel))
        k = kb_kmd(rel);
    int amd_host = count_gpus(c->host, "amd") > 0 || dv ||
                   jbool(jobj(jobj(drv, "modules"), "amdgpu"), "loaded");
    if (!k && amd_host) {
        json_t *f = finding(c, GV_SEV_INFO,
                            "cannot check the image's ROCm against the host driver: %s",
                            !drv ? "the host's drivers were not collected"
                            : dv ? "the kb has no row for the host's amdgpu-dkms"
                                 : "the host has no amdgpu-dkms package (the kernel's own "
                                   "amdgpu, or none); AMD's matrix covers amdgpu-dkms");
        json_object_set_new(f, "checked", json_false());
        evidence(f, "host:drivers", drv);
    }
    if (k)
        each_image_rocm(c, kmd_one, k);
}

/* The host's NVIDIA driver version (its libcuda, else the loaded module). */
static const char *host_nvidia(const json_t *host, char *path, size_t size)
{
    size_t i;
    json_t *in;
    json_array_foreach(jarr(section(host, "stacks"), "installs"), i, in) {
        const char *k = jstr(in, "kind"), *l = jstr(in, "layout");
        if (k && l && !strcmp(k, "cuda") && !strcmp(l, "driver") && jstr(in, "version")) {
            snprintf(path, size, "host:stacks.installs[%zu].version", i);
            return jstr(in, "version");
        }
    }
    const json_t *m = jobj(jobj(section(host, "drivers"), "modules"), "nvidia");
    if (jbool(m, "loaded") && jstr(m, "version")) {
        snprintf(path, size, "host:drivers.modules.nvidia.version");
        return jstr(m, "version");
    }
    return NULL;
}

/* A forward-compatibility package in the image (cuda-compat-*, or a libcuda
 * under a compat/ directory): its path, else NULL. */
static const char *forward_compat(const json_t *snap, char *path, size_t size)
{
    size_t i;
    json_t *x;
    json_array_foreach(jarr(section(snap, "packages"), "items"), i, x) {
        const char *n = jstr(x, "name");
        if (n && !strncmp(n, "cuda-compat", 11)) {
            snprintf(path, size, "packages.items[%zu]", i);
            return n;
        }
    }
    json_array_foreach(jarr(section(snap, "libraries"), "items"), i, x) {
        const char *p = jstr(x, "path");
        if (p && strstr(p, "/compat/libcuda.so")) {
            snprintf(path, size, "libraries.items[%zu].path", i);
            return p;
        }
    }
    return NULL;
}

static void cuda_one(struct gv_rule_ctx *c, const char *cuda, const char *cpath,
                     const char *drv, const char *dpath)
{
    const struct kb_cuda_driver *k = kb_cuda_driver(cuda);
    if (!k || kb_vercmp(drv, k->min_driver) >= 0)
        return;
    char fpath[96];
    const char *compat = forward_compat(c->snap, fpath, sizeof fpath);
    json_t *f = finding(c, compat ? GV_SEV_WARNING : GV_SEV_ERROR,
                        compat ? "the image's CUDA %s needs NVIDIA driver %s or newer; the host "
                                 "has %s, bridged only by the image's forward-compatibility "
                                 "package (data-center GPUs only)"
                               : "the image's CUDA %s needs NVIDIA driver %s or newer; the host "
                                 "has %s",
                        cuda, k->min_driver, drv);
    evidence_str(f, cpath, cuda);
    evidence_str(f, dpath, drv);
    if (compat)
        evidence_str(f, fpath, compat);
    evidencef(f, "kb: CUDA minimum driver", "CUDA %s.x needs %s (%s)", k->cuda, k->min_driver,
              k->source);
    fix(f, "upgrade the host's NVIDIA driver to %s or newer, or run an image built for CUDA "
           "%d.x",
        k->min_driver, kb_major(cuda) - 1);
}

static void check_image_cuda_driver(struct gv_rule_ctx *c)
{
    char dpath[96];
    const char *drv = c->host && image_of(c) ? host_nvidia(c->host, dpath, sizeof dpath) : NULL;
    if (!drv)
        return;
    char p[96];
    size_t i;
    json_t *x;
    json_array_foreach(jarr(section(c->snap, "stacks"), "installs"), i, x) {
        const char *k = jstr(x, "kind"), *l = jstr(x, "layout");
        if (!k || strcmp(k, "cuda") || (l && !strcmp(l, "driver")) || !jstr(x, "version"))
            continue;
        snprintf(p, sizeof p, "stacks.installs[%zu].version", i);
        cuda_one(c, jstr(x, "version"), p, drv, dpath);
    }
    json_array_foreach(jarr(section(c->snap, "libraries"), "items"), i, x) {
        const char *n = jstr(x, "name");
        if (!n || (strcmp(n, "cudart") && strcmp(n, "cublas")) || !jstr(x, "version"))
            continue;
        snprintf(p, sizeof p, "libraries.items[%zu].version", i);
        cuda_one(c, jstr(x, "version"), p, drv, dpath);
    }
    json_array_foreach(jarr(section(c->snap, "python"), "environments"), i, x) {
        const char *cu = jstr(jobj(x, "torch"), "cuda");
        if (!cu)
            continue;
        snprintf(p, sizeof p, "python.environments[%zu].torch.cuda", i);
        cuda_one(c, cu, p, drv, dpath);
    }
}

/* ---- GPU targets of the image's torch against the host's GPUs ---- */

static void targets_env(struct gv_rule_ctx *c, size_t e, const json_t *torch)
{
    char targets[1024];
    int from_kb = 0;
    const char *b = jstr(torch, "build");
    if (!b || strcmp(b, "rocm") || !torch_targets(torch, targets, sizeof targets, &from_kb))
        return;
    size_t i;
    json_t *d;
    json_array_foreach(jarr(section(c->host, "gpus"), "devices"), i, d) {
        char gfx[32], path[128];
        if (!is_vendor(d, "amd") || !dev_gfx(d, gfx, sizeof gfx) || !safe_name(gfx) ||
            kb_arch_in_list(targets, gfx))
            continue;
        json_t *f = finding(c, GV_SEV_ERROR,
                            "the image's torch %s has no kernels for the host's %s (%s): "
                            "\"HIP error: invalid device function\" at the first GPU op",
                            jstr(torch, "version") ? jstr(torch, "version") : "?", gfx,
                            jstr(d, "pci_address") ? jstr(d, "pci_address") : "GPU");
        snprintf(path, sizeof path, "host:gpus.devices[%zu].kfd.gfx_target", i);
        evidence_str(f, path, gfx);
        snprintf(path, sizeof path, "python.environments[%zu].torch.gpu_targets%s", e,
                 from_kb ? " (kb: official wheel)" : ".targets");
        evidence_str(f, path, targets);
        const char *first = kb_first_torch_with_arch(gfx);
        if (first)
            fix(f, "run an image whose torch is built for %s (official wheels from torch %s; "
                   "PYTORCH_ROCM_ARCH must list it when building)",
                gfx, first);
        else
            fix(f, "run an image whose torch is built for %s (PYTORCH_ROCM_ARCH=%s when "
                   "building)",
                gfx, gfx);
    }
}

static void check_image_gpu_targets(struct gv_rule_ctx *c)
{
    if (!c->host || !image_of(c) || !section(c->host, "gpus"))
        return;
    size_t i;
    json_t *env;
    json_array_foreach(jarr(section(c->snap, "python"), "environments"), i, env)
        if (jobj(env, "torch"))
            targets_env(c, i, jobj(env, "torch"));
}

/* ---- device nodes and groups ---- */

static const json_t *host_device(const json_t *host, const char *path)
{
    size_t i;
    json_t *d;
    json_array_foreach(jarr(section(host, "permissions"), "devices"), i, d)
        if (jstr(d, "path") && !strcmp(jstr(d, "path"), path))
            return d;
    return NULL;
}

/* "--group-add 44 --group-add 109": the host's gids when known, else names. */
static void group_flags(const json_t *host, char *buf, size_t size)
{
    const json_t *perm = section(host, "permissions");
    const json_t *v = json_object_get(jobj(perm, "video_group"), "gid");
    const json_t *r = json_object_get(jobj(perm, "render_group"), "gid");
    char a[32] = "video", b[32] = "render";
    if (json_is_integer(v) && json_integer_value(v) >= 0)
        snprintf(a, sizeof a, "%lld", (long long)json_integer_value(v));
    if (json_is_integer(r) && json_integer_value(r) >= 0)
        snprintf(b, sizeof b, "%lld", (long long)json_integer_value(r));
    snprintf(buf, size, "--group-add %s --group-add %s", a, b);
}

static void devices_amd(struct gv_rule_ctx *c, const json_t *img)
{
    const json_t *perm = section(c->host, "permissions");
    int devs_known = perm && jarr(perm, "devices");
    if (devs_known && !host_device(c->host, "/dev/kfd")) {
        json_t *f = finding(c, GV_SEV_ERROR,
                            "the image needs ROCm's /dev/kfd, and the host has none: amdgpu/KFD "
                            "is not loaded");
        evidence(f, "host:permissions.devices", jarr(perm, "devices"));
        fix(f, "sudo modprobe amdgpu   (or install the driver: sudo amdgpu-install "
               "--usecase=dkms), then start the container");
        reference(f, "docs/facts/rocm-facts.md §8 (Unable to open /dev/kfd read-write: No such file)");
        return;
    }
    char groups[96], word[300];
    group_flags(c->host, groups, sizeof groups);
    image_word(img, word, sizeof word);
    json_t *f = finding(c, GV_SEV_INFO,
                        "the container needs the host's /dev/kfd and /dev/dri render nodes, and "
                        "the groups that own them");
    evidence(f, "host:permissions.render_group", jobj(perm, "render_group"));
    evidence(f, "host:permissions.video_group", jobj(perm, "video_group"));
    if (devs_known)
        evidence(f, "host:permissions.devices[/dev/kfd]", host_device(c->host, "/dev/kfd"));
    reference(f, "docs/facts/rocm-facts.md §5 (Containers), §8 (Permissions)");
    fix(f, "docker run --device=/dev/kfd --device=/dev/dri %s '%s'", groups, word);
    fix(f, "podman run --device=/dev/kfd --device=/dev/dri %s '%s'", groups, word);
}

static void devices_nvidia(struct gv_rule_ctx *c, const json_t *img)
{
    char word[300];
    image_word(img, word, sizeof word);
    json_t *f = finding(c, GV_SEV_INFO,
                        "the container needs the host's /dev/nvidia* devices and driver "
                        "libraries, which the NVIDIA Container Toolkit adds");
    if (host_device(c->host, "/dev/nvidiactl"))
        evidence(f, "host:permissions.devices[/dev/nvidiactl]",
                 host_device(c->host, "/dev/nvidiactl"));
    char p[96];
    const char *drv = host_nvidia(c->host, p, sizeof p);
    if (drv)
        evidence_str(f, p, drv);
    reference(f, "NVIDIA Container Toolkit (docker --gpus; CDI nvidia.com/gpu for podman)");
    fix(f, "docker run --gpus all '%s'", word);
    fix(f, "podman run --device nvidia.com/gpu=all '%s'   (after: sudo nvidia-ctk cdi "
           "generate --output=/etc/cdi/nvidia.yaml)",
        word);
}

static void check_image_devices(struct gv_rule_ctx *c)
{
    const json_t *img = image_of(c);
    if (!img || !c->host)
        return;
    char p[96];
    if (uses_stack(c->snap, "rocm") &&
        (count_gpus(c->host, "amd") > 0 || host_device(c->host, "/dev/kfd")))
        devices_amd(c, img);
    if (uses_stack(c->snap, "cuda") &&
        (count_gpus(c->host, "nvidia") > 0 || host_nvidia(c->host, p, sizeof p)))
        devices_nvidia(c, img);
}

const struct gv_rule gv_rules_image[] = {
    {"image-env", GV_SEV_WARNING,
     "the image's config sets a variable that changes numerics, targets or the loader path",
     check_image_env, "docs/facts/rocm-facts.md §6; docs/image.md (env)", "docs/image.md"},
    {"image-tag", GV_SEV_WARNING, "a tag or label names a version the image's content contradicts",
     check_image_tag, "docs/image.md (tags, labels)", "docs/image.md"},
    {"image-kmd", GV_SEV_WARNING,
     "the image's ROCm is outside the host's amdgpu driver window (--host)", check_image_kmd,
     "docs/facts/rocm-facts.md §5 (KMD and user space)", "docs/image.md"},
    {"image-cuda-driver", GV_SEV_ERROR,
     "the image's CUDA runtime needs a newer host NVIDIA driver (--host)",
     check_image_cuda_driver, "NVIDIA CUDA Toolkit Release Notes (minor version compatibility)",
     "docs/image.md"},
    {"image-gpu-targets", GV_SEV_ERROR,
     "the image's torch has no kernels for the host's GPUs (--host)", check_image_gpu_targets,
     "docs/facts/rocm-facts.md §2a", "docs/image.md"},
    {"image-devices", GV_SEV_ERROR,
     "the device nodes and groups the container needs, with docker/podman flags (--host)",
     check_image_devices, "docs/facts/rocm-facts.md §5, §8", "docs/image.md"},
};
const size_t gv_rules_image_n = sizeof gv_rules_image / sizeof gv_rules_image[0];
