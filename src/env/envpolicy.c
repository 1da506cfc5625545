#include "env/envpolicy.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "base/utf8.h"

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

/* Names whose whole purpose is to load a library, plugin or tool into a
 * process (or to run code in a shell): never written back by a plan, even
 * though some match the allowlist's prefixes. */
static const char *const code_loaders[] = {
    "LD_PRELOAD",       "LD_AUDIT",          "HSA_TOOLS_LIB",       "CUDA_INJECTION64_PATH",
    "OMP_TOOL_LIBRARIES", "NCCL_NET_PLUGIN", "NCCL_TUNER_PLUGIN",   "NCCL_PROFILER_PLUGIN",
    "NCCL_ENV_PLUGIN",  "NCCL_GIN_PLUGIN",   "BASH_ENV",            "ENV",
    "PROMPT_COMMAND",   "PS4",
};

int gv_env_loads_code(const char *name, size_t n)
{
    for (size_t i = 0; i < sizeof code_loaders / sizeof code_loaders[0]; i++)
        if (strlen(code_loaders[i]) == n && !memcmp(name, code_loaders[i], n))
            return 1;
    /* a future *_PLUGIN, *_TOOL_LIB(RARIES) or *_INJECTION*_PATH of the same families */
    return (n > 7 && !memcmp(name + n - 7, "_PLUGIN", 7)) || contains_ci(name, n, "TOOL_LIB") ||
           contains_ci(name, n, "INJECTION");
}

static int name_char(char c, int first)
{
    return c == '_' || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
           (!first && c >= '0' && c <= '9');
}

/* Characters allowed unquoted in a value: no blanks, quotes, globs or any of
 * ; | & < > ( ) ` \ ! # { } (a '$' is checked on its own). */
static int plain_char(unsigned char c)
{
    return c >= 0x80 || name_char((char)c, 0) || strchr("/.:,+-=@%^~", c) != NULL;
}

/* A reference $NAME or ${NAME} at s[0] == '$'; returns its length, 0 if none. */
static size_t var_ref(const char *s, size_t n)
{
    size_t i = 1;
    int braced = i < n && s[i] == '{';
    i += braced;
    size_t start = i;
    while (i < n && name_char(s[i], i == start))
        i++;
    if (i == start)
        return 0;
    if (braced) {
        if (i >= n || s[i] != '}')
            return 0;
        i++;
    }
    return i;
}

/* One value word (unquoted, "..." and '...' parts; $NAME and ${NAME} only).
 * Returns the length consumed, 0 when the word holds anything else. A value
 * may be empty: *ok tells a valid empty value from a refusal. */
static size_t value_word(const char *s, size_t n, int *ok)
{
    size_t i = 0;
    *ok = 0;
    while (i < n && s[i] != ' ' && s[i] != '\t') {
        unsigned char c = (unsigned char)s[i];
        if (strchr(";|&<>`()", c))
            return 0; /* even quoted: such a value is not one a plan writes */
        if (c == '$') {
            size_t r = var_ref(s + i, n - i);
            if (!r)
                return 0;
            i += r;
        } else if (c == '\'' || c == '"') {
            size_t j = i + 1;
            while (j < n && s[j] != (char)c) {
                unsigned char d = (unsigned char)s[j];
                if (strchr(";|&<>`()\\", d) || (d == '$' && c == '\''))
                    return 0;
                if (d == '$') {
                    size_t r = var_ref(s + j, n - j);
                    if (!r)
                        return 0;
                    j += r;
                    continue;
                }
                j++;
            }
            if (j >= n)
                return 0; /* unterminated, or continued on the next line */
            i = j + 1;
        } else if (plain_char(c)) {
            i++;
        } else {
            return 0;
        }
    }
    *ok = 1;
    return i;
}

static void why_set(char *why, size_t whysz, const char *what, size_t line)
{
    if (why && whysz)
        snprintf(why, whysz, "line %zu %s", line, what);
}

/* One line: blank, a comment, or [export ]NAME=VALUE [NAME=VALUE...] [# comment]. */
static int profile_line(const char *s, size_t n, size_t lineno, char *why, size_t whysz)
{
    size_t i = 0;
    while (i < n && (s[i] == ' ' || s[i] == '\t'))
        i++;
    if (i == n || s[i] == '#')
        return 1;
    if (n - i > 7 && !memcmp(s + i, "export", 6) && (s[i + 6] == ' ' || s[i + 6] == '\t')) {
        i += 6;
        while (i < n && (s[i] == ' ' || s[i] == '\t'))
            i++;
    }
    int assignments = 0;
    while (i < n && s[i] != '#') {
        size_t start = i;
        while (i < n && name_char(s[i], i == start))
            i++;
        if (i == start || i >= n || s[i] != '=') {
            why_set(why, whysz, "is not a plain NAME=VALUE assignment", lineno);
            return 0;
        }
        if (!gv_env_allowed(s + start, i - start)) {
            why_set(why, whysz, "assigns a variable outside the allowlist", lineno);
            return 0;
        }
        if (gv_env_secret(s + start, i - start)) {
            why_set(why, whysz, "assigns a secret", lineno);
            return 0;
        }
        if (gv_env_loads_code(s + start, i - start)) {
            why_set(why, whysz, "assigns a variable that loads code", lineno);
            return 0;
        }
        int ok;
        i += 1;
        i += value_word(s + i, n - i, &ok);
        if (!ok) {
            why_set(why, whysz,
                    "has a value with a command, an open quote or a character a plan does "
                    "not write",
                    lineno);
            return 0;
        }
        assignments++;
        if (i < n && s[i] != ' ' && s[i] != '\t') {
            why_set(why, whysz, "is not a plain NAME=VALUE assignment", lineno);
            return 0;
        }
        while (i < n && (s[i] == ' ' || s[i] == '\t'))
            i++;
    }
    if (!assignments) {
        why_set(why, whysz, "is not a plain NAME=VALUE assignment", lineno);
        return 0;
    }
    return 1;
}

int gv_env_profile_restorable(const char *text, size_t len, char *why, size_t whysz)
{
    if (why && whysz)
        why[0] = '\0';
    if (len > GV_PROFILE_CONTENT_MAX) {
        if (why && whysz)
            snprintf(why, whysz, "larger than %d bytes", GV_PROFILE_CONTENT_MAX);
        return 0;
    }
    for (size_t i = 0; i < len;) {
        unsigned char c = (unsigned char)text[i];
        if (c < 0x80) {
            if ((c < 0x20 && c != '\t' && c != '\n') || c == 0x7f) {
                if (why && whysz)
                    snprintf(why, whysz, "holds a control character (byte %zu)", i);
                return 0;
            }
            i++;
            continue;
        }
        size_t l = gv_utf8_len((const unsigned char *)text + i, len - i);
        if (!l) {
            if (why && whysz)
                snprintf(why, whysz, "not valid UTF-8 (byte %zu)", i);
            return 0;
        }
        i += l;
    }
    size_t lineno = 1;
    for (size_t start = 0; start < len; lineno++) {
        const char *nl = memchr(text + start, '\n', len - start);
        size_t end = nl ? (size_t)(nl - text) : len;
        if (!profile_line(text + start, end - start, lineno, why, whysz))
            return 0;
        start = end + 1;
    }
    return 1;
}
