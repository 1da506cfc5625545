/* How the GPUs of a machine are connected, as the machine describes it: each
 * GPU's PCI path (root complex, bridges), NUMA node and PCIe link (current
 * against maximum speed and width), and for each pair whether peer access is
 * possible and where the path between them runs; warnings in the seeds' words
 * when two GPUs talk through the host or sit under different root complexes,
 * or a link runs below its maximum. Read from sysfs and the vendor library. */
#ifndef GV_BENCH_TOPO_H
#define GV_BENCH_TOPO_H

#include <jansson.h>

#include "dev/bench_dev.h"

json_t *gv_bench_topology(const struct gv_bench_backend *be, struct gv_bdev *d);

/* The PCI path of a device below /sys/devices: "pci0000:00/0000:00:01.0/0000:17:00.0"
 * -> root "pci0000:00" and the bridges between; the pair's relation:
 * "same PCIe switch", "same root complex (through the host bridge)",
 * "different root complexes". Exposed for tests. */
const char *gv_bench_pci_relation(const char *path_a, const char *path_b);

#endif
