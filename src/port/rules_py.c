/* Rules for Python sources (rules.h): what a PyTorch program assumes about
 * CUDA that is not so on ROCm. Facts and sources: src/kb/port_facts.c. */
#include <stdio.h>
#include <string.h>

#include "port/rules.h"

/* tok[i..] spells the dotted name ("torch.version.cuda"); returns the number
 * of tokens, 0 when it does not. */
static size_t dotted(const struct port_file *f, size_t i, const char *name)
{
    size_t k = i;
    const char *p = name;
    for (;;) {
        size_t n = strcspn(p, ".");
        if (k >= f->n || f->tok[k].kind != GV_TOK_IDENT || f->tok[k].n != n ||
            memcmp(f->tok[k].s, p, n))
            return 0;
        k++;
        p += n;
        if (!*p)
            return k - i;
        if (!port_is(f, k, "."))
            return 0;
        k++;
        p++;
    }
}

/* "hip", "rocm", "hip:0", "rocm:1" */
static int gpu_alias(const char *s, size_t n)
{
    size_t w = n >= 4 && !memcmp(s, "rocm", 4) ? 4 : n >= 3 && !memcmp(s, "hip", 3) ? 3 : 0;
    if (!w)
        return 0;
    if (n == w)
        return 1;
    if (s[w] != ':' || n == w + 1)
        return 0;
    for (size_t k = w + 1; k < n; k++)
        if (s[k] < '0' || s[k] > '9')
            return 0;
    return 1;
}

/* A string passed to torch as a device: torch.device("hip"), x.to("rocm"),
 * device="hip:0", x.cuda("hip") is not a thing and not matched. */
static void device_string(struct port_file *f, const struct port_rule *r)
{
    for (size_t i = 2; i < f->n; i++) {
        const struct gv_tok *t = &f->tok[i];
        const char *s;
        size_t n;
        if (t->kind != GV_TOK_STRING)
            continue;
        gv_tok_string_body(t, &s, &n);
        if (!gpu_alias(s, n))
            continue;
        const struct gv_tok *p = &f->tok[i - 1], *pp = &f->tok[i - 2];
        int hit = (gv_tok_is(p, "(") && (gv_tok_is(pp, "device") || gv_tok_is(pp, "to"))) ||
                  (gv_tok_is(p, "=") && gv_tok_is(pp, "device"));
        if (!hit)
            continue;
        char msg[256];
        snprintf(msg, sizeof msg,
                 "device \"%.*s\": ROCm's PyTorch knows AMD GPUs as \"cuda\"; this raises "
                 "or selects nothing",
                 (int)(n > 32 ? 32 : n), s);
        port_emit(f, r, t, msg, NULL);
    }
}

static int on_line(const struct port_file *f, size_t i, const char *word)
{
    long line = f->tok[i].line;
    size_t a = i, b = i;
    while (a > 0 && f->tok[a - 1].line == line)
        a--;
    while (b + 1 < f->n && f->tok[b + 1].line == line)
        b++;
    for (size_t k = a; k <= b; k++)
        if (gv_tok_is(&f->tok[k], word))
            return 1;
    return 0;
}

/* torch.version.hip on the line of i or the 3 lines before (an if/elif chain
 * that tests for ROCm first). */
static int hip_nearby(const struct port_file *f, size_t i)
{
    long line = f->tok[i].line;
    for (size_t k = i; k-- > 0 && f->tok[k].line >= line - 3;)
        if (gv_tok_is(&f->tok[k], "hip") && k > 0 && port_is(f, k - 1, "."))
            return 1;
    for (size_t k = i; k < f->n && f->tok[k].line == line; k++)
        if (gv_tok_is(&f->tok[k], "hip") && port_is(f, k - 1, "."))
            return 1;
    return 0;
}

/* torch.version.cuda in a test that does not look at torch.version.hip too. */
static void version_cuda(struct port_file *f, const struct port_rule *r)
{
    static const char *const tests[] = {"if", "elif", "while", "assert", "and", "or", "not",
                                        "is", "==", "!=", NULL};
    for (size_t i = 0; i < f->n; i++) {
        if (!dotted(f, i, "torch.version.cuda"))
            continue;
        if (hip_nearby(f, i))
            continue;
        int test = 0;
        for (int k = 0; tests[k] && !test; k++)
            test = on_line(f, i, tests[k]);
        if (test)
            port_emit(f, r, &f->tok[i], NULL, NULL);
    }
}

