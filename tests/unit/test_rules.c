/* Doctor rules on hand-written snapshots (tests/data/doctor/healthy-amd.json
 * edited per case). Each rule is checked where it must fire and where it must
 * not; expected findings and fixes follow from the rule definitions and
 * rocm-facts.md, worked out by hand. */
#include <string.h>

#include "kb/rules.h"
#include "snap_edit.h"
#include "t.h"

static json_t *F; /* findings of the last run */
static json_t *S; /* the snapshot being edited */

static void fresh(void)
{
    json_decref(S);
    S = snap_load("healthy-amd.json");
}

static void run(void)
{
    json_decref(F);
    F = gv_doctor_run(S);
}

static int is_unchecked(const json_t *f) { return json_is_false(json_object_get(f, "checked")); }

static int count(const char *rule, const char *sev)
{
    int n = 0;
    size_t i;
    json_t *f;
    json_array_foreach(F, i, f)
        if (!is_unchecked(f) && !strcmp(json_string_value(json_object_get(f, "rule")), rule) &&
            (!sev || !strcmp(json_string_value(json_object_get(f, "severity")), sev)))
            n++;
    return n;
}

static int unchecked(const char *rule)
{
    int n = 0;
    size_t i;
    json_t *f;
    json_array_foreach(F, i, f)
        n += is_unchecked(f) && !strcmp(json_string_value(json_object_get(f, "rule")), rule);
    return n;
}

/* Errors and warnings of any rule other than the given one. */
static int others(const char *rule)
{
    int n = 0;
    size_t i;
    json_t *f;
    json_array_foreach(F, i, f) {
        const char *sev = json_string_value(json_object_get(f, "severity"));
        if (strcmp(sev, "info") != 0 &&
            strcmp(json_string_value(json_object_get(f, "rule")), rule) != 0) {
            fprintf(stderr, "  (also: %s %s)\n", json_string_value(json_object_get(f, "rule")),
                    json_string_value(json_object_get(f, "title")));
            n++;
        }
    }
    return n;
}

static int has_fix(const char *rule, const char *text)
{
    size_t i, j;
    json_t *f, *x;
    json_array_foreach(F, i, f) {
        if (strcmp(json_string_value(json_object_get(f, "rule")), rule) != 0)
            continue;
        json_array_foreach(json_object_get(f, "fix"), j, x)
            if (strstr(json_string_value(x), text))
                return 1;
    }
    fprintf(stderr, "  no fix of %s contains: %s\n", rule, text);
    return 0;
}

static int has_evidence(const char *rule, const char *path_part)
{
    size_t i, j;
    json_t *f, *e;
    json_array_foreach(F, i, f) {
        if (strcmp(json_string_value(json_object_get(f, "rule")), rule) != 0)
            continue;
        json_array_foreach(json_object_get(f, "evidence"), j, e)
            if (strstr(json_string_value(json_object_get(e, "path")), path_part))
                return 1;
    }
    return 0;
}

#define SET(path, value) snap_set(S, path, value)

static void healthy_has_no_findings(void)
{
    fresh();
    run();
    T_EQ_INT(json_array_size(F), 0);
}

static void nothing_collected_gives_only_notes(void)
{
    fresh();
    const char *sections[] = {"host", "gpus", "drivers", "stacks", "libraries", "packages",
                              "python", "loader", "environment", "permissions"};
    for (size_t i = 0; i < sizeof sections / sizeof sections[0]; i++) {
        char p[64];
        snprintf(p, sizeof p, "%s", sections[i]);
        SET(p, "{\"collected\": false, \"reason\": \"no /sys under --root\"}");
    }
    run();
    size_t i;
    json_t *f;
    int notes = 0;
    json_array_foreach(F, i, f) {
        T_EQ_STR(json_string_value(json_object_get(f, "severity")), "info");
        T_CHECK(is_unchecked(f));
        notes++;
    }
    T_CHECK(notes >= 5);
    T_EQ_INT(unchecked("gpu-access"), 1);
    T_EQ_INT(unchecked("numerics-env"), 1);
}

static void gpu_access(void)
{
    fresh();
    SET("permissions.devices.0.writable", "false");
    run();
    T_EQ_INT(count("gpu-access", "error"), 1);
    T_CHECK(has_fix("gpu-access", "sudo usermod -a -G render,video alice"));
    T_CHECK(has_evidence("gpu-access", "permissions.devices[0]"));
    T_EQ_INT(others("gpu-access"), 0);

    fresh(); /* /dev/kfd missing on a live AMD system */
    SET("permissions.devices.0", NULL);
    run();
    T_EQ_INT(count("gpu-access", "error"), 1);
    T_CHECK(has_fix("gpu-access", "modprobe amdgpu"));

    fresh(); /* the same in a container: the fix is --device */
    SET("permissions.devices.0", NULL);
    SET("host.container.inside", "true");
    run();
    T_CHECK(has_fix("gpu-access", "--device /dev/kfd"));

    fresh(); /* no device list: group membership decides */
    SET("permissions.devices", NULL);
    SET("permissions.render_group.member", "false");
    SET("permissions.video_group.member", "false");
    run();
    T_EQ_INT(count("gpu-access", "warning"), 1);

    fresh(); /* no GPU: an unwritable node is no finding */
    SET("gpus.devices", "[]");
    SET("permissions.devices.0.writable", "false");
    run();
    T_EQ_INT(count("gpu-access", NULL), 0);

    fresh();
    SET("permissions", "{\"collected\": false, \"reason\": \"permission denied\"}");
    run();
    T_EQ_INT(count("gpu-access", NULL), 0);
    T_EQ_INT(unchecked("gpu-access"), 1);
}

