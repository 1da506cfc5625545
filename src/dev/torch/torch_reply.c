/* Parsing the PyTorch worker's replies (see torch_reply.h). */
#include "dev/torch/torch_reply.h"

#include <stdio.h>
#include <string.h>

void gv_torch_reply_free(struct gv_torch_reply *r)
{
    json_decref(r->describe);
    json_decref(r->doc);
    r->describe = NULL;
    r->doc = NULL;
}

static int str_field(const json_t *o, const char *key, char *out, size_t n, struct gv_err *err)
{
    const json_t *v = json_object_get(o, key);
    if (!v || json_is_null(v))
        return GV_OK;
    if (!json_is_string(v))
        return gv_err_set(err, GV_E_FORMAT, "torch worker reply: \"%s\" is not a string", key);
    snprintf(out, n, "%s", json_string_value(v));
    return GV_OK;
}

int gv_torch_reply_parse(const char *text, size_t len, struct gv_torch_reply *r,
                         struct gv_err *err)
{
    memset(r, 0, sizeof *r);
    json_error_t je;
    json_t *o = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
    if (!o)
        return gv_err_set(err, GV_E_FORMAT, "torch worker reply is not JSON: %s (at %d)",
                          je.text, je.position);
    int rc = GV_OK;
    const json_t *ok = json_object_get(o, "ok"), *nb = json_object_get(o, "nbytes");
    const json_t *sec = json_object_get(o, "seconds"), *desc = json_object_get(o, "describe");
    if (!json_is_object(o))
        rc = gv_err_set(err, GV_E_FORMAT, "torch worker reply is not a JSON object");
    else if (!json_is_boolean(ok))
        rc = gv_err_set(err, GV_E_FORMAT, "torch worker reply: \"ok\" is missing or not a boolean");
    else if (nb && (!json_is_integer(nb) || json_integer_value(nb) < 0 ||
                    json_integer_value(nb) > ((json_int_t)1 << 40)))
        rc = gv_err_set(err, GV_E_FORMAT, "torch worker reply: \"nbytes\" is not a size");
    else if (sec && !json_is_number(sec))
        rc = gv_err_set(err, GV_E_FORMAT, "torch worker reply: \"seconds\" is not a number");
    else if (desc && !json_is_object(desc))
        rc = gv_err_set(err, GV_E_FORMAT, "torch worker reply: \"describe\" is not an object");
    if (!rc)
        rc = str_field(o, "status", r->status, sizeof r->status, err);
    if (!rc)
        rc = str_field(o, "error", r->error, sizeof r->error, err);
    if (!rc)
        rc = str_field(o, "impl", r->impl, sizeof r->impl, err);
    if (!rc) {
        r->ok = json_is_true(ok);
        r->nbytes = nb ? (uint64_t)json_integer_value(nb) : 0;
        r->seconds = sec ? json_number_value(sec) : 0;
        if (desc)
            r->describe = json_incref((json_t *)desc);
        r->doc = json_incref(o);
        if (!r->ok && !r->status[0])
            snprintf(r->status, sizeof r->status, "error");
    }
    json_decref(o);
    return rc;
}
