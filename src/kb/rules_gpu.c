/* Rules about GPUs, drivers and device access. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kb/rules_impl.h"

static int any_vendor(const json_t *gpus, const char *vendor)
{
    size_t i;
    json_t *d;
    json_array_foreach(jarr(gpus, "devices"), i, d)
        if (is_vendor(d, vendor))
            return 1;
    return 0;
}

static int is_compute_node(const char *path)
{
    return path && (!strcmp(path, "/dev/kfd") || !strncmp(path, "/dev/dri/renderD", 16) ||
                    !strncmp(path, "/dev/nvidia", 11));
}

/* The group that owns the device nodes (render on most systems). */
static const char *fix_groups(const json_t *perm)
{
    int render = jbool(jobj(perm, "render_group"), "exists");
    return render ? "render,video" : "video";
}

static void add_group_fix(json_t *f, const json_t *snap, const json_t *perm)
{
    const char *user = jstr(perm, "user");
    const json_t *host = section(snap, "host");
    if (jbool(jobj(host, "container"), "inside")) {
        fix(f, "inside a container: start it with --device /dev/kfd --device /dev/dri "
               "--group-add render (or --group-add video)");
    }
    fix(f, "sudo usermod -a -G %s %s", fix_groups(perm),
        user && !strpbrk(user, " '\"$`\\;&|") ? user : "$LOGNAME");
    fix(f, "log out and in again (or run 'newgrp render') so the new group applies");
}

/* DCGM's device-count check: fewer render nodes than AMD GPUs means some GPUs
 * are not reachable (a container given only some, a cgroup device filter). */
static void check_node_count(struct gv_rule_ctx *c, const json_t *perm)
{
    int gpus = amd_compute_gpus(c->snap), nodes = 0;
    size_t i;
    json_t *d;
    json_array_foreach(jarr(perm, "devices"), i, d) {
        const char *p = jstr(d, "path");
        nodes += p && !strncmp(p, "/dev/dri/renderD", 16);
    }
    if (gpus <= 0 || nodes >= gpus)
        return;
    int inside = jbool(jobj(section(c->snap, "host"), "container"), "inside");
    json_t *f = finding(c, inside ? GV_SEV_INFO : GV_SEV_WARNING,
                        "%d AMD GPU(s) on the PCI bus but %d render node(s) in /dev: %d GPU(s) "
                        "cannot be used here",
                        gpus, nodes, gpus - nodes);
    evidencef(f, "gpus.devices", "%d AMD GPU(s)", gpus);
    evidence(f, "permissions.devices", json_object_get(perm, "devices"));
    if (inside)
        fix(f, "if the container should see every GPU: --device /dev/dri (all render nodes)");
    else
        fix(f, "check 'ls -l /dev/dri' and 'dmesg | grep -i amdgpu' for GPUs that failed to "
               "initialise");
    reference(f, "docs/facts/anchor-tools.md §2.2 (DCGM device count), §10");
}