static void kernel_driver(void)
{
    fresh();
    SET("gpus.devices.0.driver", NULL);
    SET("drivers.modules.amdgpu.loaded", "false");
    run();
    T_EQ_INT(count("kernel-driver", "error"), 1);
    T_CHECK(has_fix("kernel-driver", "sudo modprobe amdgpu"));

    fresh(); /* binding unknown but module loaded: no verdict */
    SET("gpus.devices.0.driver", NULL);
    run();
    T_EQ_INT(count("kernel-driver", NULL), 0);

    fresh(); /* NVIDIA GPU without driver */
    SET("gpus.devices.+", "{\"pci_address\": \"0000:65:00.0\", \"vendor\": \"nvidia\", "
                          "\"vendor_id\": \"0x10de\", \"device_id\": \"0x2330\"}");
    run();
    T_EQ_INT(count("kernel-driver", "error"), 1);
    SET("gpus.devices.1.driver", "\"nvidia\"");
    run();
    T_EQ_INT(count("kernel-driver", NULL), 0);

    fresh();
    SET("gpus", "{\"collected\": false, \"reason\": \"no /sys under --root\"}");
    run();
    T_EQ_INT(count("kernel-driver", NULL), 0);
    T_EQ_INT(unchecked("kernel-driver"), 1);
}

static void nouveau(void)
{
    fresh();
    SET("gpus.devices.+", "{\"pci_address\": \"0000:65:00.0\", \"vendor\": \"nvidia\", "
                          "\"vendor_id\": \"0x10de\", \"driver\": \"nouveau\"}");
    run();
    T_EQ_INT(count("nouveau", "error"), 1);
    T_EQ_INT(count("kernel-driver", NULL), 0); /* reported once, by nouveau */
    T_CHECK(has_fix("nouveau", "blacklist nouveau"));
    fresh();
    run();
    T_EQ_INT(count("nouveau", NULL), 0);
}

static void no_gpu(void)
{
    fresh();
    SET("gpus.devices", "[]");
    run();
    T_EQ_INT(count("no-gpu", "info"), 1);
    T_EQ_INT(others("no-gpu"), 0);
    fresh();
    run();
    T_EQ_INT(count("no-gpu", NULL), 0);
}

static void torch_build(void)
{
    fresh(); /* CPU wheel of the same version: keep 2.3.0, take the rocm6.0 build */
    SET("python.environments.0.torch", "{\"version\": \"2.3.0+cpu\", \"hip\": null, "
                                       "\"cuda\": null, \"build\": \"cpu\"}");
    SET("python.environments.0.packages.torchvision.version", "\"0.18.0+cpu\"");
    run();
    T_EQ_INT(count("torch-build", "error"), 1);
    T_CHECK(has_fix("torch-build", "/home/alice/venv/bin/python3 -m pip uninstall -y torch "
                                   "torchvision"));
    T_CHECK(has_fix("torch-build", "install --index-url https://download.pytorch.org/whl/rocm6.0 "
                                   "torch==2.3.0+rocm6.0 torchvision==0.18.*"));

    fresh(); /* 2.1 has no rocm6.0 wheel: newest line that has one (2.4, §1) */
    SET("python.environments.0.torch", "{\"version\": \"2.1.2+cu121\", \"hip\": null, "
                                       "\"cuda\": \"12.1\", \"build\": \"cuda\"}");
    SET("python.environments.0.packages.torchvision", NULL);
    run();
    T_EQ_INT(count("torch-build", "error"), 1);
    T_CHECK(has_fix("torch-build", "--index-url https://download.pytorch.org/whl/rocm6.0 "
                                   "torch==2.4.*"));
    /* or keep 2.1 with its newest variant the 6.0 driver (5.6-6.2) supports: rocm5.6 */
    T_CHECK(has_fix("torch-build", "or keep torch 2.1: /home/alice/venv/bin/python3 -m pip "
                                   "install --index-url https://download.pytorch.org/whl/rocm5.6 "
                                   "torch==2.1.2+rocm5.6"));

    fresh(); /* GPUs not collected, ROCm installed: a warning, not an error */
    SET("gpus", "{\"collected\": false, \"reason\": \"no /sys under --root\"}");
    SET("python.environments.0.torch.build", "\"cpu\"");
    run();
    T_EQ_INT(count("torch-build", "warning"), 1);
    T_EQ_INT(count("torch-build", "error"), 0);

    fresh(); /* ROCm wheel on an NVIDIA machine */
    SET("gpus.devices.0", "{\"pci_address\": \"0000:65:00.0\", \"vendor\": \"nvidia\", "
                          "\"vendor_id\": \"0x10de\", \"driver\": \"nvidia\"}");
    run();
    T_EQ_INT(count("torch-build", "error"), 1);

    fresh(); /* a CUDA workstation whose Ryzen CPU has an AMD iGPU (gfx1036): not an AMD
                machine for torch, /dev/kfd, or visibility */
    SET("gpus.devices.0.kfd", "{\"node\": 1, \"gfx_target_version\": 100306}");
    SET("gpus.devices.+", "{\"pci_address\": \"0000:65:00.0\", \"vendor\": \"nvidia\", "
                          "\"vendor_id\": \"0x10de\", \"driver\": \"nvidia\"}");
    SET("python.environments.0.torch", "{\"version\": \"2.3.0+cu121\", \"hip\": null, "
                                       "\"cuda\": \"12.1\", \"build\": \"cuda\"}");
    SET("python.environments.0.packages.torchvision", NULL);
    SET("permissions.devices", "[{\"path\": \"/dev/nvidia0\", \"readable\": true, "
                               "\"writable\": true}]");
    SET("environment.variables.CUDA_VISIBLE_DEVICES", "\"0\"");
    SET("stacks.installs", "[]"); /* no ROCm software at all */
    run();
    T_EQ_INT(count("torch-build", NULL), 0);
    T_EQ_INT(count("gpu-access", NULL), 0);
    T_EQ_INT(count("visible-devices", NULL), 0);

    fresh(); /* AMD and NVIDIA dGPUs: a CUDA build is fine, a CPU build is not */
    SET("gpus.devices.+", "{\"pci_address\": \"0000:65:00.0\", \"vendor\": \"nvidia\", "
                          "\"vendor_id\": \"0x10de\", \"driver\": \"nvidia\"}");
    SET("python.environments.0.torch.build", "\"cuda\"");
    SET("python.environments.0.torch.version", "\"2.3.0+cu121\"");
    SET("python.environments.0.packages.torchvision", NULL);
    run();
    T_EQ_INT(count("torch-build", NULL), 0);
    SET("python.environments.0.torch.build", "\"cpu\"");
    run();
    T_EQ_INT(count("torch-build", "error"), 1);

    fresh();
    run();
    T_EQ_INT(count("torch-build", NULL), 0);
}

