/* gv_capture_run: the model in a PyTorch worker, streamed into a .gvcap
 * (see capture.h, docs/capture.md). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "base/sha256.h"
#include "capture/capture.h"
#include "dev/torch/torch.h"
#include "kb/kb.h"

#define FRAME_TIMEOUT_MS (600 * 1000) /* a model's first op may compile for minutes */
#define MAX_TENSOR ((size_t)64 << 30)

/* One digest over the (role, sha256) of every tensor whose role starts with
 * prefix: the model's parameters and buffers, or its inputs. */
static void digest_of(const json_t *tensors, const char *const *prefixes, char out[65])
{
    struct gv_sha256 s;
    gv_sha256_init(&s);
    size_t i;
    json_t *t;
    json_array_foreach(tensors, i, t) {
        const char *role = json_string_value(json_object_get(t, "role"));
        int take = 0;
        for (const char *const *p = prefixes; *p && role; p++)
            take |= !strncmp(role, *p, strlen(*p));
        if (!take)
            continue;
        const char *sha = json_string_value(json_object_get(t, "sha256"));
        gv_sha256_update(&s, role, strlen(role) + 1);
        gv_sha256_update(&s, sha, strlen(sha) + 1);
    }
    uint8_t d[32];
    gv_sha256_final(&s, d);
    gv_sha256_hex(d, out);
}

static int all_cpu(const json_t *devices)
{
    size_t i;
    json_t *d;
    if (!json_array_size(devices))
        return 0;
    json_array_foreach(devices, i, d) if (strcmp(json_string_value(d) ? json_string_value(d) : "",
                                                 "cpu")) return 0;
    return 1;
}

static int has_cpu(const json_t *devices)
{
    size_t i;
    json_t *d;
    json_array_foreach(devices, i, d) if (!strcmp(json_string_value(d) ? json_string_value(d) : "",
                                                  "cpu")) return 1;
    return 0;
}

/* On a GPU: ops that ran on CPU tensors, and device transfers, with their
 * module and share of the op time (the seed's "silently falls back to the CPU"). */
static json_t *fallback(const json_t *ops, int gpu, double total)
{
    json_t *cpu = json_array(), *moves = json_array();
    size_t i;
    json_t *op;
    double t_cpu = 0, t_move = 0;
    json_array_foreach(ops, i, op) {
        if (!gpu)
            break;
        const json_t *devs = json_object_get(op, "devices");
        double sec = json_number_value(json_object_get(op, "seconds"));
        int on_cpu = all_cpu(devs), mixed = !on_cpu && has_cpu(devs);
        if (!on_cpu && !mixed)
            continue;
        json_t *e = json_pack("{s:I, s:s, s:s, s:f, s:O}", "op", (json_int_t)i, "name",
                              json_string_value(json_object_get(op, "name")), "module",
                              json_string_value(json_object_get(op, "module"))
                                  ? json_string_value(json_object_get(op, "module"))
                                  : "",
                              "seconds", sec, "devices", devs);
        json_object_set_new(e, "share", json_real(total > 0 ? sec / total : 0));
        json_array_append_new(on_cpu ? cpu : moves, e);
        if (on_cpu)
            t_cpu += sec;
        else
            t_move += sec;
    }
    json_t *o = json_object();
    json_object_set_new(o, "cpu_ops", cpu);
    json_object_set_new(o, "transfers", moves);
    json_object_set_new(o, "cpu_share", json_real(total > 0 ? t_cpu / total : 0));
    json_object_set_new(o, "transfer_share", json_real(total > 0 ? t_move / total : 0));
    return o;
}

static json_t *op_record(const json_t *doc)
{
    json_t *op = json_deep_copy(doc);
    json_object_del(op, "ok");
    json_object_del(op, "kind");
    json_object_del(op, "nbytes");
    const char *why = kb_nondeterministic_op(json_string_value(json_object_get(op, "name")));
    if (why)
        json_object_set_new(op, "nondeterministic", json_string(why));
    return op;
}

static int add_tensor(struct gv_cap_writer *w, const json_t *doc, const void *data, size_t len,
                      struct gv_err *err)
{
    int64_t shape[GV_CAP_MAX_DIMS];
    const json_t *sh = json_object_get(doc, "shape");
    size_t nd = json_array_size(sh);
    if (!json_is_array(sh) || nd > GV_CAP_MAX_DIMS)
        return gv_err_set(err, GV_E_FORMAT, "capture: the worker sent a tensor without a shape");
    for (size_t i = 0; i < nd; i++)
        shape[i] = (int64_t)json_integer_value(json_array_get(sh, i));
    json_t *meta = json_object();
    const char *keys[] = {"role", "device", "stride"};
    for (int k = 0; k < 3; k++)
        if (json_object_get(doc, keys[k]))
            json_object_set(meta, keys[k], json_object_get(doc, keys[k]));
    int64_t id = -1;
    int rc = gv_cap_add_tensor(w, json_string_value(json_object_get(doc, "dtype")), shape, (int)nd,
                               data, len, meta, &id, err);
    json_decref(meta);
    if (!rc && id != (int64_t)json_integer_value(json_object_get(doc, "key")))
        rc = gv_err_set(err, GV_E_FORMAT, "capture: tensor %lld arrived out of order",
                        (long long)id);
    return rc;
}

