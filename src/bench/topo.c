/* GPU topology for gpuvet bench (topo.h): sysfs for the PCI tree, NUMA node
 * and link state; the vendor library for peer access. */
#include "bench/topo.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_GPUS 64
#define PCI_DEVICES "/sys/bus/pci/devices"

static int read_line(const char *path, char *buf, size_t n)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    int ok = fgets(buf, (int)n, f) != NULL;
    fclose(f);
    if (!ok)
        return -1;
    buf[strcspn(buf, "\n")] = '\0';
    return 0;
}

/* "pci0000:00/0000:00:01.0/0000:17:00.0" for a PCI address, or "" when not in sysfs. */
static void pci_path(const char *addr, char *out, size_t n)
{
    char link[PATH_MAX], real[PATH_MAX];
    out[0] = '\0';
    snprintf(link, sizeof link, PCI_DEVICES "/%s", addr);
    if (!realpath(link, real))
        return;
    const char *p = strstr(real, "/devices/");
    snprintf(out, n, "%s", p ? p + strlen("/devices/") : real);
}

static int split(const char *path, char parts[][32], int max)
{
    int n = 0;
    const char *p = path;
    while (*p && n < max) {
        size_t len = strcspn(p, "/");
        snprintf(parts[n++], 32, "%.*s", (int)(len < 31 ? len : 31), p);
        p += len;
        if (*p == '/')
            p++;
    }
    return n;
}

const char *gv_bench_pci_relation(const char *a, const char *b)
{
    char pa[32][32], pb[32][32];
    int na = split(a, pa, 32), nb = split(b, pb, 32);
    if (na < 2 || nb < 2)
        return "unknown (not in sysfs)";
    int common = 0;
    /* the last component is the device itself */
    while (common < na - 1 && common < nb - 1 && strcmp(pa[common], pb[common]) == 0)
        common++;
    if (common == 0)
        return "different root complexes";
    if (common == 1)
        return "same root complex (through the host bridge)";
    return "same PCIe switch or bridge";
}

static json_t *gpu_entry(const char *addr, char *path, size_t pathsz)
{
    json_t *o = json_object();
    json_object_set_new(o, "pci_address", json_string(addr));
    pci_path(addr, path, pathsz);
    if (!path[0]) {
        json_object_set_new(o, "sysfs", json_string("not found"));
        return o;
    }
    json_object_set_new(o, "pci_path", json_string(path));
    char root[64];
    snprintf(root, sizeof root, "%.*s", (int)strcspn(path, "/"), path);
    json_object_set_new(o, "root_complex", json_string(root));
    static const char *const attrs[] = {"numa_node", "current_link_speed", "max_link_speed",
                                        "current_link_width", "max_link_width"};
    for (size_t i = 0; i < sizeof attrs / sizeof attrs[0]; i++) {
        char f[PATH_MAX], v[128];
        snprintf(f, sizeof f, PCI_DEVICES "/%s/%s", addr, attrs[i]);
        if (read_line(f, v, sizeof v) == 0)
            json_object_set_new(o, attrs[i], json_string(v));
    }
    return o;
}

static void link_warning(json_t *gpu, int i, json_t *warnings)
{
    const char *cs = json_string_value(json_object_get(gpu, "current_link_speed"));
    const char *ms = json_string_value(json_object_get(gpu, "max_link_speed"));
    const char *cw = json_string_value(json_object_get(gpu, "current_link_width"));
    const char *mw = json_string_value(json_object_get(gpu, "max_link_width"));
    if (cs && ms && cw && mw && (strcmp(cs, ms) != 0 || strcmp(cw, mw) != 0))
        json_array_append_new(warnings,
                              json_sprintf("GPU %d's PCIe link runs at %s x%s, below its maximum "
                                           "%s x%s (it may only be idle: links slow down when "
                                           "unused; look again under load)",
                                           i, cs, cw, ms, mw));
}

json_t *gv_bench_topology(const struct gv_bench_backend *be, struct gv_bdev *d)
{
    json_t *o = json_object(), *gpus = json_array(), *pairs = json_array(),
           *warnings = json_array();
    int n = be->count(d);
    if (n > MAX_GPUS)
        n = MAX_GPUS;
    static char paths[MAX_GPUS][PATH_MAX];
    for (int i = 0; i < n; i++) {
        char addr[64] = "";
        paths[i][0] = '\0';
        json_t *g;
        if (be->pci_address(d, i, addr, sizeof addr) == 0) {
            g = gpu_entry(addr, paths[i], sizeof paths[i]);
        } else {
            g = json_pack("{s:s}", "pci_address", "unknown");
        }
        json_object_set_new(g, "index", json_integer(i));
        link_warning(g, i, warnings);
        json_array_append_new(gpus, g);
    }
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++) {
            char why[160], why2[160];
            int ij = be->peer_access(d, i, j, why, sizeof why);
            int ji = be->peer_access(d, j, i, why2, sizeof why2);
            const char *rel = gv_bench_pci_relation(paths[i], paths[j]);
            json_t *p = json_pack("{s:i,s:i,s:s}", "a", i, "b", j, "pci_relation", rel);
            json_object_set_new(p, "peer_access_a_to_b", ij < 0 ? json_null() : json_boolean(ij));
            json_object_set_new(p, "peer_access_b_to_a", ji < 0 ? json_null() : json_boolean(ji));
            json_array_append_new(pairs, p);
            if (ij == 0 || ji == 0)
                json_array_append_new(
                    warnings, json_sprintf("GPUs %d and %d: P2P is not enabled, so their "
                                           "traffic goes around through PCIe and the host", i, j));
            if (strcmp(rel, "different root complexes") == 0)
                json_array_append_new(
                    warnings, json_sprintf("GPUs %d and %d sit under different PCIe root "
                                           "complexes: cards under different root complexes "
                                           "communicate slower", i, j));
        }
    json_object_set_new(o, "gpus", gpus);
    json_object_set_new(o, "pairs", pairs);
    if (n < 2)
        json_object_set_new(o, "note", json_string(n == 1 ? "one GPU visible: no pairs to measure"
                                                          : "no GPU"));
    json_object_set_new(o, "warnings", warnings);
    return o;
}