static void torch_runtime(void)
{
    fresh(); /* torch/lib's HIP runtime replaced by a ROCm 5 copy */
    SET("python.environments.0.torch.bundled_libraries.0.soname", "\"libamdhip64.so.5\"");
    run();
    T_EQ_INT(count("torch-runtime", "error"), 1);
    T_CHECK(has_fix("torch-runtime", "--force-reinstall --no-deps --index-url "
                                     "https://download.pytorch.org/whl/rocm6.0 torch==2.3.0"));

    fresh(); /* not bundling (distro/user build), runtime missing from the loader */
    SET("python.environments.0.torch.bundled_libraries", NULL);
    SET("loader/resolved/libamdhip64.so.6", NULL);
    run();
    T_EQ_INT(count("torch-runtime", "error"), 1);

    fresh(); /* not bundling, loader finds ROCm 6.2's libamdhip64.so.6 */
    SET("python.environments.0.torch.bundled_libraries", NULL);
    SET("stacks.installs.+", "{\"kind\": \"rocm\", \"layout\": \"amd\", \"prefix\": "
                             "\"/opt/rocm-6.2.0\", \"version\": \"6.2.0\"}");
    SET("loader/resolved/libamdhip64.so.6",
        "{\"path\": \"/opt/rocm-6.2.0/lib/libamdhip64.so.6.2.41133\", \"via\": \"ld.so.conf\"}");
    run();
    T_EQ_INT(count("torch-runtime", "warning"), 1);

    fresh(); /* not bundling, loader finds the matching 6.0 runtime */
    SET("python.environments.0.torch.bundled_libraries", NULL);
    run();
    T_EQ_INT(count("torch-runtime", NULL), 0);
    fresh();
    run();
    T_EQ_INT(count("torch-runtime", NULL), 0);
}

static void ld_preload(void)
{
    fresh();
    SET("loader.ld_preload", "[\"/opt/rocm-5.7.0/lib/libamdhip64.so.5\"]");
    run();
    T_EQ_INT(count("ld-preload", "warning"), 1);
    fresh();
    SET("loader.ld_preload", "[\"/usr/lib/x86_64-linux-gnu/libjemalloc.so.2\"]");
    run();
    T_EQ_INT(count("ld-preload", NULL), 0);
}

static void set_gfx(const char *gfx, int version)
{
    char v[64];
    snprintf(v, sizeof v, "\"%s\"", gfx);
    SET("gpus.devices.0.kfd.gfx_target", v);
    snprintf(v, sizeof v, "%d", version);
    SET("gpus.devices.0.kfd.gfx_target_version", v);
}