/* The strings of a list the worker sent (the TorchScript modules' paths): anything else
 * in it, or a list that is missing or not a list, leaves them out. */
static json_t *string_list(const json_t *l)
{
    json_t *out = json_array();
    size_t i;
    json_t *v;
    json_array_foreach(l, i, v) if (json_is_string(v) && json_string_length(v) < 4096)
        json_array_append(out, v);
    return out;
}

static json_t *header_of(const struct gv_capture_opts *o, const json_t *done,
                         const struct gv_cap_writer *w)
{
    json_t *h = json_object();
    gv_json_set_utc_now(h, "created");
    json_object_set_new(h, "gpuvet_version", json_string(GPUVET_VERSION));
    json_t *m = json_object();
    json_object_set_new(m, "spec", json_string(o->model));
    const char *keys[] = {"model_file", "model_function"};
    const char *as[] = {"file", "function"};
    for (int k = 0; k < 2; k++)
        if (json_object_get(done, keys[k]))
            json_object_set(m, as[k], json_object_get(done, keys[k]));
    if (o->file_sha256)
        json_object_set_new(m, "file_sha256", json_string(o->file_sha256));
    char d[65];
    static const char *const params[] = {"param:", "buffer:", NULL}, *const ins[] = {"input:", NULL};
    digest_of(w->tensors, params, d);
    json_object_set_new(m, "parameters_digest", json_string(d));
    digest_of(w->tensors, ins, d);
    json_object_set_new(m, "inputs_digest", json_string(d));
    json_object_set_new(h, "model", m);
    json_object_set_new(h, "seed", json_integer(o->seed));
    const char *copy[] = {"inputs", "outputs", "call", "timing", "memory", "rng_unattributed"};
    for (int k = 0; k < 6; k++)
        json_object_set(h, copy[k], json_object_get(done, copy[k]));
    json_t *desc = json_deep_copy(json_object_get(done, "describe"));
    if (desc) {
        json_object_set_new(desc, "libraries", gv_torch_libraries(json_object_get(desc,
                                                                                   "mapped_files")));
        json_object_del(desc, "mapped_files");
        json_object_set_new(h, "device", desc);
    }
    double total = json_number_value(json_object_get(json_object_get(done, "timing"),
                                                     "capture_ops_seconds"));
    const char *devname = json_string_value(json_object_get(desc, "device"));
    json_object_set_new(h, "cpu_fallback",
                        fallback(w->ops, devname && strncmp(devname, "cpu", 3) != 0, total));
    json_t *nondet = json_array(), *rng = json_array();
    size_t i;
    json_t *op;
    json_array_foreach(w->ops, i, op) {
        json_t *e = json_pack("{s:I, s:s, s:s}", "op", (json_int_t)i, "name",
                              json_string_value(json_object_get(op, "name")), "module",
                              json_string_value(json_object_get(op, "module"))
                                  ? json_string_value(json_object_get(op, "module"))
                                  : "");
        if (json_object_get(op, "nondeterministic")) {
            json_object_set(e, "why", json_object_get(op, "nondeterministic"));
            json_array_append(nondet, e);
        }
        if (json_is_true(json_object_get(op, "rng")))
            json_array_append(rng, e);
        json_decref(e);
    }
    json_object_set_new(h, "nondeterministic_ops", nondet);
    json_object_set_new(h, "rng_ops", rng);
    json_object_set_new(h, "opaque_modules", string_list(json_object_get(done, "opaque_modules")));
    json_object_set_new(h, "buffers_updated",
                        string_list(json_object_get(done, "buffers_updated")));
    json_object_set_new(h, "ops", json_integer((json_int_t)json_array_size(w->ops)));
    if (o->snapshot)
        json_object_set(h, "snapshot", o->snapshot);
    return h;
}

/* The parameters, buffers and inputs of capture c, as the request's "load"
 * specs and payload parts (after the program's bytes, when there is one). */
