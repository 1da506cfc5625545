/* A process's floating-point mode on the CPU (flush-to-zero, denormals-are-zero)
 * as a torch device description records it ("fp_mode", docs/torch.md), and
 * the fact that names it as a cause when two environments differ. */
#ifndef GV_KB_FPMODE_H
#define GV_KB_FPMODE_H

#include <jansson.h>
#include <stddef.h>

enum kb_flush { KB_FLUSH_UNKNOWN, KB_FLUSH_OFF, KB_FLUSH_ON, KB_FLUSH_SOME };

struct kb_fp_mode {
    enum kb_flush ftz; /* a float32 result below the normal range comes out as zero */
    enum kb_flush daz; /* a subnormal float32 input reads as zero */
};

/* device's "fp_mode" ({"ftz": "on"|"off"|"some threads", "daz": ...}); a
 * field absent, of another type or value is unknown (older files have none). */
void kb_fp_mode_read(const json_t *device, struct kb_fp_mode *m);

/* "on", "off", "some threads" or "unknown". */
const char *kb_flush_name(enum kb_flush f);

struct kb_fp_fact {
    const char *text;   /* the mechanism, one sentence */
    const char *source;
};
const struct kb_fp_fact *kb_fp_mode_fact(void);

/* When exactly one of A and B flushes subnormals (FTZ or DAZ on some or all of
 * its threads, the other off on both, neither unknown): the cause, "B flushes
 * subnormals to zero (FTZ/DAZ); A does not" (or on some of its threads, or A
 * for B), into out, and 1; else 0 and out "". */
int kb_fp_mode_cause(const struct kb_fp_mode *a, const struct kb_fp_mode *b, char *out,
                     size_t n);

#endif