static void gfx_not_in_wheel(void)
{
    fresh(); /* RX 6700 XT: no wheel has gfx1031; 10.3.0 is the safe override (§3) */
    set_gfx("gfx1031", 100301);
    run();
    T_EQ_INT(count("gfx-not-in-wheel", "error"), 1);
    T_CHECK(has_fix("gfx-not-in-wheel", "export HSA_OVERRIDE_GFX_VERSION=10.3.0 (safe"));
    T_CHECK(has_fix("gfx-not-in-wheel", "no official wheel in the kb carries gfx1031"));

    fresh(); /* RX 7800 XT on torch 2.3: native from 2.6; driver 6.0 supports up to 6.2 */
    set_gfx("gfx1101", 110001);
    run();
    T_EQ_INT(count("gfx-not-in-wheel", "error"), 1);
    T_CHECK(has_fix("gfx-not-in-wheel", "--index-url https://download.pytorch.org/whl/rocm6.2.4 "
                                        "torch==2.7.*"));
    T_CHECK(has_fix("gfx-not-in-wheel", "HSA_OVERRIDE_GFX_VERSION=11.0.0 would run gfx1100 code "
                                        "here: risky"));

    fresh(); /* 780M: the override to 11.0.0 is not safe (§3) */
    set_gfx("gfx1103", 110003);
    run();
    T_CHECK(has_fix("gfx-not-in-wheel", "do NOT use HSA_OVERRIDE_GFX_VERSION=11.0.0"));

    fresh(); /* with the safe override set, the GPU runs as gfx1030: no error here */
    set_gfx("gfx1031", 100301);
    SET("environment.variables.HSA_OVERRIDE_GFX_VERSION", "\"10.3.0\"");
    run();
    T_EQ_INT(count("gfx-not-in-wheel", NULL), 0);

    fresh(); /* targets not collected: the kb's PYTORCH_ROCM_ARCH decides (2.3 rocm5.7: no gfx942) */
    SET("python.environments.0.torch.gpu_targets", "{\"collected\": false, \"reason\": \"x\"}");
    SET("python.environments.0.torch.version", "\"2.3.0+rocm5.7\"");
    SET("python.environments.0.torch.hip", "\"5.7.31921-d1770ee1b\"");
    SET("python.environments.0.torch.bundled_libraries.0.soname", "\"libamdhip64.so.5\"");
    SET("python.environments.0.packages.torchvision.version", "\"0.18.0+rocm5.7\"");
    set_gfx("gfx942", 90402);
    run();
    T_EQ_INT(count("gfx-not-in-wheel", "error"), 1);
    T_CHECK(has_evidence("gfx-not-in-wheel", "kb: PYTORCH_ROCM_ARCH"));
    set_gfx("gfx90a", 90010);
    run();
    T_EQ_INT(count("gfx-not-in-wheel", NULL), 0);

    fresh();
    run();
    T_EQ_INT(count("gfx-not-in-wheel", NULL), 0);
}

static void rocblas_kernels(void)
{
    fresh(); /* MI50 with a rocm6.4 wheel: rocBLAS 6.4 dropped gfx906 (#4625) */
    set_gfx("gfx906", 90006);
    SET("python.environments.0.torch.version", "\"2.8.0+rocm6.4\"");
    SET("python.environments.0.torch.hip", "\"6.4.43484\"");
    SET("python.environments.0.torch.gpu_targets.targets", "[\"gfx906\", \"gfx90a\"]");
    run();
    T_EQ_INT(count("rocblas-kernels", "error"), 1);
    T_CHECK(has_fix("rocblas-kernels", "--index-url https://download.pytorch.org/whl/rocm6.3 "
                                       "torch==2.9.*"));
    fresh(); /* the same GPU on the rocm6.0 wheel is fine */
    set_gfx("gfx906", 90006);
    run();
    T_EQ_INT(count("rocblas-kernels", NULL), 0);
}

static void torch_companions(void)
{
    fresh();
    SET("python.environments.0.packages.torchvision.version", "\"0.18.0+rocm5.7\"");
    run();
    T_EQ_INT(count("torch-companions", "error"), 1);
    T_CHECK(has_fix("torch-companions", "--index-url https://download.pytorch.org/whl/rocm6.0 "
                                        "torchvision==0.18.*"));
    fresh();
    SET("python.environments.0.packages.torchvision.version", "\"0.17.1+rocm6.0\"");
    run();
    T_EQ_INT(count("torch-companions", "error"), 1);
    fresh(); /* a PyPI torchvision (no label) next to a ROCm torch */
    SET("python.environments.0.packages.torchvision.version", "\"0.18.0\"");
    run();
    T_EQ_INT(count("torch-companions", "error"), 1);
    fresh(); /* a PyPI torchvision next to a CUDA-index torch: likely, not certain */
    SET("python.environments.0.torch.version", "\"2.11.0+cu130\"");
    SET("python.environments.0.packages.torch.version", "\"2.11.0+cu130\"");
    SET("python.environments.0.packages.torchvision.version", "\"0.26.0\"");
    run();
    T_EQ_INT(count("torch-companions", "error"), 0);
    T_EQ_INT(count("torch-companions", "warning"), 1);
    fresh();
    run();
    T_EQ_INT(count("torch-companions", NULL), 0);
}