static int load_parts(const struct gv_cap *c, json_t *req, struct gv_torch_part **parts,
                      void ***bufs, int *n, const struct gv_torch_part *first, struct gv_err *err)
{
    size_t nt = json_array_size(c->tensors);
    *parts = calloc(nt + 2, sizeof **parts);
    *bufs = calloc(nt + 2, sizeof **bufs);
    if (!*parts || !*bufs)
        return gv_err_set(err, GV_E_NOMEM, "capture: out of memory");
    *n = 0;
    if (first)
        (*parts)[(*n)++] = *first; /* not owned: bufs[0] stays NULL */
    json_t *specs = json_array();
    size_t i;
    json_t *t;
    int rc = GV_OK;
    json_array_foreach(c->tensors, i, t) {
        const char *role = json_string_value(json_object_get(t, "role"));
        if (!role || (strncmp(role, "param:", 6) && strncmp(role, "buffer:", 7) &&
                      strncmp(role, "input:", 6)))
            continue;
        void *data = NULL;
        size_t len = 0;
        if ((rc = gv_cap_read(c, (int64_t)i, &data, &len, err)))
            break;
        (*bufs)[*n] = data;
        (*parts)[(*n)++] = (struct gv_torch_part){data, len};
        json_array_append_new(specs, json_pack("{s:s, s:O, s:O, s:I}", "role", role, "dtype",
                                               json_object_get(t, "dtype"), "shape",
                                               json_object_get(t, "shape"), "nbytes",
                                               (json_int_t)len));
    }
    json_object_set_new(req, "load", specs);
    return rc;
}

int gv_capture_run(const struct gv_backend *be, struct gv_device *dev,
                   const struct gv_capture_opts *o, json_t **summary, struct gv_err *err)
{
    *summary = NULL;
    if (strcmp(be->name, "torch") != 0)
        return gv_err_set(err, GV_E_USAGE, "a capture runs the model in PyTorch: the device must "
                          "be torch:cuda:N or torch:cpu, not %s", be->name);
    struct gv_cap_writer w;
    int rc = gv_cap_create(&w, o->out, o->max_bytes, err);
    if (rc)
        return rc;
    json_t *req = json_pack("{s:s, s:s, s:i}", "op", "capture", "model", o->model, "seed", o->seed);
    if (o->file_sha256) /* the worker runs the model's bytes only when they hash to this */
        json_object_set_new(req, "file_sha256", json_string(o->file_sha256));
    size_t ml = strlen(o->model);
    int program = ml > 4 && !strcmp(o->model + ml - 4, ".pt2");
    struct gv_torch_part part = {o->file, o->file_len};
    if (!program) {
        json_t *src = o->file ? json_stringn(o->file, o->file_len) : NULL;
        if (!src) {
            json_decref(req);
            gv_cap_abort(&w);
            return gv_err_set(err, GV_E_FORMAT, "%s: the model file is not UTF-8 text", o->model);
        }
        json_object_set_new(req, "source", src);
    }
    struct gv_torch_part *parts = NULL;
    void **bufs = NULL;
    int nparts = 0;
    if (program) {
        json_object_set_new(req, "program_nbytes", json_integer((json_int_t)o->file_len));
    }
    if (o->load)
        rc = load_parts(o->load, req, &parts, &bufs, &nparts, program ? &part : NULL, err);
    else if (program) {
        parts = malloc(sizeof *parts);
        if (parts) {
            parts[0] = part;
            nparts = 1;
        }
    }
    if (!rc)
        rc = gv_torch_request(dev, req, parts, nparts, err);
    for (int k = 0; bufs && k < nparts; k++)
        free(bufs[k]);
    free(bufs);
    free(parts);
    json_decref(req);
    json_t *done = NULL;
    while (!rc && !done) {
        struct gv_torch_reply r;
        void *data = NULL;
        size_t len = 0;
        rc = gv_torch_reply_next(dev, FRAME_TIMEOUT_MS, MAX_TENSOR, &data, &len, &r, err);
        if (rc)
            break;
        const char *kind = json_string_value(json_object_get(r.doc, "kind"));
        if (!r.ok)
            rc = gv_err_set(err, GV_E_FORMAT, "%s", r.error[0] ? r.error : r.status);
        else if (kind && !strcmp(kind, "tensor"))
            rc = add_tensor(&w, r.doc, data, len, err);
        else if (kind && !strcmp(kind, "op"))
            gv_cap_add_op(&w, op_record(r.doc));
        else if (kind && !strcmp(kind, "done"))
            done = json_incref(r.doc);
        else
            rc = gv_err_set(err, GV_E_FORMAT, "capture: the worker sent a message of kind '%s'",
                            kind ? kind : "(none)");
        free(data);
        gv_torch_reply_free(&r);
    }
    if (rc) {
        gv_cap_abort(&w);
        json_decref(done);
        return rc;
    }
    json_t *h = header_of(o, done, &w);
    json_decref(done);
    rc = gv_cap_finish(&w, h, err);
    if (rc) {
        json_decref(h);
        return rc;
    }
    *summary = h;
    return GV_OK;
}