static int body_has(const struct gv_tok *t, const char *word)
{
    const char *s;
    size_t n, w = strlen(word);
    gv_tok_string_body(t, &s, &n);
    for (size_t k = 0; k + w <= n; k++)
        if (!memcmp(s + k, word, w))
            return 1;
    return 0;
}

static int body_is(const struct gv_tok *t, const char *word)
{
    const char *s;
    size_t n;
    gv_tok_string_body(t, &s, &n);
    return n == strlen(word) && !memcmp(s, word, n);
}

/* "nvidia-smi" in a string (a command), import pynvml / from pynvml ..., or
 * "pynvml" named as a string (importlib). */
static void nvidia_smi(struct port_file *f, const struct port_rule *r)
{
    for (size_t i = 0; i < f->n; i++) {
        const struct gv_tok *t = &f->tok[i];
        if (t->kind == GV_TOK_STRING && (body_has(t, "nvidia-smi") || body_is(t, "pynvml")))
            port_emit(f, r, t, NULL, NULL);
        else if (gv_tok_is(t, "pynvml") && i > 0 &&
                 (gv_tok_is(&f->tok[i - 1], "import") || gv_tok_is(&f->tok[i - 1], "from")))
            port_emit(f, r, t, "pynvml (NVML) is imported: it finds no AMD GPU", NULL);
    }
}

/* cudnn.FLAG = ... (torch.backends.cudnn.FLAG, or cudnn imported by name). */
static void cudnn_flag(struct port_file *f, const struct port_rule *r, const char *flag)
{
    for (size_t i = 0; i + 3 < f->n; i++) {
        if (!gv_tok_is(&f->tok[i], "cudnn") || !port_is(f, i + 1, ".") ||
            !port_is(f, i + 2, flag) || !port_is(f, i + 3, "="))
            continue;
        size_t at = i;
        if (i >= 4 && dotted(f, i - 4, "torch.backends.cudnn"))
            at = i - 4;
        port_emit(f, r, &f->tok[at], NULL, NULL);
    }
}

static void cudnn_benchmark(struct port_file *f, const struct port_rule *r)
{
    cudnn_flag(f, r, "benchmark");
}

static void cudnn_deterministic(struct port_file *f, const struct port_rule *r)
{
    cudnn_flag(f, r, "deterministic");
}

static void cudnn_tf32(struct port_file *f, const struct port_rule *r)
{
    cudnn_flag(f, r, "allow_tf32");
}

static const struct port_rule rules[] = {
    {"py-device-string", "error", PORT_AMD, device_string, "",
     "use \"cuda\" (torch.device(\"cuda\"), .to(\"cuda\")): ROCm's PyTorch answers to it"},
    {"py-version-cuda", "warning", PORT_AMD, version_cuda,
     "a test of torch.version.cuda: it is None on ROCm builds, so this branch treats a working "
     "AMD GPU as no GPU",
     "test torch.cuda.is_available() for a GPU, and torch.version.hip (ROCm) or "
     "torch.version.cuda (CUDA) only where the vendor matters"},
    {"py-nvidia-smi", "warning", PORT_AMD, nvidia_smi,
     "nvidia-smi is called: it is absent on ROCm machines or sees no AMD GPU",
     "use amd-smi (or the amdsmi Python package), or torch.cuda.device_count() / "
     "torch.cuda.get_device_properties() which work on both"},
    {"py-cudnn-benchmark", "note", PORT_AMD, cudnn_benchmark,
     "torch.backends.cudnn.benchmark drives MIOpen's algorithm search on ROCm, not cuDNN's",
     "keep it if the shapes repeat; expect the first call per shape to be slow (MIOpen Find), "
     "and set MIOPEN_FIND_MODE / MIOPEN_USER_DB_PATH to control and keep the search results"},
    {"py-cudnn-deterministic", "warning", PORT_AMD, cudnn_deterministic,
     "torch.backends.cudnn.deterministic does not give cuDNN's guarantee on ROCm (MIOpen)",
     "add torch.use_deterministic_algorithms(True) and verify repeatability on the AMD GPU "
     "(e.g. gpuvet check twice, then gpuvet compare)"},
    {"py-cudnn-tf32", "note", PORT_AMD, cudnn_tf32,
     "torch.backends.cudnn.allow_tf32 has no effect on ROCm convolutions (MIOpen)",
     "on ROCm control reduced-precision matmuls with torch.backends.cuda.matmul.allow_tf32 / "
     "torch.set_float32_matmul_precision; MIOpen convolutions stay fp32"},
};

const struct port_rule *port_rules_py(size_t *n)
{
    *n = sizeof rules / sizeof rules[0];
    return rules;
}