static void check_gpu_access(struct gv_rule_ctx *c)
{
    const json_t *perm = need(c, "permissions");
    if (!perm)
        return;
    const json_t *gpus = section(c->snap, "gpus");
    int amd = gpus ? amd_compute_gpus(c->snap) > 0 : -1;
    int nv = gpus ? any_vendor(gpus, "nvidia") : -1;
    if (amd == 0 && nv == 0)
        return; /* no GPU: nothing to access */
    int bad = 0, has_kfd = 0;
    size_t i;
    json_t *d;
    json_array_foreach(jarr(perm, "devices"), i, d) {
        const char *p = jstr(d, "path");
        if (!is_compute_node(p))
            continue;
        has_kfd |= !strcmp(p, "/dev/kfd");
        if (jbool(d, "readable") && jbool(d, "writable"))
            continue;
        bad = 1;
        json_t *f = finding(c, GV_SEV_ERROR, "%s is not readable and writable by user %s", p,
                            jstr(perm, "user") ? jstr(perm, "user") : "?");
        char path[64];
        snprintf(path, sizeof path, "permissions.devices[%zu]", i);
        evidence(f, path, d);
        evidence(f, "permissions.groups", json_object_get(perm, "groups"));
        add_group_fix(f, c->snap, perm);
    }
    if (amd == 1 && !has_kfd && jarr(perm, "devices") && jbool(c->snap, "live")) {
        json_t *f = finding(c, GV_SEV_ERROR,
                            "an AMD GPU is present but /dev/kfd does not exist (ROCm will "
                            "report 'Unable to open /dev/kfd: No such file or directory')");
        evidence(f, "permissions.devices", json_object_get(perm, "devices"));
        if (jbool(jobj(section(c->snap, "host"), "container"), "inside"))
            fix(f, "start the container with --device /dev/kfd --device /dev/dri --group-add "
                   "render");
        else
            fix(f, "sudo modprobe amdgpu (and check 'dmesg | grep -i kfd' for errors such as "
                   "'PCI rejects atomics')");
        reference(f, "docs/facts/rocm-facts.md §8 (/dev/kfd: No such file or directory)");
        bad = 1;
    }
    if (amd == 1 && jarr(perm, "devices") && jbool(c->snap, "live"))
        check_node_count(c, perm);
    if (bad || amd != 1)
        return;
    /* device list gave no verdict: fall back to group membership */
    const json_t *rg = jobj(perm, "render_group"), *vg = jobj(perm, "video_group");
    if (!jarr(perm, "devices") && jhas_false(rg, "member") && jhas_false(vg, "member")) {
        json_t *f = finding(c, GV_SEV_WARNING,
                            "user %s is in neither the render nor the video group",
                            jstr(perm, "user") ? jstr(perm, "user") : "?");
        evidence(f, "permissions.render_group", rg);
        evidence(f, "permissions.video_group", vg);
        add_group_fix(f, c->snap, perm);
    }
}

static const char *module_of(const char *vendor) { return !strcmp(vendor, "amd") ? "amdgpu" : "nvidia"; }

static void driver_for_vendor(struct gv_rule_ctx *c, const json_t *gpus, const json_t *drv,
                              const char *vendor)
{
    const char *mod = module_of(vendor);
    const json_t *m = jobj(jobj(drv, "modules"), mod);
    size_t i;
    json_t *d;
    json_array_foreach(jarr(gpus, "devices"), i, d) {
        if (!is_vendor(d, vendor))
            continue;
        const char *bound = jstr(d, "driver");
        if (bound && !strcmp(bound, mod))
            continue;
        if (bound && !strcmp(bound, "nouveau"))
            continue; /* the nouveau rule reports it */
        if (!bound && drv && jbool(m, "loaded"))
            continue; /* loaded, device binding unknown: not our call */
        if (!bound && !drv)
            continue;
        json_t *f = finding(c, GV_SEV_ERROR, "%s GPU %s has no %s driver bound%s",
                            !strcmp(vendor, "amd") ? "AMD" : "NVIDIA",
                            jstr(d, "pci_address") ? jstr(d, "pci_address") : "?", mod,
                            bound ? " (another driver is)" : "");
        char path[64];
        snprintf(path, sizeof path, "gpus.devices[%zu].driver", i);
        evidence_str(f, path, bound);
        if (m) {
            char mp[64];
            snprintf(mp, sizeof mp, "drivers.modules.%s", mod);
            evidence(f, mp, m);
        }
        if (!strcmp(vendor, "amd")) {
            fix(f, "sudo modprobe amdgpu");
            fix(f, "if it fails: dmesg | grep -iE 'amdgpu|kfd' (firmware: install a newer "
                   "linux-firmware; AMD driver: sudo amdgpu-install --usecase=dkms)");
        } else {
            fix(f, "install the NVIDIA driver (e.g. sudo apt install nvidia-driver) and reboot");
        }
        return; /* one finding per vendor */
    }
}