static void hsa_override(void)
{
    fresh();
    SET("environment.variables.HSA_OVERRIDE_GFX_VERSION", "\"10.3\"");
    run();
    T_EQ_INT(count("hsa-override", "error"), 1);

    fresh(); /* gfx1103 as gfx1100: page faults (§3) */
    set_gfx("gfx1103", 110003);
    SET("environment.variables.HSA_OVERRIDE_GFX_VERSION", "\"11.0.0\"");
    run();
    T_EQ_INT(count("hsa-override", "error"), 1);
    T_EQ_INT(count("gfx-not-in-wheel", NULL), 0); /* the override targets a wheel arch */

    fresh(); /* RDNA1 as RDNA2 */
    set_gfx("gfx1010", 100100);
    SET("environment.variables.HSA_OVERRIDE_GFX_VERSION", "\"10.3.0\"");
    run();
    T_EQ_INT(count("hsa-override", "error"), 1);

    fresh(); /* the safe pair: info only */
    set_gfx("gfx1031", 100301);
    SET("environment.variables.HSA_OVERRIDE_GFX_VERSION", "\"10.3.0\"");
    run();
    T_EQ_INT(count("hsa-override", "info"), 1);
    T_EQ_INT(count("hsa-override", "error") + count("hsa-override", "warning"), 0);

    fresh(); /* natively supported gfx90a told to be gfx942: loads the wrong code */
    SET("environment.variables.HSA_OVERRIDE_GFX_VERSION", "\"9.4.2\"");
    run();
    T_EQ_INT(count("hsa-override", "error"), 1);

    fresh(); /* the override names the GPU's own target */
    SET("environment.variables.HSA_OVERRIDE_GFX_VERSION", "\"9.0.10\"");
    run();
    T_EQ_INT(count("hsa-override", "info"), 1);
    T_EQ_INT(count("hsa-override", "error"), 0);

    fresh(); /* per-node override for node 1 (this GPU) vs node 2 (none) */
    set_gfx("gfx1103", 110003);
    SET("environment.variables.HSA_OVERRIDE_GFX_VERSION_1", "\"11.0.0\"");
    run();
    T_EQ_INT(count("hsa-override", "error"), 1);
    fresh();
    SET("environment.variables.HSA_OVERRIDE_GFX_VERSION_2", "\"11.0.0\"");
    run();
    T_EQ_INT(count("hsa-override", NULL), 0);

    fresh(); /* a profile.d file sets it; two different GPUs share one global override */
    set_gfx("gfx1031", 100301);
    SET("gpus.devices.+", "{\"pci_address\": \"0000:04:00.0\", \"vendor\": \"amd\", "
                          "\"driver\": \"amdgpu\", \"kfd\": {\"node\": 2, "
                          "\"gfx_target_version\": 110000, \"gfx_target\": \"gfx1100\"}}");
    SET("environment.profile_d.0.sets.HSA_OVERRIDE_GFX_VERSION", "\"10.3.0\"");
    run();
    T_EQ_INT(count("hsa-override", "warning"), 1); /* mixed targets */
    T_EQ_INT(count("hsa-override", "error"), 1);   /* gfx1100 (RDNA3) as gfx1030 (RDNA2) */
    T_CHECK(has_evidence("hsa-override", "profile_d[0]"));

    fresh();
    run();
    T_EQ_INT(count("hsa-override", NULL), 0);
}

static void kmd_window(void)
{
    fresh(); /* driver 6.0 supports 5.6-6.2 (§5); system ROCm 6.4 */
    SET("stacks.installs.0.version", "\"6.4.0\"");
    SET("stacks.rocm_core.version", "\"6.4.0.60400-47~22.04\"");
    run();
    T_EQ_INT(count("kmd-window", "warning"), 1);
    fresh(); /* the wheel's bundled ROCm 6.4 on driver 6.0 */
    SET("python.environments.0.torch.version", "\"2.8.0+rocm6.4\"");
    SET("python.environments.0.torch.hip", "\"6.4.43484\"");
    run();
    T_EQ_INT(count("kmd-window", "warning"), 1);
    fresh(); /* the kernel's own amdgpu: not checkable */
    SET("drivers.dkms", "{}");
    run();
    T_EQ_INT(count("kmd-window", NULL), 0);
    T_EQ_INT(unchecked("kmd-window"), 1);
    fresh();
    run();
    T_EQ_INT(count("kmd-window", NULL), 0);
}

static const char install57[] = "{\"kind\": \"rocm\", \"layout\": \"amd\", \"prefix\": "
                                "\"/opt/rocm-5.7.0\", \"version\": \"5.7.0\", "
                                "\"is_default\": false}";

