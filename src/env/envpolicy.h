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

/* Names that load a library, plugin or tool into processes, or run shell code
 * (LD_PRELOAD, LD_AUDIT, HSA_TOOLS_LIB, CUDA_INJECTION64_PATH, OMP_TOOL_LIBRARIES,
 * NCCL_*_PLUGIN, BASH_ENV, PROMPT_COMMAND ...): a plan never writes them. */
int gv_env_loads_code(const char *name, size_t n);

#define GV_PROFILE_CONTENT_MAX 65536

/* The one predicate for "a profile file (/etc/environment, /etc/profile.d/NAME.sh)
 * whose exact text may be recorded in a snapshot and written back by a plan":
 * valid UTF-8 without control characters other than tab and newline, at most
 * GV_PROFILE_CONTENT_MAX bytes, and every line blank, a comment, or
 * [export ]NAME=VALUE [NAME=VALUE...] where each NAME is recordable and loads
 * no code, and each VALUE is plain text, '...' or "..." parts and $NAME or
 * ${NAME} references: never a command substitution, backquote, ; | & < > ( )
 * or backslash. Returns 1, or 0 with a reason in why (which never quotes the
 * file's text: it may hold what the snapshot must not record). */
int gv_env_profile_restorable(const char *text, size_t len, char *why, size_t whysz);

#endif
