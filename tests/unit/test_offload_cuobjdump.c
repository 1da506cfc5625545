/* gpuvet's NVIDIA fatbin reader (src/env/offload.c, a reverse-engineered
 * layout) against NVIDIA's own cuobjdump, on the large real libraries of the
 * machine: cuBLAS, cuBLASLt, cuDNN's engines, NVRTC's builtins, PyTorch's
 * libtorch_cuda.so where installed. For each file the set of targets must be
 * exactly cuobjdump's (sm_XY for each ELF, compute_XY for each PTX) and the
 * number of code objects the same. Skipped (77) where cuobjdump or every
 * candidate file is missing (the toolkit of the CPU test machine has no
 * cuobjdump; the GPU machine has). Found there: gpuvet dropped the "a" of
 * arch-specific code (sm_90a, sm_100a, sm_103a, sm_120a, sm_121a in cuBLASLt,
 * cuDNN and libtorch_cuda), now read from the entry's flags. */
#include <glob.h>
#include <unistd.h>

#include "devcode.h"

static int find_cuobjdump(char *tool, size_t toolsz)
{
    const char *home = getenv("CUDA_HOME");
    snprintf(tool, toolsz, "%s/bin/cuobjdump", home && *home ? home : "/usr/local/cuda");
    if (access(tool, X_OK) == 0)
        return 1;
    char *found = tl_capture("command -v cuobjdump");
    int ok = found && found[0] == '/';
    if (ok) {
        found[strcspn(found, "\n")] = '\0';
        snprintf(tool, toolsz, "%s", found);
    }
    free(found);
    return ok && access(tool, X_OK) == 0;
}

/* cuobjdump's listing of one file: "compute_90 sm_80 sm_90" and the count. */
static char *listing(const char *tool, const char *file, long *count)
{
    char *n = tl_capture("( '%s' --list-elf '%s'; '%s' --list-ptx '%s' ) 2>/dev/null | "
                         "grep -c -E '^(ELF|PTX) file' || true", tool, file, tool, file);
    *count = n ? strtol(n, NULL, 10) : -1;
    free(n);
    return tl_capture("( '%s' --list-elf '%s'; '%s' --list-ptx '%s' ) 2>/dev/null | "
                      "grep -o 'sm_[0-9]*[a-z]*\\.\\(cubin\\|ptx\\)' | "
                      "sed 's/^sm_\\([0-9a-z]*\\)\\.ptx$/compute_\\1/; s/\\.cubin$//' | "
                      "LC_ALL=C sort -u | tr '\\n' ' ' | sed 's/ $//'",
                      tool, file, tool, file);
}

/* cuobjdump (13.0) names a family-specific cubin without its suffix: nvcc's
 * sm_100f is listed as sm_100 (seen with -gencode arch=compute_100f,code=sm_100f;
 * test_offload_cuda.c checks the suffix against the nvcc request). Compare
 * gpuvet's names the same way: "sm_120f" -> "sm_120", deduplicated. */
static void as_cuobjdump(const struct gv_offload_targets *t, char *out, size_t outsz)
{
    char prev[64] = "";
    out[0] = '\0';
    char **v = calloc(t->n_targets + 1, sizeof *v);
    if (!v)
        return;
    for (size_t i = 0; i < t->n_targets; i++) {
        v[i] = strdup(t->targets[i]);
        size_t n = v[i] ? strlen(v[i]) : 0;
        if (n > 1 && v[i][n - 1] == 'f' && v[i][n - 2] >= '0' && v[i][n - 2] <= '9')
            v[i][n - 1] = '\0';
    }
    for (size_t i = 0; i < t->n_targets; i++) /* insertion sort, C locale */
        for (size_t j = i; j > 0 && v[j] && v[j - 1] && strcmp(v[j - 1], v[j]) > 0; j--) {
            char *x = v[j];
            v[j] = v[j - 1], v[j - 1] = x;
        }
    for (size_t i = 0; i < t->n_targets; i++) {
        if (v[i] && strcmp(v[i], prev) != 0)
            snprintf(out + strlen(out), outsz - strlen(out), "%s%s", out[0] ? " " : "", v[i]);
        snprintf(prev, sizeof prev, "%s", v[i] ? v[i] : "");
        free(v[i]);
    }
    free(v);
}

static int check_file(const char *tool, const char *file)
{
    long count = -1;
    char *want = listing(tool, file, &count);
    struct gv_offload_targets t;
    struct gv_err err = {0};
    const char *kind = NULL;
    int rc = gv_offload_scan_file(file, &t, &kind, &err);
    fprintf(stderr, "  %s: cuobjdump %ld code objects [%s]; gpuvet rc %d, %zu entries, %zu "
            "skipped, %zu targets\n", file, count, want ? want : "?", rc, t.n_entries,
            t.n_skipped, t.n_targets);
    if (count == 0) { /* nothing for cuobjdump: gpuvet must find no fatbin either */
        T_EQ_INT(rc, GV_E_NOTFOUND);
        free(want);
        return 1;
    }
    T_EQ_INT(rc, GV_OK);
    if (rc == GV_OK) {
        char got[4096];
        as_cuobjdump(&t, got, sizeof got);
        if (!want || strcmp(got, want) != 0)
            fprintf(stderr, "  got [%s], want [%s]\n", got, want ? want : "?");
        T_CHECK(want && strcmp(got, want) == 0);
        T_EQ_INT(t.n_entries, count);
        T_EQ_INT(t.n_skipped, 0);
        gv_offload_free(&t);
    }
    free(want);
    return 1;
}

int main(void)
{
    char tool[600];
    if (!find_cuobjdump(tool, sizeof tool)) {
        printf("skipped: cuobjdump not installed\n");
        return 77;
    }
    static const char *const patterns[] = {
        "/usr/local/cuda/lib64/libcublasLt.so.[0-9]*",
        "/usr/local/cuda/lib64/libcublas.so.[0-9]*",
        "/usr/local/cuda/lib64/libnvrtc-builtins.so.[0-9]*",
        "/usr/lib/x86_64-linux-gnu/libcudnn_engines_precompiled.so.[0-9]*",
        "/opt/torch/.venv/lib/python3*/site-packages/torch/lib/libtorch_cuda.so",
        "/usr/local/lib/python3*/dist-packages/torch/lib/libtorch_cuda.so",
    };
    int files = 0;
    for (size_t i = 0; i < sizeof patterns / sizeof patterns[0]; i++) {
        glob_t g;
        if (glob(patterns[i], 0, NULL, &g) != 0)
            continue;
        /* one file per pattern: the longest name (the real file, not its links) */
        const char *best = NULL;
        for (size_t j = 0; j < g.gl_pathc; j++)
            if (!best || strlen(g.gl_pathv[j]) > strlen(best))
                best = g.gl_pathv[j];
        files += check_file(tool, best);
        globfree(&g);
    }
    if (!files) {
        printf("skipped: none of the CUDA libraries to cross-check is installed\n");
        return 77;
    }
    return t_done();
}