static void rocm_mixed_path(void)
{
    fresh();
    SET("stacks.installs.+", install57);
    SET("loader.ld_library_path", "[\"/opt/rocm-5.7.0/lib\"]");
    run();
    T_EQ_INT(count("rocm-mixed-path", "error"), 1);
    T_CHECK(has_fix("rocm-mixed-path", "remove /opt/rocm-5.7.0/lib from LD_LIBRARY_PATH"));
    T_EQ_INT(others("rocm-mixed-path"), 0);

    fresh();
    SET("stacks.installs.+", install57);
    SET("loader.conf_files.+", "{\"path\": \"/etc/ld.so.conf.d/rocm57.conf\", \"dirs\": "
                               "[\"/opt/rocm-5.7.0/lib\"]}");
    run();
    T_EQ_INT(count("rocm-mixed-path", "error"), 1);
    T_CHECK(has_fix("rocm-mixed-path", "from /etc/ld.so.conf.d/rocm57.conf, then run sudo ldconfig"));

    fresh();
    SET("stacks.installs.+", install57);
    SET("environment.profile_d.0.sets.LD_LIBRARY_PATH", "\"/opt/rocm-5.7.0/lib:/usr/lib\"");
    run();
    T_EQ_INT(count("rocm-mixed-path", "error"), 1);

    fresh(); /* a SONAME the default 6.0 ships (librocblas.so.4) resolving into 5.7's tree */
    SET("stacks.installs.+", install57);
    SET("loader/resolved/librocblas.so.4",
        "{\"path\": \"/opt/rocm-5.7.0/lib/librocblas.so.4.0.0\", \"via\": \"ld.so.cache\"}");
    run();
    T_EQ_INT(count("rocm-mixed-path", "error"), 1);

    fresh(); /* a SONAME only 5.7 has (libhipblas.so.1): the only choice, no mix */
    SET("stacks.installs.+", install57);
    SET("loader/resolved/libhipblas.so.1",
        "{\"path\": \"/opt/rocm-5.7.0/lib/libhipblas.so.1.1.0\", \"via\": \"ld.so.conf\"}");
    run();
    T_EQ_INT(count("rocm-mixed-path", NULL), 0);

    fresh(); /* Debian's ROCm 5.7 in the multiarch dir next to AMD's 6.0: the system dir
                itself is no error, a shared SONAME resolving there is */
    SET("stacks.installs.+", "{\"kind\": \"rocm\", \"layout\": \"distro\", \"prefix\": \"/usr\", "
                             "\"libdir\": \"/usr/lib/x86_64-linux-gnu\", \"version\": \"5.7.1\"}");
    SET("loader.conf_files.+", "{\"path\": \"/etc/ld.so.conf.d/x86_64-linux-gnu.conf\", "
                               "\"dirs\": [\"/usr/lib/x86_64-linux-gnu\"]}");
    SET("loader/resolved/libamdhip64.so.5",
        "{\"path\": \"/usr/lib/x86_64-linux-gnu/libamdhip64.so.5.7.31921\", \"via\": \"ld.so.conf\"}");
    run();
    T_EQ_INT(count("rocm-mixed-path", NULL), 0);
    SET("loader/resolved/librocblas.so.4",
        "{\"path\": \"/usr/lib/x86_64-linux-gnu/librocblas.so.4.0\", \"via\": \"ld.so.conf\"}");
    run();
    T_EQ_INT(count("rocm-mixed-path", "error"), 1);

    fresh(); /* 5.7 installed side by side but not on the path: fine */
    SET("stacks.installs.+", install57);
    run();
    T_EQ_INT(count("rocm-mixed-path", NULL), 0);
}

static void rocm_unowned(void)
{
    fresh(); /* a 5.7 rocBLAS left in the 6.0 tree */
    SET("libraries.items.+", "{\"name\": \"rocblas\", \"path\": "
                             "\"/opt/rocm-6.0.0/lib/librocblas.so.3.1.0\", \"soname\": "
                             "\"librocblas.so.3\", \"rocm_release\": \"5.7\", \"unowned\": true}");
    run();
    T_EQ_INT(count("rocm-unowned", "error"), 1);
    T_CHECK(has_fix("rocm-unowned", "dpkg -S /opt/rocm-6.0.0/lib/librocblas.so.3.1.0"));
    fresh();
    SET("libraries.items.1.unowned", "true");
    run();
    T_EQ_INT(count("rocm-unowned", "warning"), 1);
    fresh();
    run();
    T_EQ_INT(count("rocm-unowned", NULL), 0);
}

static void rocm_link(void)
{
    fresh(); /* /opt/rocm -> 5.7.0 while rocm-core 6.0.0 is installed */
    SET("stacks.installs.0.is_default", "false");
    SET("stacks.installs.+", "{\"kind\": \"rocm\", \"layout\": \"amd\", \"prefix\": "
                             "\"/opt/rocm-5.7.0\", \"version\": \"5.7.0\", \"is_default\": true}");
    SET("stacks.rocm_link.resolved", "\"/opt/rocm-5.7.0\"");
    run();
    T_EQ_INT(count("rocm-link", "error"), 1);
    T_CHECK(has_fix("rocm-link", "sudo update-alternatives --set rocm /opt/rocm-6.0.0"));
    fresh(); /* dangling link */
    SET("stacks.rocm_link.resolved", NULL);
    run();
    T_EQ_INT(count("rocm-link", "error"), 1);
    fresh();
    run();
    T_EQ_INT(count("rocm-link", NULL), 0);
}

static void rocm_path_env(void)
{
    fresh();
    SET("stacks.installs.+", install57);
    SET("environment.profile_d.0.sets.ROCM_PATH", "\"/opt/rocm-5.7.0\"");
    SET("environment.variables.ROCM_PATH", NULL);
    run();
    T_EQ_INT(count("rocm-path-env", "warning"), 1);
    T_CHECK(has_fix("rocm-path-env", "set ROCM_PATH=/opt/rocm in /etc/profile.d/rocm.sh"));
    T_EQ_INT(others("rocm-path-env"), 0);
    fresh(); /* /opt/rocm and the default release's own prefix are both fine */
    SET("stacks.installs.+", install57);
    SET("environment.variables.HIP_PATH", "\"/opt/rocm-6.0.0\"");
    run();
    T_EQ_INT(count("rocm-path-env", NULL), 0);
}

