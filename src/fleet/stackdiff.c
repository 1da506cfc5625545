/* What drifted between two stack summaries, one line per change, for a
 * person: "libraries.libhipblaslt.so.0: 0.10.0 → 0.12.0". Generic over the
 * summary's shape: objects by key, arrays of named objects by name, an
 * object with a "version" said as its version. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "fleet/fleet.h"
#include "fleet/fleet_impl.h"

struct diff {
    json_t *lines;
    size_t max, more;
};

/* "PATH: A → B", or "PATH: added (B)" / "PATH: removed (was A)" when a or b is NULL. */
static void emit(struct diff *d, const char *path, const char *a, const char *b)
{
    if (json_array_size(d->lines) >= d->max) {
        d->more++;
        return;
    }
    char line[512];
    const char *p = *path ? path : "stack";
    if (a && b)
        snprintf(line, sizeof line, "%s: %s → %s", p, a, b);
    else if (b)
        snprintf(line, sizeof line, "%s: added (%s)", p, b);
    else
        snprintf(line, sizeof line, "%s: removed (was %s)", p, a);
    json_array_append_new(d->lines, json_string(line));
}

static int hexish(const char *s)
{
    size_t n = strlen(s);
    if (n < 40)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!strchr("0123456789abcdef", s[i]))
            return 0;
    return 1;
}

/* A short rendering of a value: digests cut to 12 hex digits. */
static void show(const json_t *v, char *out, size_t n)
{
    if (!v) {
        snprintf(out, n, "(none)");
    } else if (json_is_string(v)) {
        const char *s = json_string_value(v);
        const char *h = !strncmp(s, "sha256:", 7) ? s + 7 : s;
        if (hexish(h))
            snprintf(out, n, "%.12s…", h);
        else
            snprintf(out, n, "%.80s%s", s, strlen(s) > 80 ? "…" : "");
    } else if (json_is_integer(v)) {
        snprintf(out, n, "%lld", (long long)json_integer_value(v));
    } else if (json_is_real(v)) {
        snprintf(out, n, "%g", json_real_value(v));
    } else if (json_is_boolean(v)) {
        snprintf(out, n, "%s", json_is_true(v) ? "true" : "false");
    } else if (json_is_null(v)) {
        snprintf(out, n, "null");
    } else if (json_is_array(v)) {
        snprintf(out, n, "[%zu items]", json_array_size(v));
    } else {
        const char *ver = json_string_value(json_object_get(v, "version"));
        if (ver)
            snprintf(out, n, "%.80s", ver);
        else
            snprintf(out, n, "{%zu fields}", json_object_size(v));
    }
}

static void walk(struct diff *d, const char *path, const json_t *a, const json_t *b);

static void join(char *out, size_t n, const char *path, const char *key)
{
    snprintf(out, n, "%s%s%.100s", path, *path ? "." : "", key);
}

static int cmp_str(const void *x, const void *y)
{
    return strcmp(*(const char *const *)x, *(const char *const *)y);
}

/* Keys of a and b, each once, sorted. */
static const char **keys_of(const json_t *a, const json_t *b, size_t *n)
{
    size_t cap = json_object_size(a) + json_object_size(b), k = 0;
    const char **keys = malloc((cap ? cap : 1) * sizeof *keys);
    if (!keys)
        return NULL;
    const char *key;
    const json_t *v;
    json_object_foreach((json_t *)a, key, v)
        keys[k++] = key;
    json_object_foreach((json_t *)b, key, v)
        if (!json_object_get(a, key))
            keys[k++] = key;
    qsort(keys, k, sizeof *keys, cmp_str);
    *n = k;
    return keys;
}

static void walk_objects(struct diff *d, const char *path, const json_t *a, const json_t *b)
{
    size_t n;
    const char **keys = keys_of(a, b, &n);
    if (!keys)
        return;
    for (size_t i = 0; i < n; i++) {
        char sub[1024];
        join(sub, sizeof sub, path, keys[i]);
        walk(d, sub, json_object_get(a, keys[i]), json_object_get(b, keys[i]));
    }
    free(keys);
}