static void check_kernel_driver(struct gv_rule_ctx *c)
{
    const json_t *gpus = need(c, "gpus");
    if (!gpus)
        return;
    const json_t *drv = section(c->snap, "drivers");
    driver_for_vendor(c, gpus, drv, "amd");
    driver_for_vendor(c, gpus, drv, "nvidia");
}

static void check_nouveau(struct gv_rule_ctx *c)
{
    const json_t *gpus = need(c, "gpus");
    size_t i;
    json_t *d;
    json_array_foreach(jarr(gpus, "devices"), i, d) {
        const char *bound = jstr(d, "driver");
        if (!bound || strcmp(bound, "nouveau") != 0)
            continue;
        json_t *f = finding(c, GV_SEV_ERROR,
                            "NVIDIA GPU %s is driven by nouveau: CUDA cannot use it",
                            jstr(d, "pci_address") ? jstr(d, "pci_address") : "?");
        char path[64];
        snprintf(path, sizeof path, "gpus.devices[%zu].driver", i);
        evidence_str(f, path, bound);
        fix(f, "printf 'blacklist nouveau\\noptions nouveau modeset=0\\n' | sudo tee "
               "/etc/modprobe.d/blacklist-nouveau.conf");
        fix(f, "sudo update-initramfs -u   (RHEL/SLES: sudo dracut --force)");
        fix(f, "install the NVIDIA driver and reboot");
    }
}

static void list_stacks(json_t *f, const json_t *snap)
{
    const json_t *st = section(snap, "stacks");
    size_t i;
    json_t *in;
    json_array_foreach(jarr(st, "installs"), i, in) {
        char path[64];
        snprintf(path, sizeof path, "stacks.installs[%zu]", i);
        evidencef(f, path, "%s %s %s", jstr(in, "kind") ? jstr(in, "kind") : "?",
                  jstr(in, "layout") ? jstr(in, "layout") : "",
                  jstr(in, "version") ? jstr(in, "version") : "(version unknown)");
    }
}

static void check_no_gpu(struct gv_rule_ctx *c)
{
    const json_t *gpus = section(c->snap, "gpus");
    if (!gpus || !jarr(gpus, "devices") || json_array_size(jarr(gpus, "devices")) > 0)
        return;
    json_t *f = finding(c, GV_SEV_INFO,
                        "no AMD or NVIDIA GPU on the PCI bus: device checks are skipped, "
                        "software checks still run");
    evidence(f, "gpus.devices", json_object_get(gpus, "devices"));
    evidence_str(f, "gpus.source", jstr(gpus, "source"));
    list_stacks(f, c->snap);
    fix(f, "nothing to fix if this machine is meant to have no GPU (a build host); otherwise "
           "check 'lspci -nn | grep -iE \"vga|3d|display\"' and the BIOS/PCIe slot");
}

/* This area's doctor rules, in report order (rules.c joins the areas). */
const struct gv_rule gv_rules_gpu[] = {
    {"gpu-access", GV_SEV_ERROR, "GPU device nodes are not accessible to the user",
     check_gpu_access,
     "docs/facts/rocm-facts.md §8 (render group); rocm-install-on-linux prerequisites.rst",
     "docs/doctor.md origin 1"},
    {"kernel-driver", GV_SEV_ERROR, "a GPU is present but its kernel driver is not loaded",
     check_kernel_driver, "docs/facts/rocm-facts.md §5, §8", "docs/doctor.md origin 2"},
    {"nouveau", GV_SEV_ERROR, "an NVIDIA GPU is bound to nouveau", check_nouveau,
     "docs/facts/anchor-tools.md §2.2 (DCGM Denylist)", "DCGM software check"},
    {"no-gpu", GV_SEV_INFO, "no AMD or NVIDIA GPU on the PCI bus", check_no_gpu,
     "docs/snapshot-schema.md (gpus)", "gpuvet"},
};
const size_t gv_rules_gpu_n = sizeof gv_rules_gpu / sizeof gv_rules_gpu[0];