static void render_node_count(void)
{
    fresh(); /* two AMD GPUs, one render node */
    SET("gpus.devices.+", "{\"pci_address\": \"0000:04:00.0\", \"vendor\": \"amd\", "
                          "\"driver\": \"amdgpu\", \"kfd\": {\"node\": 2, "
                          "\"gfx_target_version\": 90010}}");
    run();
    T_EQ_INT(count("gpu-access", "warning"), 1);
    SET("host.container.inside", "true");
    run();
    T_EQ_INT(count("gpu-access", "info"), 1);
    T_EQ_INT(count("gpu-access", "warning"), 0);
    SET("permissions.devices.+", "{\"path\": \"/dev/dri/renderD129\", \"readable\": true, "
                                 "\"writable\": true}");
    run();
    T_EQ_INT(count("gpu-access", NULL), 0);
}

static void rocm_support_igpu(void)
{
    fresh();
    set_gfx("gfx1031", 100301);
    run();
    T_EQ_INT(count("rocm-support", "info"), 1);
    fresh();
    run();
    T_EQ_INT(count("rocm-support", NULL), 0);

    fresh();
    set_gfx("gfx1100", 110000);
    SET("gpus.devices.+", "{\"pci_address\": \"0000:0e:00.0\", \"vendor\": \"amd\", "
                          "\"driver\": \"amdgpu\", \"kfd\": {\"node\": 2, "
                          "\"gfx_target_version\": 100306}}");
    run();
    T_EQ_INT(count("igpu-dgpu", "warning"), 1);
    fresh();
    run();
    T_EQ_INT(count("igpu-dgpu", NULL), 0);
}

static void env_rules(void)
{
    fresh();
    SET("environment.variables.NVIDIA_TF32_OVERRIDE", "\"0\"");
    SET("environment.variables.TORCH_BLAS_PREFER_HIPBLASLT", "\"1\"");
    SET("environment.variables.MIOPEN_DEBUG_CONV_WINOGRAD", "\"0\"");
    SET("environment.variables.PYTORCH_TUNABLEOP_ENABLED", "\"0\"");  /* the default */
    SET("environment.variables.MIOPEN_DEBUG_CONV_GEMM", "\"1\"");     /* enabled = default */
    SET("environment.variables.CUBLAS_WORKSPACE_CONFIG", "\":4096:8\"");
    run();
    T_EQ_INT(count("numerics-env", "warning"), 3);
    T_EQ_INT(others("numerics-env"), 0);

    fresh();
    SET("environment.variables.AMD_SERIALIZE_KERNEL", "\"3\"");
    SET("environment.variables.HSA_ENABLE_SDMA", "\"0\"");
    SET("environment.variables.CUDA_LAUNCH_BLOCKING", "\"1\"");
    SET("environment.variables.AMD_SERIALIZE_COPY", "\"0\"");
    run();
    T_EQ_INT(count("debug-env", "warning"), 3);

    fresh();
    SET("environment.variables.CUDA_INJECTION64_PATH", "\"/opt/tool/libinject.so\"");
    run();
    T_EQ_INT(count("tooling-env", "warning"), 1);

    fresh(); /* the same via profile.d: fix names the file */
    SET("environment.profile_d.0.sets.AMD_SERIALIZE_KERNEL", "\"3\"");
    run();
    T_EQ_INT(count("debug-env", "warning"), 1);
    T_CHECK(has_fix("debug-env", "remove AMD_SERIALIZE_KERNEL from /etc/profile.d/rocm.sh"));

    fresh();
    run();
    T_EQ_INT(count("numerics-env", NULL) + count("debug-env", NULL) + count("tooling-env", NULL),
             0);
}

static void visible_devices(void)
{
    const char *hide_all[] = {"\"\"", "\"-1\"", "\"3\""};
    for (int i = 0; i < 3; i++) {
        fresh();
        SET("environment.variables.HIP_VISIBLE_DEVICES", hide_all[i]);
        run();
        T_EQ_INT(count("visible-devices", "error"), 1);
    }
    fresh(); /* HIP honours CUDA_VISIBLE_DEVICES too */
    SET("environment.variables.CUDA_VISIBLE_DEVICES", "\"\"");
    run();
    T_EQ_INT(count("visible-devices", "error"), 1);
    fresh();
    SET("environment.variables.ROCR_VISIBLE_DEVICES", "\"0\"");
    SET("environment.variables.HIP_VISIBLE_DEVICES", "\"0\"");
    run();
    T_EQ_INT(count("visible-devices", "warning"), 1);
    T_EQ_INT(count("visible-devices", "error"), 0);
    fresh();
    SET("environment.variables.HIP_VISIBLE_DEVICES", "\"0\"");
    run();
    T_EQ_INT(count("visible-devices", NULL), 0);
    fresh(); /* a UUID selects a GPU */
    SET("environment.variables.ROCR_VISIBLE_DEVICES", "\"GPU-4e3c0d6c1f2a3b4c\"");
    run();
    T_EQ_INT(count("visible-devices", NULL), 0);
}

