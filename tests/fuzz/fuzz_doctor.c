/* Fuzz target: the doctor rules over arbitrary snapshot JSON (including
 * wrongly-typed fields, via a deterministic type confusion pass) and the kb's
 * string parsers over arbitrary bytes. Nothing may crash, hang or leak. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kb/kb.h"
#include "kb/rules.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Replace every value of one JSON type by a value of another type. */
static void confuse(json_t *v, int mode)
{
    if (json_is_object(v)) {
        const char *k;
        json_t *x;
        void *tmp;
        json_object_foreach_safe(v, tmp, k, x) {
            if (mode == 1 && json_is_string(x))
                json_object_set_new(v, k, json_integer(7));
            else if (mode == 2 && json_is_array(x))
                json_object_set_new(v, k, json_object());
            else if (mode == 3 && json_is_object(x) && strcmp(k, "collected") != 0)
                confuse(x, 4), json_object_set_new(v, k, json_string("x"));
            else
                confuse(x, mode);
        }
    } else if (json_is_array(v)) {
        size_t i;
        json_t *x;
        json_array_foreach(v, i, x) {
            if (mode == 1 && json_is_string(x))
                json_array_set_new(v, i, json_integer(-1));
            else
                confuse(x, mode);
        }
    }
}

static void run_rules(json_t *doc)
{
    json_t *r = gv_doctor_report(doc, "fuzz");
    json_decref(r);
}

static void kb_strings(const char *s)
{
    unsigned a, b, c;
    char buf[64];
    (void)kb_parse_override(s, &a, &b, &c);
    (void)kb_release_from_pkgver(s, buf, sizeof buf);
    (void)kb_rocm_from_hip(s, buf, sizeof buf);
    (void)kb_major_minor(s, buf, sizeof buf);
    (void)kb_vercmp(s, "6.0.2");
    (void)kb_torch_line(s);
    (void)kb_wheel_arch(s, s);
    (void)kb_kmd(s);
    (void)kb_env(s);
    (void)kb_error_match(s);
    (void)kb_arch_in_list(s, "gfx90a");
    (void)kb_soname_majors(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    if (!s)
        return 0;
    memcpy(s, data, size);
    s[size] = '\0';
    kb_strings(s);
    free(s);
    json_t *doc = json_loadb((const char *)data, size, JSON_DECODE_ANY, NULL);
    if (!doc)
        return 0;
    run_rules(doc);
    if (json_is_object(doc)) {
        int mode = 1 + (int)(size % 3);
        confuse(doc, mode);
        run_rules(doc);
    }
    json_decref(doc);
    return 0;
}
