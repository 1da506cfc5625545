#include "env/envpolicy.h"

#include <ctype.h>
#include <string.h>

static const char *const allowed_prefixes[] = {
    "HSA_",    "HIP_",     "ROCR_",   "ROCM_",    "MIOPEN_",   "ROCBLAS_", "HIPBLASLT_",
    "TORCH_",  "PYTORCH_", "CUDA_",   "CUBLAS_",  "CUBLASLT_", "CUDNN_",   "NVIDIA_",
    "NCCL_",   "RCCL_",    "AMD_",    "GPU_",     "OMP_",      "MKL_",     "OPENBLAS_",
};

static const char *const allowed_names[] = {
    "LD_LIBRARY_PATH", "LD_PRELOAD", "PATH", "PYTHONPATH", "CONDA_PREFIX", "VIRTUAL_ENV",
};

static const char *const secret_words[] = {
    "TOKEN", "SECRET", "PASSWORD", "PASSWD", "KEY", "CREDENTIAL", "AUTH",
};

int gv_env_allowed(const char *name, size_t n)
{
    for (size_t i = 0; i < sizeof allowed_names / sizeof allowed_names[0]; i++)
        if (strlen(allowed_names[i]) == n && !memcmp(name, allowed_names[i], n))
            return 1;
    for (size_t i = 0; i < sizeof allowed_prefixes / sizeof allowed_prefixes[0]; i++) {
        size_t l = strlen(allowed_prefixes[i]);
        if (n > l && !memcmp(name, allowed_prefixes[i], l))
            return 1;
    }
    return 0;
}

static int contains_ci(const char *s, size_t n, const char *word)
{
    size_t w = strlen(word);
    for (size_t i = 0; i + w <= n; i++) {
        size_t k = 0;
        while (k < w && toupper((unsigned char)s[i + k]) == word[k])
            k++;
        if (k == w)
            return 1;
    }
    return 0;
}

int gv_env_secret(const char *name, size_t n)
{
    for (size_t i = 0; i < sizeof secret_words / sizeof secret_words[0]; i++)
        if (contains_ci(name, n, secret_words[i]))
            return 1;
    return 0;
}

int gv_env_recordable(const char *name, size_t n)
{
    return gv_env_allowed(name, n) && !gv_env_secret(name, n);
}
