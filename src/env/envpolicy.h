/* Which environment variables gpuvet may record (docs/snapshot-schema.md,
 * `environment`). Every probe that copies a variable goes through these. */
#ifndef GV_ENV_ENVPOLICY_H
#define GV_ENV_ENVPOLICY_H

#include <stddef.h>

/* The name matches the allowlist (prefixes such as HSA_, ROCM_, CUDA_ and
 * names such as PATH, LD_LIBRARY_PATH). n: length of name (not NUL-terminated). */
int gv_env_allowed(const char *name, size_t n);
/* The name contains TOKEN, SECRET, PASSWORD, PASSWD, KEY, CREDENTIAL or AUTH
 * (any case): its value is never recorded, even when allowed. */
int gv_env_secret(const char *name, size_t n);
/* Allowed and not secret: the value may be recorded. */
int gv_env_recordable(const char *name, size_t n);

#endif
