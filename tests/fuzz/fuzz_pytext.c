/* Fuzz target: the text gpuvet reads from Python packages (torch/version.py,
 * METADATA/PKG-INFO headers) and the version strings in file names. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "env/stackscan.h"
#include "kb/hip_versions.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    json_t *o = gv_parse_py_assignments((const char *)data, size);
    json_decref(o);
    char name[64], version[64];
    gv_parse_pkg_metadata((const char *)data, size, name, sizeof name, version, sizeof version);
    char *s = malloc(size + 1);
    if (!s)
        return 0;
    memcpy(s, data, size);
    s[size] = '\0';
    char v[32], r[16];
    gv_version_from_filename(s, v, sizeof v);
    gv_hip_to_rocm_release(s, r, sizeof r);
    gv_hip_exact_rocm(s);
    free(s);
    return 0;
}
