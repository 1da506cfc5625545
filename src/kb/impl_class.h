/* What kind of computation an impl string names (a result case's "impl": a
 * library call, the kernels PyTorch's profiler saw, a gpuvet kernel), so a
 * comparison can say "SIMT fp32 kernels -> TF32 tensor-op kernels" once
 * instead of a pair of kernel names per case; and which environment
 * variables only choose the library file a process loads. Facts with their
 * sources in impl_class.c. */
#ifndef GV_KB_IMPL_CLASS_H
#define GV_KB_IMPL_CLASS_H

#include <stddef.h>

struct kb_impl_class {
    const char *id;     /* "tf32-tensor-op" */
    const char *name;   /* "TF32 tensor-op kernel" */
    const char *source; /* where the naming rule comes from */
};

/* The class of an impl string: the first rule of the table it matches, the
 * class "other" when none does (never NULL). Case-insensitive. */
const struct kb_impl_class *kb_impl_class_of(const char *impl);

/* Whether an environment variable's only effect is which library file the
 * process loads (LD_LIBRARY_PATH, LD_PRELOAD, ROCM_PATH). */
int kb_loader_var(const char *name);

/* Whether loader variable name set to value makes the process load the
 * library file at path: path's directory is one LD_LIBRARY_PATH names, path
 * (or its file name) is one LD_PRELOAD names, path lies under ROCM_PATH. */
int kb_loader_explains(const char *name, const char *value, const char *path);

#endif
