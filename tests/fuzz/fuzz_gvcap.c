/* Fuzz target: the capture file's reader (src/capture/gvcap.c): the trailer,
 * the index document and its validation, and the tensors it points to, on the
 * input taken as a whole .gvcap file. What the reader promises: every tensor
 * entry it accepts lies inside the data, its size matches dtype x shape, and
 * every tensor an op names exists; an op name gv_cap_op_name_ok accepts is
 * NAMESPACE.NAME.OVERLOAD of plain identifiers with no __x__ part but ATen's
 * operator methods (what bisect may send to the worker), and gv_escape (the
 * one escaper of document text in messages) writes, within its buffer, valid
 * UTF-8 with no control byte and no hidden code point (C1, U+2028/9, the bidi
 * overrides and isolates); the header device's floating-point mode reads as one
 * of its four values and is never a cause against itself. */
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/utf8.h"
#include "capture/gvcap.h"
#include "capture/judge.h"
#include "kb/fpmode.h"

/* The op-name grammar, written again from its definition in gvcap.h. */
static int ident(const char *s, size_t n)
{
    if (n == 0 || n > 128 || (s[0] >= '0' && s[0] <= '9'))
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_", s[i]) ||
            !s[i])
            return 0;
    return 1;
}

static void check_op_name(const char *name)
{
    int ok = gv_cap_op_name_ok(name);
    if (!name) {
        if (ok)
            abort();
        return;
    }
    const char *d1 = strchr(name, '.'), *d2 = d1 ? strchr(d1 + 1, '.') : NULL;
    int want = d1 && d2 && !strchr(d2 + 1, '.');
    const char *part[3] = {name, d1 ? d1 + 1 : NULL, d2 ? d2 + 1 : NULL};
    size_t len[3] = {d1 ? (size_t)(d1 - name) : 0, d2 ? (size_t)(d2 - d1 - 1) : 0,
                     d2 ? strlen(d2 + 1) : 0};
    static const char *const methods[] = {"__and__", "__or__", "__xor__", "__lshift__",
                                          "__rshift__", "__iand__", "__ior__", "__ixor__",
                                          "__ilshift__", "__irshift__"};
    for (int k = 0; k < 3 && want; k++) {
        want = ident(part[k], len[k]);
        int dunder = len[k] >= 4 && !strncmp(part[k], "__", 2) &&
                     !strncmp(part[k] + len[k] - 2, "__", 2);
        int method = 0;
        for (size_t m = 0; k == 1 && m < sizeof methods / sizeof methods[0]; m++)
            method |= strlen(methods[m]) == len[k] && !strncmp(methods[m], part[k], len[k]);
        if (dunder && !method)
            want = 0;
    }
    if (ok != want)
        abort();
    char esc[40];
    memset(esc, 'x', sizeof esc);
    gv_escape(name, esc, sizeof esc);
    size_t n = strnlen(esc, sizeof esc);
    if (n == sizeof esc)
        abort();
    const unsigned char *e = (const unsigned char *)esc;
    for (size_t i = 0; i < n; i++) {
        if (e[i] < 0x20 || e[i] == 0x7f)
            abort();
        if (e[i] < 0x80)
            continue;
        size_t ul = gv_utf8_len(e + i, n - i);
        if (!ul)
            abort();
        /* written out here: C2 80..9F, E2 80 A8..AE, E2 81 A6..A9 */
        if ((e[i] == 0xc2 && e[i + 1] <= 0x9f) ||
            (e[i] == 0xe2 && e[i + 1] == 0x80 && e[i + 2] >= 0xa8 && e[i + 2] <= 0xae) ||
            (e[i] == 0xe2 && e[i + 1] == 0x81 && e[i + 2] >= 0xa6 && e[i + 2] <= 0xa9))
            abort();
        i += ul - 1;
    }
}

/* The device's floating-point mode (kb/fpmode.h): each flag one of the four
 * values, and no environment is a cause of its own difference. */
static void check_fp_mode(const json_t *device)
{
    struct kb_fp_mode m;
    kb_fp_mode_read(device, &m);
    if ((unsigned)m.ftz > KB_FLUSH_SOME || (unsigned)m.daz > KB_FLUSH_SOME)
        abort();
    json_t *c = gv_judge_env_causes(device, device);
    if (json_array_size(c))
        abort();
    json_decref(c);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 32 || memcmp(data, "GVCAP01\n", 8) != 0)
        return 0;
    uint64_t off = 0, len = 0;
    struct gv_err err = {0};
    if (gv_cap_parse_trailer(data + size - 24, size, &off, &len, "fuzz.gvcap", &err)) {
        if (!err.msg[0])
            abort();
        return 0;
    }
    if (off + len + 24 != size)
        abort();
    json_t *idx = json_loadb((const char *)data + off, len, JSON_REJECT_DUPLICATES, NULL);
    if (!idx)
        return 0;
    if (gv_cap_check_index(idx, off, "fuzz.gvcap", &err) == GV_OK) {
        size_t i;
        json_t *t;
        json_array_foreach(json_object_get(idx, "tensors"), i, t) {
            const json_t *o = json_object_get(t, "offset");
            if (!json_is_integer(o))
                continue;
            uint64_t at = (uint64_t)json_integer_value(o);
            uint64_t nb = (uint64_t)json_integer_value(json_object_get(t, "nbytes"));
            if (at > off || nb > off - at) /* the promise: inside the data */
                abort();
            volatile uint8_t sink = nb ? data[at + nb - 1] : 0;
            (void)sink;
        }
        json_array_foreach(json_object_get(idx, "ops"), i, t)
            check_op_name(json_string_value(json_object_get(t, "name")));
        check_fp_mode(json_object_get(json_object_get(idx, "header"), "device"));
    } else if (!err.msg[0]) {
        abort();
    }
    json_decref(idx);
    return 0;
}
