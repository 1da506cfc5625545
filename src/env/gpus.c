/* gpus: AMD and NVIDIA display/3D/accelerator devices from the PCI tree in
 * sysfs, with the KFD topology node of each AMD device (the real gfx target,
 * independent of any HSA_OVERRIDE_GFX_VERSION). No vendor tool is needed. */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>

#include "base/fs.h"
#include "base/json.h"
#include "env/offload.h"
#include "env/probe.h"
#include "env/sysutil.h"

#define PCI_DIR "/sys/bus/pci/devices"
#define KFD_NODES "/sys/class/kfd/kfd/topology/nodes"
#define MAX_DEVICES 4096

/* Reads a sysfs hex attribute ("0x1002"). -1 when absent or malformed. */
static long read_hex(const struct gv_probe_ctx *ctx, const char *dev, const char *attr)
{
    char path[GV_PATH_MAX], line[64];
    snprintf(path, sizeof path, PCI_DIR "/%s/%s", dev, attr);
    if (gv_sys_line(ctx, path, line, sizeof line) != 0)
        return -1;
    char *end;
    long v = strtol(line, &end, 16);
    if (end == line || *end || v < 0)
        return -1;
    return v;
}

static void put_hex(json_t *o, const char *key, long v, int digits)
{
    char buf[32];
    if (v < 0)
        return;
    snprintf(buf, sizeof buf, "0x%0*lx", digits, v);
    json_object_set_new(o, key, json_string(buf));
}

static int gpu_class(long cls)
{
    return (cls >> 16) == 0x03 || (cls >> 8) == 0x1200;
}

struct kfd_props {
    long gfx_target_version, location_id, domain, render_minor;
};

static int kfd_line(char *line, void *arg)
{
    struct kfd_props *p = arg;
    char key[64];
    long long v;
    if (sscanf(line, "%63s %lld", key, &v) != 2)
        return 0;
    if (!strcmp(key, "gfx_target_version"))
        p->gfx_target_version = (long)v;
    else if (!strcmp(key, "location_id"))
        p->location_id = (long)v;
    else if (!strcmp(key, "domain"))
        p->domain = (long)v;
    else if (!strcmp(key, "drm_render_minor"))
        p->render_minor = (long)v;
    return 0;
}

/* The KFD node whose domain/location_id matches the PCI address, or NULL. */
static json_t *kfd_for(const struct gv_probe_ctx *ctx, unsigned dom, unsigned bus, unsigned dev,
                       unsigned fn)
{
    DIR *d = gv_root_opendir(ctx->root, KFD_NODES);
    if (!d)
        return NULL;
    long want = (long)((bus << 8) | (dev << 3) | fn);
    json_t *found = NULL;
    struct dirent *e;
    while (!found && (e = readdir(d))) {
        char *end;
        long node = strtol(e->d_name, &end, 10);
        if (e->d_name[0] == '.' || *end)
            continue;
        char path[GV_PATH_MAX], *data;
        snprintf(path, sizeof path, KFD_NODES "/%s/properties", e->d_name);
        if (gv_sys_read(ctx, path, 1 << 16, &data, NULL, NULL))
            continue;
        struct kfd_props p = {-1, -1, 0, -1};
        gv_sys_each_line(data, kfd_line, &p);
        free(data);
        if (p.gfx_target_version <= 0 || p.location_id != want || p.domain != (long)dom)
            continue;
        char gfx[32] = "";
        long v = p.gfx_target_version;
        if ((v / 100) % 100 <= 15 && v % 100 <= 15) /* else no gfx name can spell it */
            gv_gfx_name_from_target_version((unsigned)v, gfx, sizeof gfx);
        found = json_object();
        json_object_set_new(found, "node", json_integer(node));
        json_object_set_new(found, "gfx_target_version", json_integer(p.gfx_target_version));
        if (gfx[0])
            json_object_set_new(found, "gfx_target", json_string(gfx));
        if (p.render_minor >= 0) {
            char rn[64];
            snprintf(rn, sizeof rn, "/dev/dri/renderD%ld", p.render_minor);
            json_object_set_new(found, "render_node", json_string(rn));
        }
        json_object_set_new(found, "source", gv_json_str(path));
    }
    closedir(d);
    return found;
}

/* "Model:" of /proc/driver/nvidia/gpus/ADDR/information, when present. */
static void nvidia_model(const struct gv_probe_ctx *ctx, const char *addr, json_t *o)
{
    char path[GV_PATH_MAX], *data;
    snprintf(path, sizeof path, "/proc/driver/nvidia/gpus/%s/information", addr);
    if (gv_sys_read(ctx, path, 1 << 16, &data, NULL, NULL))
        return;
    char *save = NULL;
    for (char *l = strtok_r(data, "\n", &save); l; l = strtok_r(NULL, "\n", &save))
        if (!strncmp(l, "Model:", 6)) {
            gv_json_put_str(o, "model", gv_sys_trim(l + 6));
            break;
        }
    free(data);
}

static json_t *probe_device(const struct gv_probe_ctx *ctx, const char *addr)
{
    long vendor = read_hex(ctx, addr, "vendor"), cls = read_hex(ctx, addr, "class");
    if ((vendor != 0x1002 && vendor != 0x10de) || !gpu_class(cls))
        return NULL;
    json_t *o = json_object();
    json_object_set_new(o, "pci_address", gv_json_str(addr));
    json_object_set_new(o, "vendor", json_string(vendor == 0x1002 ? "amd" : "nvidia"));
    put_hex(o, "vendor_id", vendor, 4);
    put_hex(o, "device_id", read_hex(ctx, addr, "device"), 4);
    put_hex(o, "revision", read_hex(ctx, addr, "revision"), 2);
    put_hex(o, "subsystem_vendor_id", read_hex(ctx, addr, "subsystem_vendor"), 4);
    put_hex(o, "subsystem_device_id", read_hex(ctx, addr, "subsystem_device"), 4);
    put_hex(o, "class", cls, 6);
    char link[GV_PATH_MAX], target[GV_PATH_MAX];
    snprintf(link, sizeof link, PCI_DIR "/%s/driver", addr);
    if (gv_sys_readlink(ctx, link, target, sizeof target) == 0)
        gv_json_put_str(o, "driver", gv_sys_base(target));
    unsigned dom, bus, dev, fn;
    if (vendor == 0x1002 && sscanf(addr, "%x:%x:%x.%x", &dom, &bus, &dev, &fn) == 4) {
        json_t *kfd = kfd_for(ctx, dom, bus, dev, fn);
        if (kfd)
            json_object_set_new(o, "kfd", kfd);
    }
    if (vendor == 0x10de)
        nvidia_model(ctx, addr, o);
    return o;
}

json_t *gv_probe_gpus(const struct gv_probe_ctx *ctx)
{
    const char *reason;
    if (!gv_sys_have(ctx, PCI_DIR, &reason))
        return gv_section_missing(PCI_DIR, reason);
    struct dirent **names;
    int n = gv_sys_scandir(ctx, PCI_DIR, &names, NULL, alphasort);
    if (n < 0)
        return gv_section_missing(PCI_DIR, "cannot list the directory");
    json_t *s = gv_section_new(PCI_DIR), *devs = json_array();
    for (int i = 0; i < n; i++) {
        if (names[i]->d_name[0] != '.' && i < MAX_DEVICES) {
            json_t *d = probe_device(ctx, names[i]->d_name);
            if (d)
                json_array_append_new(devs, d);
        }
        free(names[i]);
    }
    free(names);
    json_object_set_new(s, "devices", devs);
    return s;
}
