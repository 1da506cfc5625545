#include "plan/verify.h"

#include <string.h>

#include "base/json.h"
#include "env/diff.h"
#include "plan/pkg.h"

/* Sections without which "the stack matches" cannot be proven. */
static const char *const essential[] = {"packages", "libraries", "stacks"};

static int is_gpu_package(const json_t *snap, const char *subject)
{
    size_t i;
    json_t *it;
    size_t n = strcspn(subject, ":");
    json_array_foreach(gv_json_path(snap, "packages.items"), i, it)
    {
        const char *name = json_string_value(json_object_get(it, "name"));
        if (name && strlen(name) == n && !strncmp(name, subject, n))
            return json_is_true(json_object_get(it, "gpu"));
    }
    return 0;
}

/* Does the Python environment named label (its prefix, or its site-packages
 * directory where two share a prefix; env/diff.c) hold a GPU framework? */
static int env_has_framework(const json_t *snap, const char *label)
{
    static const char *const fw[] = {"torch", "tensorflow", "tensorflow-rocm", "jax", "jaxlib",
                                     "onnxruntime", "onnxruntime-gpu", "onnxruntime-rocm", "vllm",
                                     "triton", "pytorch-triton-rocm"};
    size_t i;
    json_t *e;
    json_array_foreach(gv_json_path(snap, "python.environments"), i, e)
    {
        const char *p = json_string_value(json_object_get(e, "prefix"));
        const char *sp = json_string_value(json_object_get(e, "site_packages"));
        if ((!p || strcmp(p, label)) && (!sp || strcmp(sp, label)))
            continue;
        for (size_t k = 0; k < sizeof fw / sizeof fw[0]; k++)
            if (json_object_get(json_object_get(e, "packages"), fw[k]))
                return 1;
    }
    return 0;
}

/* Framework-layer subjects end with "(LABEL)", or are "python environment
 * LABEL" for one that appeared or went. Environments without any GPU
 * framework (the system python3, say) are not part of the GPU stack. */
static int gpu_framework_change(const json_t *baseline, const json_t *current, const char *subject)
{
    static const char whole[] = "python environment ";
    if (subject && !strncmp(subject, whole, sizeof whole - 1))
        return env_has_framework(baseline, subject + sizeof whole - 1) ||
               env_has_framework(current, subject + sizeof whole - 1);
    const char *open = subject ? strrchr(subject, '(') : NULL;
    const char *close = open ? strrchr(open, ')') : NULL;
    if (!open || !close || close[1])
        return 1;
    char prefix[4096];
    size_t n = (size_t)(close - open - 1);
    if (n >= sizeof prefix)
        return 1;
    memcpy(prefix, open + 1, n);
    prefix[n] = '\0';
    return env_has_framework(baseline, prefix) || env_has_framework(current, prefix);
}

static int in_baseline(const json_t *baseline, const char *path)
{
    size_t i;
    json_t *it;
    json_array_foreach(gv_json_path(baseline, "libraries.items"), i, it)
    {
        const char *p = json_string_value(json_object_get(it, "path"));
        if (p && !strcmp(p, path))
            return 1;
    }
    return 0;
}

int gv_verify_stack(const json_t *baseline, const json_t *current, const char *baseline_name,
                    json_t **report, struct gv_err *err)
{
    json_t *diff = NULL;
    int rc = gv_diff_snapshots(baseline, current, baseline_name, "now", &diff, err);
    if (rc)
        return rc;
    json_t *r = json_pack("{s:s, s:i, s:s, s:b, s:[], s:[], s:[], s:i}", "schema",
                          GV_VERIFY_SCHEMA, "schema_version", GV_VERIFY_SCHEMA_VERSION,
                          "baseline", baseline_name ? baseline_name : "", "stack_matches", 1,
                          "differences", "leftovers", "not_comparable", "other_changes",
                          0);
    json_t *diffs = json_object_get(r, "differences");
    int others = 0;
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(diff, "changes"), i, c)
    {
        const char *layer = json_string_value(json_object_get(c, "layer"));
        const char *kind = json_string_value(json_object_get(c, "kind"));
        const char *subject = json_string_value(json_object_get(c, "subject"));
        if (kind && !strcmp(kind, "unowned"))
            continue; /* listed as leftovers below */
        const char *before = json_string_value(json_object_get(c, "before"));
        const char *after = json_string_value(json_object_get(c, "after"));
        if (layer && !strcmp(layer, "packages") && subject &&
            !is_gpu_package(baseline, subject) && !is_gpu_package(current, subject)) {
            others++;
            continue;
        }
        /* Same version, now held: the hold is part of the rollback. */
        if (layer && !strcmp(layer, "packages") && before && after && !strcmp(before, after))
            continue;
        /* ld.so.conf files that name no GPU directory (the C library's own) */
        if (layer && !strcmp(layer, "loader") && subject && !strncmp(subject, "ld.so.conf ", 11) &&
            !gv_gpu_path_hint(subject) && !gv_gpu_path_hint(before) && !gv_gpu_path_hint(after)) {
            others++;
            continue;
        }
        if (layer && !strcmp(layer, "framework") &&
            !gpu_framework_change(baseline, current, subject)) {
            others++;
            continue;
        }
        json_array_append(diffs, c);
    }
    json_object_set_new(r, "other_changes", json_integer(others));
    json_t *nc;
    json_array_foreach(json_object_get(diff, "not_comparable"), i, nc)
    {
        const char *sec = json_string_value(json_object_get(nc, "section"));
        for (size_t k = 0; sec && k < sizeof essential / sizeof essential[0]; k++)
            if (!strcmp(sec, essential[k]))
                json_array_append(json_object_get(r, "not_comparable"), nc);
    }
    json_t *it;
    json_array_foreach(gv_json_path(current, "libraries.items"), i, it)
    {
        const char *path = json_string_value(json_object_get(it, "path"));
        if (!path || !json_is_true(json_object_get(it, "unowned")))
            continue;
        json_t *l = json_pack("{s:s, s:b}", "path", path, "new", !in_baseline(baseline, path));
        gv_json_set_str(l, "name", json_string_value(json_object_get(it, "name")));
        gv_json_set_str(l, "version", json_string_value(json_object_get(it, "version")));
        json_array_append_new(json_object_get(r, "leftovers"), l);
    }
    int matches = json_array_size(diffs) == 0 &&
                  json_array_size(json_object_get(r, "not_comparable")) == 0;
    json_object_set_new(r, "stack_matches", json_boolean(matches));
    json_decref(diff);
    *report = r;
    return GV_OK;
}