/* An array of objects each with a distinct string "name" (or "id"), as an
 * object keyed by it; NULL when it is not one. */
static json_t *by_name(const json_t *arr)
{
    json_t *o = json_object();
    size_t i;
    const json_t *v;
    json_array_foreach(arr, i, v) {
        const char *name = json_string_value(json_object_get(v, "name"));
        if (!name)
            name = json_string_value(json_object_get(v, "id"));
        if (!name || json_object_get(o, name)) {
            json_decref(o);
            return NULL;
        }
        json_object_set(o, name, (json_t *)v);
    }
    return o;
}

static void walk_arrays(struct diff *d, const char *path, const json_t *a, const json_t *b)
{
    json_t *na = by_name(a), *nb = by_name(b);
    if (na && nb) {
        walk_objects(d, path, na, nb);
    } else if (json_array_size(a) == json_array_size(b)) {
        for (size_t i = 0; i < json_array_size(a); i++) {
            char sub[1024];
            snprintf(sub, sizeof sub, "%s[%zu]", path, i);
            walk(d, sub, json_array_get(a, i), json_array_get(b, i));
        }
    } else {
        char x[128], y[128];
        show(a, x, sizeof x), show(b, y, sizeof y);
        emit(d, path, x, y);
    }
    json_decref(na);
    json_decref(nb);
}

static void walk(struct diff *d, const char *path, const json_t *a, const json_t *b)
{
    if (json_equal((json_t *)a, (json_t *)b))
        return;
    char x[128], y[128];
    show(a, x, sizeof x), show(b, y, sizeof y);
    if (!a || !b) {
        emit(d, path, a ? x : NULL, b ? y : NULL);
        return;
    }
    const char *va = json_string_value(json_object_get(a, "version"));
    const char *vb = json_string_value(json_object_get(b, "version"));
    if (json_is_object(a) && json_is_object(b) && va && vb && strcmp(va, vb) != 0) {
        emit(d, path, va, vb);
    } else if (json_is_object(a) && json_is_object(b)) {
        walk_objects(d, path, a, b);
    } else if (json_is_array(a) && json_is_array(b)) {
        walk_arrays(d, path, a, b);
    } else {
        emit(d, path, x, y);
    }
}

void gv_fleet_stack_diff(const json_t *from, const json_t *to, json_t *lines, size_t max)
{
    struct diff d = {lines, max, 0};
    walk(&d, "", from, to);
    if (d.more) {
        char more[64];
        snprintf(more, sizeof more, "… %zu more", d.more);
        json_array_append_new(lines, json_string(more));
    }
    if (!json_array_size(lines) && !json_equal((json_t *)from, (json_t *)to))
        json_array_append_new(lines, json_string("stack: differs"));
}

void gv_fleet_group_key(const json_t *node, char *out, size_t outsz)
{
    const json_t *hw = json_object_get(node, "hardware");
    if (!json_is_object(hw)) {
        snprintf(out, outsz, "%s", "");
        return;
    }
    snprintf(out, outsz, "%s\x1f%lld\x1f%s", json_string_value(json_object_get(hw, "model")),
             (long long)json_integer_value(json_object_get(hw, "compute_units")),
             json_string_value(json_object_get(hw, "driver")));
}

void gv_fleet_reason_clean(char *s, size_t max)
{
    size_t n = 0;
    for (char *p = s; *p && n < max; p++) {
        unsigned char c = (unsigned char)*p;
        s[n++] = (c < 0x20 || c == 0x7f || c == '"' || c == '\'' || c == '\\' || c == '`')
                     ? ' '
                     : (char)c;
    }
    if (s[n]) /* cut: not inside a UTF-8 sequence */
        while (n > 0 && ((unsigned char)s[n] & 0xc0) == 0x80)
            n--;
    s[n] = 0;
}
