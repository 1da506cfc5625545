/* CUDA binary/PTX compatibility of a framework's targets (see cuda_compat.h). */
#include "kb/cuda_compat.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* "sm_90a" -> kind 's', 9, 0, variant 'a'; "compute_120" -> 'c', 12, 0, 0.
 * Arch numbers are major*10 + minor (minor < 10). 0 on a name it does not know. */
static int parse_target(const char *t, char *kind, int *major, int *minor, char *variant)
{
    const char *num;
    if (!strncmp(t, "sm_", 3))
        *kind = 's', num = t + 3;
    else if (!strncmp(t, "compute_", 8))
        *kind = 'c', num = t + 8;
    else
        return 0;
    char *end;
    long v = strtol(num, &end, 10);
    if (end == num || v < 10 || v > 999)
        return 0;
    *variant = 0;
    if (*end == 'a' || *end == 'f')
        *variant = *end++;
    if (*end)
        return 0;
    *major = (int)(v / 10), *minor = (int)(v % 10);
    return 1;
}

static int covers(char kind, int tmaj, int tmin, char variant, int major, int minor)
{
    if (variant == 'a')
        return tmaj == major && tmin == minor;
    if (kind == 's' || variant == 'f') /* cubins, and family-specific PTX */
        return tmaj == major && minor >= tmin;
    return major > tmaj || (major == tmaj && minor >= tmin); /* plain PTX: any newer GPU */
}

/* Every covering target of kind k ('s' cubin, 'c' PTX), comma-separated. */
static size_t covering(const char *const *targets, size_t n, char k, int major, int minor,
                       char *out, size_t outsz)
{
    size_t found = 0;
    out[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        char kind, variant;
        int tmaj, tmin;
        if (!targets[i] || !parse_target(targets[i], &kind, &tmaj, &tmin, &variant) ||
            kind != k || !covers(kind, tmaj, tmin, variant, major, minor))
            continue;
        size_t used = strlen(out);
        snprintf(out + used, outsz - used, "%s%s", found ? ", " : "", targets[i]);
        found++;
    }
    return found;
}

enum gv_cuda_cover gv_cuda_targets_cover(const char *const *targets, size_t n, int major,
                                         int minor, char *how, size_t howsz)
{
    if (covering(targets, n, 's', major, minor, how, howsz))
        return GV_CUDA_SASS;
    if (covering(targets, n, 'c', major, minor, how, howsz))
        return GV_CUDA_PTX;
    snprintf(how, howsz, "no cubin for compute capability %d.%d and no PTX it can JIT",
             major, minor);
    return GV_CUDA_NONE;
}

static json_t *judge(const char *prefix, const json_t *torch, int major, int minor)
{
    const json_t *gt = json_object_get(torch, "gpu_targets");
    const json_t *arr = json_object_get(gt, "targets");
    if (!json_is_true(json_object_get(gt, "collected")) || !json_is_array(arr))
        return NULL;
    size_t n = json_array_size(arr);
    const char **t = calloc(n ? n : 1, sizeof *t);
    if (!t)
        return NULL;
    int cuda = 0;
    for (size_t i = 0; i < n; i++) {
        t[i] = json_string_value(json_array_get(arr, i));
        cuda |= t[i] && (!strncmp(t[i], "sm_", 3) || !strncmp(t[i], "compute_", 8));
    }
    json_t *o = NULL;
    if (cuda) {
        char how[160], msg[512];
        enum gv_cuda_cover c = gv_cuda_targets_cover(t, n, major, minor, how, sizeof how);
        const char *ver = json_string_value(json_object_get(torch, "version"));
        if (c == GV_CUDA_SASS)
            snprintf(msg, sizeof msg, "torch %s (%s) has kernels for this GPU (%d.%d): %s",
                     ver ? ver : "?", prefix, major, minor, how);
        else if (c == GV_CUDA_PTX)
            snprintf(msg, sizeof msg, "torch %s (%s) has no cubin for this GPU (%d.%d): the "
                     "driver JIT-compiles its %s PTX at first use (slow start; other code than "
                     "a native build)", ver ? ver : "?", prefix, major, minor, how);
        else
            snprintf(msg, sizeof msg, "torch %s (%s) cannot run on this GPU (%d.%d): %s; "
                     "PyTorch fails with \"no kernel image is available for execution on the "
                     "device\": install a build that targets sm_%d%d", ver ? ver : "?", prefix,
                     major, minor, how, major, minor);
        o = json_pack("{s:s, s:s?, s:s, s:s, s:s}", "prefix", prefix, "torch", ver, "cover",
                      c == GV_CUDA_SASS ? "sass" : c == GV_CUDA_PTX ? "ptx" : "none", "how", how,
                      "message", msg);
    }
    free(t);
    return o;
}

json_t *gv_cuda_framework_compat(const json_t *snapshot, const char *cc)
{
    json_t *out = json_array();
    int major = 0, minor = 0;
    if (!cc || sscanf(cc, "%d.%d", &major, &minor) != 2 || major <= 0)
        return out;
    const json_t *envs = json_object_get(json_object_get(snapshot, "python"), "environments");
    size_t i;
    json_t *e;
    json_array_foreach(envs, i, e) {
        const char *prefix = json_string_value(json_object_get(e, "prefix"));
        json_t *o = judge(prefix ? prefix : "?", json_object_get(e, "torch"), major, minor);
        if (o)
            json_array_append_new(out, o);
    }
    return out;
}
