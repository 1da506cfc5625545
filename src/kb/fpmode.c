/* A process's floating-point mode (fpmode.h). */
#include "kb/fpmode.h"

#include <stdio.h>
#include <string.h>

static const struct kb_fp_fact fact = {
    "with MXCSR's FTZ bit set, SSE/AVX results below the normal range are written as zero; "
    "with DAZ, subnormal inputs are read as zero (torch.set_flush_denormal(True) sets both, "
    "for the calling thread only; threads inherit the mode of the thread that creates them): "
    "values near zero, and anything scaled back up from them, are lost",
    "Intel 64 and IA-32 Architectures Software Developer's Manual, Vol. 1, 10.2.3.3 "
    "(Flush-To-Zero) and 10.2.3.4 (Denormals-Are-Zeros); PyTorch documentation, "
    "torch.set_flush_denormal"};

const struct kb_fp_fact *kb_fp_mode_fact(void)
{
    return &fact;
}

static enum kb_flush flush_of(const json_t *v)
{
    const char *s = json_string_value(v);
    if (!s)
        return KB_FLUSH_UNKNOWN;
    if (!strcmp(s, "on"))
        return KB_FLUSH_ON;
    if (!strcmp(s, "off"))
        return KB_FLUSH_OFF;
    if (!strcmp(s, "some threads"))
        return KB_FLUSH_SOME;
    return KB_FLUSH_UNKNOWN;
}

void kb_fp_mode_read(const json_t *device, struct kb_fp_mode *m)
{
    const json_t *f = json_object_get(device, "fp_mode");
    m->ftz = flush_of(json_object_get(f, "ftz"));
    m->daz = flush_of(json_object_get(f, "daz"));
}

const char *kb_flush_name(enum kb_flush f)
{
    static const char *const names[] = {"unknown", "off", "on", "some threads"};
    return f >= KB_FLUSH_UNKNOWN && f <= KB_FLUSH_SOME ? names[f] : "unknown";
}

/* 1 flushes (on some or all threads), 0 does not, -1 unknown. */
static int flushes(const struct kb_fp_mode *m)
{
    if (m->ftz == KB_FLUSH_UNKNOWN || m->daz == KB_FLUSH_UNKNOWN)
        return -1;
    return m->ftz != KB_FLUSH_OFF || m->daz != KB_FLUSH_OFF;
}

static int all_threads(const struct kb_fp_mode *m)
{
    return m->ftz != KB_FLUSH_SOME && m->daz != KB_FLUSH_SOME;
}

int kb_fp_mode_cause(const struct kb_fp_mode *a, const struct kb_fp_mode *b, char *out,
                     size_t n)
{
    int fa = flushes(a), fb = flushes(b);
    out[0] = '\0';
    if (fa < 0 || fb < 0 || fa == fb)
        return 0;
    const struct kb_fp_mode *m = fa ? a : b;
    char what[16] = "";
    snprintf(what, sizeof what, "%s%s%s", m->ftz != KB_FLUSH_OFF ? "FTZ" : "",
             m->ftz != KB_FLUSH_OFF && m->daz != KB_FLUSH_OFF ? "/" : "",
             m->daz != KB_FLUSH_OFF ? "DAZ" : "");
    snprintf(out, n, "%s flushes subnormals to zero%s (%s); %s does not", fa ? "A" : "B",
             all_threads(m) ? "" : " on some of its threads", what, fa ? "B" : "A");
    return 1;
}