static void cuda_rules(void)
{
    fresh();
    SET("loader/resolved/libcuda.so.1", "{\"path\": \"/usr/local/cuda/lib64/stubs/libcuda.so\", "
                                        "\"via\": \"LD_LIBRARY_PATH\", \"stub\": true}");
    run();
    T_EQ_INT(count("cuda-stub", "error"), 1);
    T_CHECK(has_fix("cuda-stub", "from LD_LIBRARY_PATH"));
    fresh();
    SET("loader.ld_library_path", "[\"/usr/local/cuda-12.4/lib64/stubs\"]");
    run();
    T_EQ_INT(count("cuda-stub", "warning"), 1);
    fresh();
    run();
    T_EQ_INT(count("cuda-stub", NULL), 0);

    fresh(); /* CUDA 12 needs >= 525.60.13 */
    SET("stacks.installs.+", "{\"kind\": \"cuda\", \"layout\": \"driver\", \"libdir\": "
                             "\"/usr/lib/x86_64-linux-gnu\", \"version\": \"470.82.01\"}");
    SET("stacks.installs.+", "{\"kind\": \"cuda\", \"layout\": \"toolkit\", \"prefix\": "
                             "\"/usr/local/cuda-12.4\", \"version\": \"12.4.131\"}");
    run();
    T_EQ_INT(count("cuda-driver", "error"), 1);
    SET("stacks.installs.1.version", "\"550.54.14\"");
    run();
    T_EQ_INT(count("cuda-driver", NULL), 0);
    fresh(); /* a toolkit without a driver (a build host) */
    SET("stacks.installs.+", "{\"kind\": \"cuda\", \"layout\": \"toolkit\", \"prefix\": "
                             "\"/usr/local/cuda-13.0\", \"version\": \"13.0.48\"}");
    run();
    T_EQ_INT(count("cuda-driver", NULL), 0);
}

static void process_libs(void)
{
    fresh();
    SET("process", "{\"collected\": true, \"pid\": 1234, \"mapped\": ["
                   "{\"name\": \"hip-runtime\", \"path\": \"/home/alice/venv/lib/python3.10/"
                   "site-packages/torch/lib/libamdhip64.so\"},"
                   "{\"name\": \"hip-runtime\", \"path\": "
                   "\"/opt/rocm-5.7.0/lib/libamdhip64.so.5.7.31921\"},"
                   "{\"name\": \"rocblas\", \"path\": \"/opt/rocm-6.0.0/lib/librocblas.so.4\"}]}");
    run();
    T_EQ_INT(count("process-libs", "error"), 1);
    SET("process.mapped.1", NULL);
    run();
    T_EQ_INT(count("process-libs", NULL), 0);
}

static void unheld_packages(void)
{
    fresh();
    SET("packages.items.2.hold", "true");
    run();
    T_EQ_INT(count("unheld-packages", "warning"), 1);
    T_CHECK(has_fix("unheld-packages", "sudo apt-mark hold hip-runtime-amd rocblas"));
    SET("packages.manager", "\"rpm\"");
    run();
    T_CHECK(has_fix("unheld-packages", "sudo dnf versionlock add hip-runtime-amd rocblas"));
    fresh(); /* a held NVIDIA driver says nothing about the ROCm packages */
    SET("packages.items.+", "{\"name\": \"nvidia-driver-550\", \"version\": \"550.54.15-1\", "
                            "\"hold\": true, \"gpu\": true}");
    run();
    T_EQ_INT(count("unheld-packages", NULL), 0);
    fresh();
    run();
    T_EQ_INT(count("unheld-packages", NULL), 0);
}

static void report_document(void)
{
    fresh();
    SET("environment.variables.AMD_SERIALIZE_KERNEL", "\"3\"");
    SET("permissions.devices.0.writable", "false");
    json_t *doc = gv_doctor_report(S, "x.json");
    T_EQ_STR(json_string_value(json_object_get(doc, "schema")), "gpuvet.doctor");
    T_EQ_INT(json_integer_value(json_object_get(doc, "schema_version")), 1);
    json_t *sum = json_object_get(doc, "summary");
    T_EQ_INT(json_integer_value(json_object_get(sum, "errors")), 1);
    T_EQ_INT(json_integer_value(json_object_get(sum, "warnings")), 1);
    json_t *first = json_array_get(json_object_get(doc, "findings"), 0);
    T_EQ_STR(json_string_value(json_object_get(first, "severity")), "error");
    json_decref(doc);
}

int main(void)
{
    T_RUN(healthy_has_no_findings);
    T_RUN(nothing_collected_gives_only_notes);
    T_RUN(gpu_access);
    T_RUN(kernel_driver);
    T_RUN(nouveau);
    T_RUN(no_gpu);
    T_RUN(torch_build);
    T_RUN(torch_runtime);
    T_RUN(ld_preload);
    T_RUN(gfx_not_in_wheel);
    T_RUN(rocblas_kernels);
    T_RUN(torch_companions);
    T_RUN(hsa_override);
    T_RUN(kmd_window);
    T_RUN(rocm_mixed_path);
    T_RUN(rocm_unowned);
    T_RUN(rocm_link);
    T_RUN(rocm_path_env);
    T_RUN(render_node_count);
    T_RUN(rocm_support_igpu);
    T_RUN(env_rules);
    T_RUN(visible_devices);
    T_RUN(cuda_rules);
    T_RUN(process_libs);
    T_RUN(unheld_packages);
    T_RUN(report_document);
    json_decref(F);
    json_decref(S);
    return t_done();
}
