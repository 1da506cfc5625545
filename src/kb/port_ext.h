/* Facts for `gpuvet port scan --extensions` (src/port/ext.c, docs/port.md
 * "Compiled extensions"): which code objects run on which gfx target, what
 * the HIP runtime says when none does, which libraries mark a GPU extension. */
#ifndef GV_KB_PORT_EXT_H
#define GV_KB_PORT_EXT_H

#include <stddef.h>

/* The HIP runtime's message when a binary has no code object for the GPU
 * (docs/facts/rocm-facts.md §8: ROCm/ROCm #2061, hip_code_object.cpp), and its source. */
extern const char kb_no_binary_message[];
extern const char kb_no_binary_source[];

/* 1 when a code object built for target id code (from an offload bundle:
 * "gfx90a", "gfx90a:xnack-", "gfx11-generic") runs on the GPU target gfx
 * ("gfx1100"): the same processor (features ignored: the runtime matches
 * xnack/sramecc against the device's mode), or a generic processor that
 * covers it (LLVM AMDGPUUsage, "Generic Processors"). */
int kb_code_object_runs_on(const char *code, const char *gfx);

/* 1 when a DT_NEEDED name is a GPU runtime or a GPU build of torch's
 * libraries (libamdhip64, libcudart, libtorch_hip, libc10_cuda, ...): an
 * extension linking one without device code of its own launches only the
 * kernels of what it calls. */
int kb_gpu_runtime_lib(const char *needed);

#endif
