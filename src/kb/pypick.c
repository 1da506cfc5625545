/* Choosing the interpreter for the torch device (see pypick.h). */
#include "kb/pypick.h"

#include <stdio.h>
#include <string.h>

static const char *str(const json_t *o, const char *k)
{
    return json_string_value(json_object_get(o, k));
}

static int is_gpu_build(const char *build)
{
    return build && (!strcmp(build, "rocm") || !strcmp(build, "cuda"));
}

int gv_pick_torch_python(const json_t *python, int want_gpu, char *path, size_t pathsz,
                         char *why, size_t whysz)
{
    const json_t *envs = json_object_get(python, "environments");
    for (int pass = want_gpu ? 0 : 1; pass < 2; pass++) {
        size_t i;
        json_t *e;
        json_array_foreach(envs, i, e) {
            const json_t *t = json_object_get(e, "torch");
            const char *interp = str(e, "interpreter"), *build = str(t, "build");
            if (!json_is_object(t) || !interp || !str(t, "version") ||
                (pass == 0 && !is_gpu_build(build)))
                continue;
            snprintf(path, pathsz, "%s", interp);
            snprintf(why, whysz, "%s: the %s environment %s has torch %s (%s build)%s", interp,
                     str(e, "kind") ? str(e, "kind") : "Python", str(e, "prefix") ? str(e, "prefix") : "?",
                     str(t, "version"), build ? build : "unknown",
                     want_gpu && pass == 1 ? "; no environment has a GPU build of torch" : "");
            return 1;
        }
    }
    snprintf(path, pathsz, "python3");
    snprintf(why, whysz, "python3 from PATH: no Python environment found with torch installed");
    return 0;
}
