/* The floating-point mode of a torch device description (kb/fpmode.h) and the
 * cause it gives when two environments differ (capture/judge.h,
 * gv_judge_env_causes). Expected sentences written here by hand from the brief
 * of issue 35 ("B flushes subnormals to zero (FTZ/DAZ); A does not"). */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "capture/judge.h"
#include "check/compare.h"
#include "kb/fpmode.h"
#include "t.h"

static json_t *dev(const char *fp_mode_json)
{
    json_t *d = json_object();
    if (fp_mode_json)
        json_object_set_new(d, "fp_mode", json_loads(fp_mode_json, JSON_DECODE_ANY, NULL));
    return d;
}

static void reading(void)
{
    struct kb_fp_mode m;
    json_t *d = dev("{\"ftz\": \"on\", \"daz\": \"some threads\"}");
    kb_fp_mode_read(d, &m);
    T_EQ_INT(m.ftz, KB_FLUSH_ON);
    T_EQ_INT(m.daz, KB_FLUSH_SOME);
    json_decref(d);
    /* an older file without the field, and every malformed shape: unknown */
    const char *bad[] = {NULL, "null", "[]", "\"on\"", "{\"ftz\": 1, \"daz\": true}",
                         "{\"ftz\": \"ON\", \"daz\": \"off \"}", "{\"error\": \"x\"}"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        d = dev(bad[i]);
        kb_fp_mode_read(d, &m);
        T_EQ_INT(m.ftz, KB_FLUSH_UNKNOWN);
        json_decref(d);
    }
    kb_fp_mode_read(NULL, &m);
    T_EQ_INT(m.daz, KB_FLUSH_UNKNOWN);
    T_EQ_STR(kb_flush_name(KB_FLUSH_SOME), "some threads");
    T_EQ_STR(kb_flush_name((enum kb_flush)42), "unknown");
}

static void causes(void)
{
    struct kb_fp_mode off = {KB_FLUSH_OFF, KB_FLUSH_OFF}, on = {KB_FLUSH_ON, KB_FLUSH_ON},
                      ftz = {KB_FLUSH_ON, KB_FLUSH_OFF}, some = {KB_FLUSH_SOME, KB_FLUSH_SOME},
                      unk = {KB_FLUSH_UNKNOWN, KB_FLUSH_OFF};
    char s[160];
    T_EQ_INT(kb_fp_mode_cause(&off, &on, s, sizeof s), 1);
    T_EQ_STR(s, "B flushes subnormals to zero (FTZ/DAZ); A does not");
    T_EQ_INT(kb_fp_mode_cause(&ftz, &off, s, sizeof s), 1);
    T_EQ_STR(s, "A flushes subnormals to zero (FTZ); B does not");
    T_EQ_INT(kb_fp_mode_cause(&off, &some, s, sizeof s), 1);
    T_EQ_STR(s, "B flushes subnormals to zero on some of its threads (FTZ/DAZ); A does not");
    /* both flush, neither does, or one is not known: no cause */
    T_EQ_INT(kb_fp_mode_cause(&on, &some, s, sizeof s), 0);
    T_EQ_STR(s, "");
    T_EQ_INT(kb_fp_mode_cause(&off, &off, s, sizeof s), 0);
    T_EQ_INT(kb_fp_mode_cause(&unk, &on, s, sizeof s), 0);
    T_EQ_INT(kb_fp_mode_cause(&on, &unk, s, sizeof s), 0);
    T_CHECK(strstr(kb_fp_mode_fact()->source, "set_flush_denormal") != NULL);
    T_CHECK(strstr(kb_fp_mode_fact()->source, "10.2.3.4") != NULL);
}

static void judge_causes(void)
{
    json_t *a = dev("{\"ftz\": \"off\", \"daz\": \"off\"}");
    json_t *b = dev("{\"ftz\": \"on\", \"daz\": \"on\"}");
    json_t *old = dev(NULL);
    json_t *c = gv_judge_env_causes(a, b);
    T_EQ_INT(json_array_size(c), 1);
    const json_t *e = json_array_get(c, 0);
    T_EQ_STR(json_string_value(json_object_get(e, "name")), "fp_mode");
    T_EQ_STR(json_string_value(json_object_get(e, "text")),
             "B flushes subnormals to zero (FTZ/DAZ); A does not");
    T_EQ_STR(json_string_value(json_object_get(e, "ftz_b")), "on");
    T_CHECK(json_string_value(json_object_get(e, "source")) != NULL);
    json_decref(c);
    c = gv_judge_env_causes(old, b); /* a capture from before fp_mode: unknown, no cause */
    T_EQ_INT(json_array_size(c), 0);
    json_decref(c);
    c = gv_judge_env_causes(NULL, NULL);
    T_EQ_INT(json_array_size(c), 0);
    json_decref(c);
    json_decref(a);
    json_decref(b);
    json_decref(old);
}

/* compare of two result files: one cause of its own, the sentence as its note,
 * and no leaf causes for the mode's fields */
static void result_causes(void)
{
    json_t *a = dev("{\"ftz\": \"off\", \"daz\": \"off\", \"probed\": \"x\"}");
    json_t *b = dev("{\"ftz\": \"on\", \"daz\": \"on\", \"probed\": \"y\"}");
    struct gv_cmp_cause *c = NULL;
    size_t n = 0;
    gv_compare_stack_causes(a, b, NULL, NULL, &c, &n);
    T_EQ_INT(n, 1);
    if (n == 1) {
        T_EQ_STR(c[0].kind, "device");
        T_EQ_STR(c[0].name, "fp_mode");
        T_EQ_STR(c[0].before, "ftz off, daz off");
        T_EQ_STR(c[0].after, "ftz on, daz on");
        T_EQ_STR(c[0].note, "B flushes subnormals to zero (FTZ/DAZ); A does not");
    }
    free(c);
    json_decref(a);
    json_decref(b);
}

int main(void)
{
    T_RUN(reading);
    T_RUN(causes);
    T_RUN(judge_causes);
    T_RUN(result_causes);
    return t_done();
}
