/* gpuvet's capture recorder in C: the body of the recording dispatch mode's
 * __torch_dispatch__ (python/gpuvet_capture_record.py, make_recorder: dispatch_py)
 * and the bookkeeping of Tensors (python/gpuvet_capture_tensors.py) it does for
 * every op (ref, send, remember, describe, before_writes), written against
 * CPython's stable ABI (3.8 and later), so one build loads into any CPython of
 * the platform, whatever its PyTorch.
 *
 * It computes what the Python computes, branch for branch, with the same
 * objects (the Tensors object's dicts and lists, the Recorder's records and
 * parts). Where the Python does something rare, this calls the Python itself,
 * so the two cannot differ there: an op that may draw random numbers
 * (dispatch_py), a view's storage (storage_of), a storage key that fails
 * (Tensors.before_writes), emptying the queue (Tensors.flush),
 * writing (Tensors.write), and any value other than None, bool, int, str, a
 * finite float, a tensor, a list, a tuple or a dict (encode).
 * docs/capture.md, "The recorder in C". */
#define Py_LIMITED_API 0x03080000
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <time.h>

/* what setup() is given: torch objects and the Python functions called back */
static PyObject *g_tensor_type;   /* torch.Tensor */
static PyObject *g_cpu;           /* torch.device("cpu") */
static PyObject *g_torch;         /* the torch module */
static PyObject *g_dtypes;        /* NAME_OF_DTYPE: dtype -> name */
static PyObject *g_facts;         /* SCHEMA_FACTS: op -> (writes, rng, name) */
static PyObject *g_device_names;  /* DEVICE_NAMES: device -> str(device) */
static PyObject *g_schema_facts;  /* schema_facts(func) */
static PyObject *g_encode;        /* encode(torch, tensors, v, role_hint, devs) */
static PyObject *g_storage_of;    /* storage_of(t) */
static PyObject *g_dtype_name;    /* dtype_name(torch, dt) */
static PyObject *g_devices_of;    /* device_names(devs) */

/* interned names */
static PyObject *s_known, *s_roles, *s_next, *s_budget, *s_any_device, *s_pending,
    *s_pending_bytes, *s_pending_storages, *s_flush, *s_write, *s_before_writes,
    *s_version, *s_dtype, *s_device, *s_type, *s_is_view, *s_numel, *s_element_size,
    *s_data_ptr, *s_storage_offset, *s_t, *s_w, *s_is_gpu, *s_sync, *s_stack, *s_parts,
    *s_timed, *s_n, *s_op_seconds, *s_records, *s_events, *s_event, *s_stream,
    *s_record_event, *s_dispatch_py, *s_send_seconds, *s_wait_seconds, *s_inputs,
    *s_launch, *s_cpu_ops, *s_outputs, *s_ok, *s_kind, *s_op, *s_i, *s_name, *s_module,
    *s_args, *s_kwargs, *s_tuple, *s_devices, *s_seconds, *s_mutated, *s_arg, *s_dollar_t,
    *s_leaf, *s_aten, *s_empty, *s_copies, *s_tensor, *s_clone, *s_shape, *s_stride,
    *s_key, *s_role;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts); /* time.perf_counter()'s clock on Linux */
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* obj.name as a C double / long long / truth value; -1 (with an error) on failure */
static int attr_double(PyObject *obj, PyObject *name, double *out)
{
    PyObject *v = PyObject_GetAttr(obj, name);
    if (!v)
        return -1;
    *out = PyFloat_AsDouble(v);
    Py_DECREF(v);
    return *out == -1.0 && PyErr_Occurred() ? -1 : 0;
}

static int attr_ll(PyObject *obj, PyObject *name, long long *out)
{
    PyObject *v = PyObject_GetAttr(obj, name);
    if (!v)
        return -1;
    *out = PyLong_AsLongLong(v);
    Py_DECREF(v);
    return *out == -1 && PyErr_Occurred() ? -1 : 0;
}

static int attr_true(PyObject *obj, PyObject *name)
{
    PyObject *v = PyObject_GetAttr(obj, name);
    if (!v)
        return -1;
    int r = PyObject_IsTrue(v);
    Py_DECREF(v);
    return r;
}

static int set_attr_ll(PyObject *obj, PyObject *name, long long v)
{
    PyObject *x = PyLong_FromLongLong(v);
    if (!x)
        return -1;
    int r = PyObject_SetAttr(obj, name, x);
    Py_DECREF(x);
    return r;
}

/* parts[key] += delta */
static int add_part(PyObject *parts, PyObject *key, double delta)
{
    PyObject *v = PyDict_GetItemWithError(parts, key);
    if (!v)
        return PyErr_Occurred() ? -1 : 0;
    double x = PyFloat_AsDouble(v);
    if (x == -1.0 && PyErr_Occurred())
        return -1;
    PyObject *nv = PyFloat_FromDouble(x + delta);
    if (!nv)
        return -1;
    int r = PyDict_SetItem(parts, key, nv);
    Py_DECREF(nv);
    return r;
}

/* t.send_seconds + t.wait_seconds */
static int sent_seconds(PyObject *T, double *out)
{
    double a, b;
    if (attr_double(T, s_send_seconds, &a) || attr_double(T, s_wait_seconds, &b))
        return -1;
    *out = a + b;
    return 0;
}

/* a method call with no arguments, as a long long */
static int call_ll(PyObject *obj, PyObject *name, long long *out)
{
    PyObject *v = PyObject_CallMethodObjArgs(obj, name, NULL);
    if (!v)
        return -1;
    *out = PyLong_AsLongLong(v);
    Py_DECREF(v);
    return *out == -1 && PyErr_Occurred() ? -1 : 0;
}

/* storage_key(t) without Python: 1 and *key set, 0 where the Python must answer
 * (an error along the way, which storage_key turns into None) */
static int storage_key_fast(PyObject *t, long long es, long long *key)
{
    long long dp, off;
    if (call_ll(t, s_data_ptr, &dp) || call_ll(t, s_storage_offset, &off)) {
        PyErr_Clear();
        return 0;
    }
    *key = dp - off * es;
    return 1;
}

/* storage_of(t): (key, bytes) as new references; the Python answers for a view
 * or wherever a call fails */
static int storage_of(PyObject *t, PyObject **key, long long *n)
{
    PyObject *v = PyObject_CallMethodObjArgs(t, s_is_view, NULL);
    int view = v ? PyObject_IsTrue(v) : -1;
    Py_XDECREF(v);
    long long numel, es, k;
    if (view == 0 && !call_ll(t, s_numel, &numel) && !call_ll(t, s_element_size, &es) &&
        storage_key_fast(t, es, &k)) {
        *key = PyLong_FromLongLong(k);
        *n = numel * es;
        return *key ? 0 : -1;
    }
    PyErr_Clear();
    PyObject *r = PyObject_CallFunctionObjArgs(g_storage_of, t, NULL);
    if (!r)
        return -1;
    if (!PyTuple_Check(r) || PyTuple_Size(r) != 2) {
        Py_DECREF(r);
        PyErr_SetString(PyExc_TypeError, "storage_of did not return (key, bytes)");
        return -1;
    }
    *key = PyTuple_GetItem(r, 0);
    Py_INCREF(*key);
    *n = PyLong_AsLongLong(PyTuple_GetItem(r, 1));
    Py_DECREF(r);
    if (*n == -1 && PyErr_Occurred()) {
        Py_CLEAR(*key);
        return -1;
    }
    return 0;
}

/* [n, [entry]]: a pending storage's slot */
static PyObject *storage_slot(long long n, PyObject *entry)
{
    PyObject *nb = PyLong_FromLongLong(n), *entries = nb ? PyList_New(1) : NULL, *slot = NULL;
    if (entries) {
        Py_INCREF(entry);
        PyList_SetItem(entries, 0, entry);
        slot = PyList_New(2);
    }
    if (slot) {
        Py_INCREF(nb);
        PyList_SetItem(slot, 0, nb);
        Py_INCREF(entries);
        PyList_SetItem(slot, 1, entries);
    }
    Py_XDECREF(nb);
    Py_XDECREF(entries);
    return slot;
}

/* Tensors.send(t, role): the value's capture id (a new reference) */
static PyObject *send(PyObject *T, PyObject *t, PyObject *role)
{
    PyObject *dtype = NULL, *dt = NULL, *cid = NULL, *meta = NULL, *key = NULL,
             *pending = NULL, *storages = NULL, *roles = NULL, *tid = NULL, *res = NULL;
    long long next, budget, n = 0, pending_bytes;
    dtype = PyObject_GetAttr(t, s_dtype);
    if (!dtype)
        goto out;
    dt = PyDict_GetItemWithError(g_dtypes, dtype);
    if (dt && PyObject_IsTrue(dt) == 1) {
        Py_INCREF(dt);
    } else {
        if (PyErr_Occurred())
            goto out;
        dt = PyObject_CallFunctionObjArgs(g_dtype_name, g_torch, dtype, NULL);
        if (!dt)
            goto out;
    }
    if (dt == Py_None) {
        PyErr_Format(PyExc_RuntimeError, "a tensor of dtype %S, which gpuvet cannot store",
                     dtype);
        goto out;
    }
    if (attr_ll(T, s_next, &next) || set_attr_ll(T, s_next, next + 1))
        goto out;
    cid = PyLong_FromLongLong(next);
    if (!cid)
        goto out;
    meta = PyTuple_Pack(3, cid, role, dt);
    if (!meta || attr_ll(T, s_budget, &budget))
        goto out;
    int queue = 0;
    if (budget) {
        int any = attr_true(T, s_any_device);
        if (any < 0)
            goto out;
        pending = PyObject_GetAttr(T, s_pending);
        if (!pending)
            goto out;
        queue = any || PyList_Size(pending) > 0;
        if (!queue) {
            PyObject *dev = PyObject_GetAttr(t, s_device);
            PyObject *type = dev ? PyObject_GetAttr(dev, s_type) : NULL;
            Py_XDECREF(dev);
            if (!type)
                goto out;
            queue = !PyUnicode_Check(type) || PyUnicode_CompareWithASCIIString(type, "cpu");
            Py_DECREF(type);
        }
    }
    if (!queue) {
        PyObject *r = PyObject_CallMethodObjArgs(T, s_write, t, meta, NULL);
        if (!r)
            goto out;
        Py_DECREF(r);
        res = cid;
        cid = NULL;
        goto out;
    }
    if (storage_of(t, &key, &n))
        goto out;
    roles = PyObject_GetAttr(T, s_roles);
    tid = roles ? PyLong_FromVoidPtr(t) : NULL;
    if (!tid)
        goto out;
    int in_roles = PyDict_Contains(roles, tid);
    if (in_roles < 0)
        goto out;
    if (in_roles)
        n = 0; /* lives on anyway */
    storages = PyObject_GetAttr(T, s_pending_storages);
    if (!storages)
        goto out;
    PyObject *held = PyDict_GetItemWithError(storages, key); /* borrowed */
    if (!held && PyErr_Occurred())
        goto out;
    Py_XINCREF(held);
    if (held) {
        n = 0;
    } else if (PyList_Size(pending) > 0) {
        if (attr_ll(T, s_pending_bytes, &pending_bytes))
            goto out_held;
        if (pending_bytes + n > budget) {
            PyObject *r = PyObject_CallMethodObjArgs(T, s_flush, NULL);
            if (!r)
                goto out_held;
            Py_DECREF(r);
            /* flush() put new ones in their places */
            Py_DECREF(pending);
            Py_DECREF(storages);
            pending = PyObject_GetAttr(T, s_pending);
            storages = pending ? PyObject_GetAttr(T, s_pending_storages) : NULL;
            if (!pending || !storages)
                goto out_held;
        }
    }
    if (n > budget) {
        PyObject *r = PyObject_CallMethodObjArgs(T, s_write, t, meta, NULL); /* alone, now */
        if (!r)
            goto out_held;
        Py_DECREF(r);
    } else {
        PyObject *entry = PyList_New(3);
        if (!entry)
            goto out_held;
        Py_INCREF(t);
        PyList_SetItem(entry, 0, t);
        Py_INCREF(meta);
        PyList_SetItem(entry, 1, meta);
        Py_INCREF(key);
        PyList_SetItem(entry, 2, key);
        int bad = PyList_Append(pending, entry) || attr_ll(T, s_pending_bytes, &pending_bytes) ||
                  set_attr_ll(T, s_pending_bytes, pending_bytes + n);
        if (!bad && !held) {
            PyObject *slot = storage_slot(n, entry);
            bad = !slot || PyDict_SetItem(storages, key, slot);
            Py_XDECREF(slot);
        } else if (!bad) {
            PyObject *entries = PyList_Check(held) && PyList_Size(held) == 2
                                    ? PyList_GetItem(held, 1) : NULL;
            if (!entries || !PyList_Check(entries)) {
                PyErr_SetString(PyExc_TypeError, "a pending storage is not [bytes, entries]");
                bad = 1;
            } else {
                bad = PyList_Append(entries, entry);
            }
        }
        Py_DECREF(entry);
        if (bad)
            goto out_held;
    }
    res = cid;
    cid = NULL;
out_held:
    Py_XDECREF(held);
out:
    Py_XDECREF(dtype);
    Py_XDECREF(dt);
    Py_XDECREF(cid);
    Py_XDECREF(meta);
    Py_XDECREF(key);
    Py_XDECREF(pending);
    Py_XDECREF(storages);
    Py_XDECREF(roles);
    Py_XDECREF(tid);
    return res;
}

/* Tensors.remember(t, cid, produced) */
static int remember(PyObject *T, PyObject *t, PyObject *cid, int produced)
{
    PyObject *wr = PyWeakref_NewRef(t, NULL);
    if (!wr) {
        if (PyErr_ExceptionMatches(PyExc_TypeError)) {
            PyErr_Clear();
            return 0;
        }
        return -1;
    }
    PyObject *ver = produced ? (Py_INCREF(Py_None), Py_None) : PyObject_GetAttr(t, s_version);
    PyObject *entry = ver ? PyTuple_Pack(3, wr, ver, cid) : NULL;
    PyObject *known = entry ? PyObject_GetAttr(T, s_known) : NULL;
    PyObject *tid = known ? PyLong_FromVoidPtr(t) : NULL;
    int r = tid ? PyDict_SetItem(known, tid, entry) : -1;
    Py_XDECREF(tid);
    Py_XDECREF(known);
    Py_XDECREF(entry);
    Py_XDECREF(ver);
    Py_DECREF(wr);
    return r;
}

/* Tensors.ref(t, role_hint): the capture id of t's current value (new reference) */
static PyObject *ref(PyObject *T, PyObject *t, PyObject *role_hint)
{
    PyObject *res = NULL, *roles = NULL, *role = NULL;
    PyObject *known = PyObject_GetAttr(T, s_known);
    PyObject *tid = known ? PyLong_FromVoidPtr(t) : NULL;
    if (!tid)
        goto out;
    PyObject *k = PyDict_GetItemWithError(known, tid);
    if (k && PyTuple_Check(k) && PyTuple_Size(k) == 3) {
        Py_INCREF(k);
        PyObject *obj = PyObject_CallObject(PyTuple_GetItem(k, 0), NULL);
        if (!obj) {
            Py_DECREF(k);
            goto out;
        }
        int same = obj == t;
        Py_DECREF(obj);
        if (same) {
            PyObject *v0 = PyTuple_GetItem(k, 1), *ver = PyObject_GetAttr(t, s_version);
            if (!ver) {
                Py_DECREF(k);
                goto out;
            }
            if (v0 == Py_None) {
                PyObject *nk = PyTuple_Pack(3, PyTuple_GetItem(k, 0), ver, PyTuple_GetItem(k, 2));
                if (nk && !PyDict_SetItem(known, tid, nk)) {
                    res = PyTuple_GetItem(k, 2);
                    Py_INCREF(res);
                }
                Py_XDECREF(nk);
            } else {
                int eq = PyObject_RichCompareBool(v0, ver, Py_EQ);
                if (eq == 1) {
                    res = PyTuple_GetItem(k, 2);
                    Py_INCREF(res);
                }
            }
            Py_DECREF(ver);
        }
        Py_DECREF(k);
        if (res || PyErr_Occurred())
            goto out;
    } else if (!k && PyErr_Occurred()) {
        goto out;
    } else if (k) {
        PyErr_SetString(PyExc_TypeError, "Tensors.known holds something else than a triple");
        goto out;
    }
    roles = PyObject_GetAttr(T, s_roles);
    if (!roles)
        goto out;
    role = PyDict_GetItemWithError(roles, tid);
    if (!role && PyErr_Occurred())
        goto out;
    if (!role)
        role = role_hint;
    Py_INCREF(role);
    res = send(T, t, role);
    if (res && remember(T, t, res, 0))
        Py_CLEAR(res);
out:
    Py_XDECREF(role);
    Py_XDECREF(roles);
    Py_XDECREF(tid);
    Py_XDECREF(known);
    return res;
}

static int plain(PyObject *v)
{
    PyTypeObject *tp = Py_TYPE(v);
    return v == Py_None || tp == &PyBool_Type || tp == &PyLong_Type || tp == &PyUnicode_Type;
}

static int is_tensor(PyObject *v)
{
    return PyObject_IsInstance(v, g_tensor_type);
}

/* devs.add(t.device) */
static int add_device(PyObject *devs, PyObject *t)
{
    PyObject *d = PyObject_GetAttr(t, s_device);
    if (!d)
        return -1;
    int r = PySet_Add(devs, d);
    Py_DECREF(d);
    return r;
}

/* encode(torch, tensors, v, role_hint, devs) (new reference) */
static PyObject *encode(PyObject *T, PyObject *v, PyObject *hint, PyObject *devs)
{
    if (plain(v)) {
        Py_INCREF(v);
        return v;
    }
    int tensor = is_tensor(v);
    if (tensor < 0)
        return NULL;
    if (tensor) {
        if (add_device(devs, v))
            return NULL;
        PyObject *cid = ref(T, v, hint);
        if (!cid)
            return NULL;
        PyObject *d = PyDict_New();
        if (d && PyDict_SetItem(d, s_dollar_t, cid))
            Py_CLEAR(d);
        Py_DECREF(cid);
        return d;
    }
    if (PyList_Check(v) || PyTuple_Check(v)) {
        PyObject *seq = PySequence_Tuple(v);
        if (!seq)
            return NULL;
        Py_ssize_t n = PyTuple_Size(seq);
        PyObject *out = PyList_New(n);
        for (Py_ssize_t i = 0; out && i < n; i++) {
            PyObject *x = PyTuple_GetItem(seq, i), *e;
            if (plain(x)) {
                Py_INCREF(x);
                e = x;
            } else {
                e = encode(T, x, hint, devs);
            }
            if (!e)
                Py_CLEAR(out);
            else
                PyList_SetItem(out, i, e);
        }
        Py_DECREF(seq);
        return out;
    }
    if (Py_TYPE(v) == &PyFloat_Type && isfinite(PyFloat_AsDouble(v))) {
        Py_INCREF(v);
        return v;
    }
    if (Py_TYPE(v) == &PyDict_Type) {
        PyObject *out = PyDict_New(), *k, *x;
        Py_ssize_t pos = 0;
        while (out && PyDict_Next(v, &pos, &k, &x)) {
            PyObject *ks = PyObject_Str(k), *e = ks ? encode(T, x, hint, devs) : NULL;
            if (!e || PyDict_SetItem(out, ks, e))
                Py_CLEAR(out);
            Py_XDECREF(ks);
            Py_XDECREF(e);
        }
        return out;
    }
    return PyObject_CallFunctionObjArgs(g_encode, g_torch, T, v, hint, devs, NULL);
}

/* op_writes(facts, args, kwargs): the arguments this call writes, the schema's and
 * the unmarked ones where their flag is True (new reference) */
static PyObject *op_writes(PyObject *facts, PyObject *args, PyObject *kwargs)
{
    PyObject *writes = PyTuple_GetItem(facts, 0), *unmarked = PyTuple_GetItem(facts, 3);
    if (unmarked != Py_None && PyTuple_Check(unmarked) && PyTuple_Size(unmarked) == 3) {
        Py_ssize_t i = PyLong_AsSsize_t(PyTuple_GetItem(unmarked, 0));
        if (i == -1 && PyErr_Occurred())
            return NULL;
        PyObject *flag = i < PyTuple_Size(args) ? PyTuple_GetItem(args, i)
                         : PyDict_GetItemWithError(kwargs, PyTuple_GetItem(unmarked, 1));
        if (!flag && PyErr_Occurred())
            return NULL;
        if (flag == Py_True)
            return PySequence_Concat(writes, PyTuple_GetItem(unmarked, 2));
    }
    Py_INCREF(writes);
    return writes;
}

/* mutated_args(writes, args, kwargs): [(name, tensor)] (new reference) */
static PyObject *mutated_args(PyObject *writes, PyObject *args, PyObject *kwargs)
{
    PyObject *out = PyList_New(0);
    Py_ssize_t nw = PyTuple_Check(writes) ? PyTuple_Size(writes) : -1;
    if (nw < 0) {
        Py_XDECREF(out);
        PyErr_SetString(PyExc_TypeError, "an op's written arguments are not a tuple");
        return NULL;
    }
    Py_ssize_t na = PyTuple_Size(args);
    for (Py_ssize_t j = 0; out && j < nw; j++) {
        PyObject *w = PyTuple_GetItem(writes, j);
        Py_ssize_t i = PyLong_AsSsize_t(PyTuple_GetItem(w, 0));
        PyObject *name = PyTuple_GetItem(w, 1), *v;
        if (i == -1 && PyErr_Occurred()) {
            Py_CLEAR(out);
            break;
        }
        v = i < na ? PyTuple_GetItem(args, i)
                   : (kwargs ? PyDict_GetItemWithError(kwargs, name) : NULL);
        if (!v && PyErr_Occurred()) {
            Py_CLEAR(out);
            break;
        }
        if (v && v != Py_None && PyObject_HasAttr(v, s_version)) {
            PyObject *pair = PyTuple_Pack(2, name, v);
            if (!pair || PyList_Append(out, pair))
                Py_CLEAR(out);
            Py_XDECREF(pair);
        }
    }
    return out;
}

/* dict[key] into *out as a new reference: 1 where it is there, 0 where not, -1 on error */
static int lookup(PyObject *dict, PyObject *key, PyObject **out)
{
    *out = PyDict_GetItemWithError(dict, key);
    if (*out) {
        Py_INCREF(*out);
        return 1;
    }
    return PyErr_Occurred() ? -1 : 0;
}

/* the name of a device, remembered (device_name) */
static PyObject *device_name(PyObject *d)
{
    PyObject *name;
    int found = lookup(g_device_names, d, &name);
    if (found)
        return name;
    name = PyObject_Str(d);
    if (name && PyDict_SetItem(g_device_names, d, name))
        Py_CLEAR(name);
    return name;
}

/* Tensors.describe(t, meta): a tensor message's header from (cid, role, dtype) */
static PyObject *describe(PyObject *t, PyObject *meta)
{
    if (!PyTuple_Check(meta) || PyTuple_Size(meta) != 3) {
        Py_INCREF(meta);
        return meta;
    }
    PyObject *cid = PyTuple_GetItem(meta, 0), *role = PyTuple_GetItem(meta, 1),
             *dt = PyTuple_GetItem(meta, 2);
    PyObject *r, *shape = NULL, *stride = NULL, *dev = NULL, *dname = NULL, *d = NULL;
    if (PyLong_Check(role)) {
        r = PyUnicode_FromFormat("op:%S", role);
    } else if (PyTuple_Check(role) && PyTuple_Size(role) == 2) {
        r = PyUnicode_FromFormat("op:%S:%S", PyTuple_GetItem(role, 0), PyTuple_GetItem(role, 1));
    } else {
        r = role;
        Py_INCREF(r);
    }
    PyObject *sh = r ? PyObject_GetAttr(t, s_shape) : NULL;
    shape = sh ? PySequence_List(sh) : NULL;
    Py_XDECREF(sh);
    PyObject *st = shape ? PyObject_CallMethodObjArgs(t, s_stride, NULL) : NULL;
    stride = st ? PySequence_List(st) : NULL;
    Py_XDECREF(st);
    dev = stride ? PyObject_GetAttr(t, s_device) : NULL;
    dname = dev ? device_name(dev) : NULL;
    d = dname ? PyDict_New() : NULL;
    if (d && (PyDict_SetItem(d, s_ok, Py_True) || PyDict_SetItem(d, s_kind, s_tensor) ||
              PyDict_SetItem(d, s_key, cid) || PyDict_SetItem(d, s_dtype, dt) ||
              PyDict_SetItem(d, s_shape, shape) || PyDict_SetItem(d, s_device, dname) ||
              PyDict_SetItem(d, s_stride, stride) || PyDict_SetItem(d, s_role, r)))
        Py_CLEAR(d);
    Py_XDECREF(r);
    Py_XDECREF(shape);
    Py_XDECREF(stride);
    Py_XDECREF(dev);
    Py_XDECREF(dname);
    return d;
}

/* bytes of a tensor's elements: numel() * element_size() */
static int nbytes_of(PyObject *t, long long *n)
{
    long long numel, es;
    if (call_ll(t, s_numel, &numel) || call_ll(t, s_element_size, &es))
        return -1;
    *n = numel * es;
    return 0;
}

/* The waiting values in the storages the op writes (their entries into hit) and
 * those storages (keys): 0, 1 where a storage key fails (the Python's None), -1 */
static int written_hits(PyObject *storages, PyObject *written, PyObject *keys, PyObject *hit)
{
    Py_ssize_t nv = PyList_Size(written);
    for (Py_ssize_t i = 0; i < nv; i++) {
        PyObject *v = PyList_GetItem(written, i);
        long long es, k;
        if (call_ll(v, s_element_size, &es) || !storage_key_fast(v, es, &k)) {
            PyErr_Clear();
            return 1;
        }
        PyObject *key = PyLong_FromLongLong(k);
        if (!key)
            return -1;
        PyObject *held = PyDict_GetItemWithError(storages, key);
        int seen = held ? PySequence_Contains(keys, key) : 0, bad = 0;
        if (held && seen == 0) {
            PyObject *entries = PyList_Check(held) && PyList_Size(held) == 2
                                    ? PyList_GetItem(held, 1) : NULL;
            PyObject *more = entries ? PySequence_InPlaceConcat(hit, entries) : NULL;
            if (!entries)
                PyErr_SetString(PyExc_TypeError, "a pending storage is not [bytes, entries]");
            bad = !more || PyList_Append(keys, key);
            Py_XDECREF(more);
        }
        Py_DECREF(key);
        if (bad || seen < 0 || (!held && PyErr_Occurred()))
            return -1;
    }
    return 0;
}

/* A waiting entry [t, meta, key] copied on the device before an op writes into its
 * storage, as Tensors.before_writes does: described as it is now, the clone waits
 * in its place, in a storage of its own. */
static int copy_entry(PyObject *T, PyObject *storages, PyObject *p, long long *pending_bytes)
{
    PyObject *t = PyList_GetItem(p, 0), *desc = describe(t, PyList_GetItem(p, 1));
    if (!desc || PyList_SetItem(p, 1, desc))
        return -1;
    PyObject *c = PyObject_CallMethodObjArgs(t, s_clone, NULL); /* t: p's until replaced */
    if (!c)
        return -1;
    Py_INCREF(c);
    if (PyList_SetItem(p, 0, c)) {
        Py_DECREF(c);
        return -1;
    }
    long long copies, es, k, n;
    int ok = !attr_ll(T, s_copies, &copies) && !set_attr_ll(T, s_copies, copies + 1) &&
             !call_ll(c, s_element_size, &es) && !nbytes_of(c, &n);
    PyObject *key = NULL;
    if (ok && storage_key_fast(c, es, &k)) {
        key = PyLong_FromLongLong(k);
    } else if (ok) {
        key = Py_None; /* storage_key's None */
        Py_INCREF(key);
    }
    Py_DECREF(c);
    if (!key)
        return -1;
    Py_INCREF(key);
    PyObject *slot = PyList_SetItem(p, 2, key) ? NULL : storage_slot(n, p);
    int bad = !slot || PyDict_SetItem(storages, key, slot); /* a clone's storage is its own */
    Py_XDECREF(slot);
    Py_DECREF(key);
    if (bad)
        return -1;
    *pending_bytes += n;
    return set_attr_ll(T, s_pending_bytes, *pending_bytes);
}

/* Tensors.before_writes(name, written): a waiting value in a storage the op writes
 * is copied on the device first (the queue is emptied where the copies would not
 * fit, or for an op outside aten); where a storage key fails, the Python does it. */
static int before_writes(PyObject *T, PyObject *name, PyObject *written)
{
    PyObject *pending = PyObject_GetAttr(T, s_pending);
    if (!pending)
        return -1;
    Py_ssize_t waiting = PyList_Size(pending);
    Py_DECREF(pending);
    if (waiting == 0)
        return 0;
    int aten = PyUnicode_Tailmatch(name, s_aten, 0, PY_SSIZE_T_MAX, -1);
    if (aten < 0)
        return -1;
    if (!aten) {
        PyObject *r = PyObject_CallMethodObjArgs(T, s_flush, NULL);
        Py_XDECREF(r);
        return r ? 0 : -1;
    }
    PyObject *storages = PyObject_GetAttr(T, s_pending_storages);
    PyObject *keys = storages ? PyList_New(0) : NULL, *hit = keys ? PyList_New(0) : NULL;
    int rc = hit ? written_hits(storages, written, keys, hit) : -1;
    Py_ssize_t nh = rc == 0 ? PyList_Size(hit) : 0;
    long long need = 0, pending_bytes = 0, budget = 0, n;
    for (Py_ssize_t i = 0; rc == 0 && i < nh; i++) {
        if (nbytes_of(PyList_GetItem(PyList_GetItem(hit, i), 0), &n))
            rc = -1;
        else
            need += n;
    }
    if (rc == 0 && nh &&
        (attr_ll(T, s_pending_bytes, &pending_bytes) || attr_ll(T, s_budget, &budget)))
        rc = -1;
    if (rc == 0 && nh && pending_bytes + need > budget) {
        PyObject *r = PyObject_CallMethodObjArgs(T, s_flush, NULL);
        rc = r ? 2 : -1; /* emptied: nothing waits to be copied */
        Py_XDECREF(r);
    }
    for (Py_ssize_t i = 0; rc == 0 && i < nh; i++)
        if (copy_entry(T, storages, PyList_GetItem(hit, i), &pending_bytes))
            rc = -1;
    /* the written storages now hold no waiting value; what they held is counted
     * until the next flush (it lives on in the tensor written anyway) */
    Py_ssize_t nk = rc == 0 && nh ? PyList_Size(keys) : 0;
    for (Py_ssize_t i = 0; rc == 0 && i < nk; i++)
        if (PyDict_DelItem(storages, PyList_GetItem(keys, i)))
            rc = -1;
    Py_XDECREF(storages);
    Py_XDECREF(keys);
    Py_XDECREF(hit);
    if (rc == 1) {
        PyObject *r = PyObject_CallMethodObjArgs(T, s_before_writes, name, written, NULL);
        Py_XDECREF(r);
        return r ? 0 : -1;
    }
    return rc < 0 ? -1 : 0;
}

/* device_names(devs) */
static PyObject *device_names(PyObject *devs)
{
    if (PySet_Size(devs) != 1)
        return PyObject_CallFunctionObjArgs(g_devices_of, devs, NULL);
    PyObject *it = PyObject_GetIter(devs), *d = it ? PyIter_Next(it) : NULL;
    Py_XDECREF(it);
    if (!d)
        return NULL;
    PyObject *name = device_name(d), *out = NULL;
    Py_DECREF(d);
    if (name) {
        out = PyList_New(1);
        if (out)
            PyList_SetItem(out, 0, name);
        else
            Py_DECREF(name);
    }
    return out;
}

/* The op's schema facts (writes, rng, name, unmarked) as a new reference */
static PyObject *facts_of(PyObject *func)
{
    PyObject *f;
    int found = lookup(g_facts, func, &f);
    if (found)
        return f;
    f = PyObject_CallFunctionObjArgs(g_schema_facts, func, NULL);
    if (f && (!PyTuple_Check(f) || PyTuple_Size(f) != 4)) {
        Py_DECREF(f);
        PyErr_SetString(PyExc_TypeError, "schema_facts did not return four facts");
        return NULL;
    }
    return f;
}

static PyObject *call_method0(PyObject *obj, PyObject *name)
{
    return PyObject_CallMethodObjArgs(obj, name, NULL);
}

/* The op run for the recorder: on the GPU between timing events (a timed pass)
 * or plainly, or on the CPU after and before synchronisations and timed by the
 * clock (*dt, else -1). parts gets the time of the call. */
static PyObject *run_op(PyObject *rec, PyObject *w, PyObject *func, PyObject *args,
                        PyObject *kwargs, int gpu, PyObject *parts, PyObject **e0,
                        PyObject **e1, double *dt)
{
    PyObject *out = NULL, *r;
    double c2 = now();
    *dt = -1;
    if (gpu) {
        int timed = attr_true(rec, s_timed);
        if (timed < 0)
            return NULL;
        if (!timed) {
            out = PyObject_Call(func, args, kwargs);
            if (out && add_part(parts, s_launch, now() - c2))
                Py_CLEAR(out);
            return out;
        }
        PyObject *record = PyObject_GetAttr(rec, s_record_event), *s;
        if (!record)
            return NULL;
        *e0 = call_method0(rec, s_event);
        *e1 = *e0 ? call_method0(rec, s_event) : NULL;
        s = *e1 ? call_method0(rec, s_stream) : NULL;
        r = s ? PyObject_CallFunctionObjArgs(record, *e0, s, NULL) : NULL;
        Py_XDECREF(s);
        if (r) {
            Py_DECREF(r);
            out = PyObject_Call(func, args, kwargs);
        }
        s = out ? call_method0(rec, s_stream) : NULL;
        r = s ? PyObject_CallFunctionObjArgs(record, *e1, s, NULL) : NULL;
        Py_XDECREF(s);
        Py_XDECREF(r);
        Py_DECREF(record);
        if (!r || add_part(parts, s_launch, now() - c2))
            Py_CLEAR(out);
        return out;
    }
    if (!(r = call_method0(w, s_sync)))
        return NULL;
    Py_DECREF(r);
    double t0 = now();
    out = PyObject_Call(func, args, kwargs);
    if (!out)
        return NULL;
    if (!(r = call_method0(w, s_sync))) {
        Py_DECREF(out);
        return NULL;
    }
    Py_DECREF(r);
    double c3 = now(), op_seconds;
    *dt = c3 - t0;
    if (attr_double(rec, s_op_seconds, &op_seconds) || add_part(parts, s_cpu_ops, c3 - c2)) {
        Py_DECREF(out);
        return NULL;
    }
    PyObject *x = PyFloat_FromDouble(op_seconds + *dt);
    if (!x || PyObject_SetAttr(rec, s_op_seconds, x))
        Py_CLEAR(out);
    Py_XDECREF(x);
    return out;
}

/* The op's outputs as the record has them, each tensor sent (enc_out, a new
 * list), and the written arguments that are not among them (mutated) */
static int record_outputs(PyObject *T, PyObject *outs, PyObject *written, PyObject *n,
                          PyObject *devs, PyObject *enc_out, PyObject *mutated)
{
    Py_ssize_t no = PyTuple_Size(outs), nw = PyList_Size(written);
    for (Py_ssize_t i = 0; i < no; i++) {
        PyObject *o = PyTuple_GetItem(outs, i), *e;
        int tensor = is_tensor(o);
        if (tensor < 0)
            return -1;
        if (tensor) {
            PyObject *cid = add_device(devs, o) ? NULL : send(T, o, n);
            if (!cid || remember(T, o, cid, 1)) {
                Py_XDECREF(cid);
                return -1;
            }
            e = PyDict_New();
            if (e && PyDict_SetItem(e, s_dollar_t, cid))
                Py_CLEAR(e);
            Py_DECREF(cid);
        } else {
            e = encode(T, o, s_leaf, devs);
        }
        if (!e || PyList_Append(enc_out, e)) {
            Py_XDECREF(e);
            return -1;
        }
        Py_DECREF(e);
    }
    for (Py_ssize_t j = 0; j < nw; j++) {
        PyObject *pair = PyList_GetItem(written, j);
        PyObject *arg = PyTuple_GetItem(pair, 0), *v = PyTuple_GetItem(pair, 1);
        int among = 0;
        for (Py_ssize_t i = 0; i < no && !among; i++)
            among = PyTuple_GetItem(outs, i) == v;
        if (among)
            continue; /* in-place ops return the tensor they wrote: already sent */
        PyObject *role = PyTuple_Pack(2, n, arg);
        PyObject *cid = role ? send(T, v, role) : NULL;
        Py_XDECREF(role);
        if (!cid || remember(T, v, cid, 1)) {
            Py_XDECREF(cid);
            return -1;
        }
        PyObject *m = PyDict_New();
        int bad = !m || PyDict_SetItem(m, s_arg, arg) || PyDict_SetItem(m, s_dollar_t, cid) ||
                  PyList_Append(mutated, m);
        Py_XDECREF(m);
        Py_DECREF(cid);
        if (bad)
            return -1;
    }
    return 0;
}

/* the op's record, as dispatch_py builds it */
static PyObject *op_record(PyObject *n, PyObject *name, PyObject *module, PyObject *enc_args,
                           PyObject *enc_kwargs, PyObject *outputs, int tup, PyObject *devs,
                           double dt, PyObject *mutated)
{
    PyObject *d = PyDict_New(), *names = devs ? device_names(devs) : NULL;
    PyObject *secs = dt >= 0 ? PyFloat_FromDouble(dt) : (Py_INCREF(Py_None), Py_None);
    int bad = !d || !names || !secs || PyDict_SetItem(d, s_ok, Py_True) ||
              PyDict_SetItem(d, s_kind, s_op) || PyDict_SetItem(d, s_i, n) ||
              PyDict_SetItem(d, s_name, name) || PyDict_SetItem(d, s_module, module) ||
              PyDict_SetItem(d, s_args, enc_args) || PyDict_SetItem(d, s_kwargs, enc_kwargs) ||
              PyDict_SetItem(d, s_outputs, outputs) ||
              PyDict_SetItem(d, s_tuple, tup ? Py_True : Py_False) ||
              PyDict_SetItem(d, s_devices, names) || PyDict_SetItem(d, s_seconds, secs) ||
              (PyList_Size(mutated) && PyDict_SetItem(d, s_mutated, mutated));
    Py_XDECREF(names);
    Py_XDECREF(secs);
    if (bad)
        Py_CLEAR(d);
    return d;
}

struct op {
    PyObject *T, *w, *parts, *devs, *enc_args, *enc_kwargs, *facts, *written, *module,
        *out, *outs, *e0, *e1, *n, *enc_out, *mutated, *record;
};

static void op_clear(struct op *o)
{
    PyObject **all[] = {&o->T, &o->w, &o->parts, &o->devs, &o->enc_args, &o->enc_kwargs,
                        &o->facts, &o->written, &o->module, &o->outs, &o->e0, &o->e1, &o->n,
                        &o->enc_out, &o->mutated, &o->record};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        Py_CLEAR(*all[i]);
}

/* The module running now: stack[-1], or "" (new reference) */
static PyObject *current_module(PyObject *rec)
{
    PyObject *stack = PyObject_GetAttr(rec, s_stack), *m;
    if (!stack)
        return NULL;
    if (!PyList_Check(stack)) {
        Py_DECREF(stack);
        PyErr_SetString(PyExc_TypeError, "the recorder's module stack is not a list");
        return NULL;
    }
    Py_ssize_t k = PyList_Size(stack);
    m = k > 0 ? PyList_GetItem(stack, k - 1) : s_empty;
    Py_INCREF(m);
    Py_DECREF(stack);
    return m;
}

/* the tensors of mutated_args' pairs, as before_writes takes them (new list) */
static PyObject *written_tensors(PyObject *written)
{
    Py_ssize_t n = PyList_Size(written);
    PyObject *out = PyList_New(n);
    for (Py_ssize_t i = 0; out && i < n; i++) {
        PyObject *v = PyTuple_GetItem(PyList_GetItem(written, i), 1);
        Py_INCREF(v);
        PyList_SetItem(out, i, v);
    }
    return out;
}

/* dispatch(recorder, func, args, kwargs): the recorded op's result */
static PyObject *dispatch(PyObject *self, PyObject *pargs)
{
    PyObject *rec, *func, *args, *kwargs;
    if (!PyArg_ParseTuple(pargs, "OOOO", &rec, &func, &args, &kwargs))
        return NULL;
    if (!g_tensor_type) {
        PyErr_SetString(PyExc_RuntimeError, "_gpuvet_capture_record.setup() was not called");
        return NULL;
    }
    struct op o = {0};
    PyObject *result = NULL, *own_kwargs = NULL;
    o.facts = facts_of(func);
    if (!o.facts)
        return NULL;
    int rng = PyObject_IsTrue(PyTuple_GetItem(o.facts, 1));
    if (rng != 0) {
        Py_CLEAR(o.facts);
        return rng < 0 ? NULL : PyObject_CallMethodObjArgs(rec, s_dispatch_py, func, Py_None,
                                                           args, kwargs, NULL);
    }
    if (!PyTuple_Check(args)) {
        PyErr_SetString(PyExc_TypeError, "the op's arguments are not a tuple");
        goto out;
    }
    if (kwargs == Py_None || !PyObject_IsTrue(kwargs)) {
        kwargs = own_kwargs = PyDict_New();
        if (!kwargs)
            goto out;
    }
    o.T = PyObject_GetAttr(rec, s_t);
    o.w = o.T ? PyObject_GetAttr(rec, s_w) : NULL;
    o.parts = o.w ? PyObject_GetAttr(rec, s_parts) : NULL;
    if (!o.parts)
        goto out;
    int is_gpu = attr_true(o.w, s_is_gpu);
    if (is_gpu < 0)
        goto out;
    double c0 = now(), sent0, sent1;
    o.module = current_module(rec);
    if (!o.module || sent_seconds(o.T, &sent0) || !(o.devs = PySet_New(NULL)))
        goto out;
    o.enc_args = encode(o.T, args, s_leaf, o.devs);
    if (!o.enc_args)
        goto out;
    o.enc_kwargs = PyDict_Size(kwargs) ? encode(o.T, kwargs, s_leaf, o.devs) : PyDict_New();
    if (!o.enc_kwargs)
        goto out;
    PyObject *name = PyTuple_GetItem(o.facts, 2);
    PyObject *writes = op_writes(o.facts, args, kwargs);
    if (!writes)
        goto out;
    o.written = PyObject_IsTrue(writes) ? mutated_args(writes, args, kwargs) : PyList_New(0);
    Py_DECREF(writes);
    if (!o.written)
        goto out;
    PyObject *wt = written_tensors(o.written);
    int bw = wt ? before_writes(o.T, name, wt) : -1;
    Py_XDECREF(wt);
    if (bw)
        goto out;
    double c1 = now();
    if (sent_seconds(o.T, &sent1) || add_part(o.parts, s_inputs, c1 - c0 - (sent1 - sent0)))
        goto out;
    int on_cpu = PySet_Contains(o.devs, g_cpu);
    if (on_cpu < 0)
        goto out;
    double dt;
    o.out = run_op(rec, o.w, func, args, kwargs, is_gpu && !on_cpu, o.parts, &o.e0, &o.e1, &dt);
    if (!o.out)
        goto out;
    double c4 = now();
    if (sent_seconds(o.T, &sent0))
        goto out;
    int tup = PyTuple_Check(o.out) || PyList_Check(o.out);
    o.outs = tup ? PySequence_Tuple(o.out) : PyTuple_Pack(1, o.out);
    o.n = o.outs ? PyObject_GetAttr(rec, s_n) : NULL;
    o.enc_out = o.n ? PyList_New(0) : NULL;
    o.mutated = o.enc_out ? PyList_New(0) : NULL;
    if (!o.mutated ||
        record_outputs(o.T, o.outs, o.written, o.n, o.devs, o.enc_out, o.mutated))
        goto out;
    PyObject *outputs = tup ? o.enc_out : PyList_GetItem(o.enc_out, 0);
    o.record = op_record(o.n, name, o.module, o.enc_args, o.enc_kwargs, outputs, tup, o.devs,
                         dt, o.mutated);
    if (!o.record)
        goto out;
    if (dt < 0 && o.e0) {
        PyObject *events = PyObject_GetAttr(rec, s_events);
        PyObject *ev = events ? PyTuple_Pack(3, o.record, o.e0, o.e1) : NULL;
        int bad = !ev || PyList_Append(events, ev);
        Py_XDECREF(ev);
        Py_XDECREF(events);
        if (bad)
            goto out;
    }
    if (sent_seconds(o.T, &sent1) ||
        add_part(o.parts, s_outputs, now() - c4 - (sent1 - sent0)))
        goto out;
    PyObject *records = PyObject_GetAttr(rec, s_records);
    int bad = !records || PyList_Append(records, o.record);
    Py_XDECREF(records);
    long long i = bad ? 0 : PyLong_AsLongLong(o.n);
    if (bad || (i == -1 && PyErr_Occurred()) || set_attr_ll(rec, s_n, i + 1))
        goto out;
    result = o.out;
    o.out = NULL;
out:
    Py_XDECREF(o.out);
    op_clear(&o);
    Py_XDECREF(own_kwargs);
    return result;
}

static PyObject *intern(const char *s)
{
    return PyUnicode_InternFromString(s);
}

static int setup_names(void)
{
    struct {
        PyObject **p;
        const char *s;
    } names[] = {
        {&s_known, "known"}, {&s_roles, "roles"}, {&s_next, "next"}, {&s_budget, "budget"},
        {&s_any_device, "any_device"}, {&s_pending, "pending"},
        {&s_pending_bytes, "pending_bytes"}, {&s_pending_storages, "pending_storages"},
        {&s_flush, "flush"}, {&s_write, "write"}, {&s_before_writes, "before_writes"},
        {&s_version, "_version"}, {&s_dtype, "dtype"}, {&s_device, "device"},
        {&s_type, "type"}, {&s_is_view, "_is_view"}, {&s_numel, "numel"},
        {&s_element_size, "element_size"}, {&s_data_ptr, "data_ptr"},
        {&s_storage_offset, "storage_offset"}, {&s_t, "t"}, {&s_w, "w"},
        {&s_is_gpu, "is_gpu"}, {&s_sync, "sync"}, {&s_stack, "stack"}, {&s_parts, "parts"},
        {&s_timed, "timed"}, {&s_n, "n"}, {&s_op_seconds, "op_seconds"},
        {&s_records, "records"}, {&s_events, "events"}, {&s_event, "event"},
        {&s_stream, "stream"}, {&s_record_event, "record_event"},
        {&s_dispatch_py, "dispatch_py"}, {&s_send_seconds, "send_seconds"},
        {&s_wait_seconds, "wait_seconds"}, {&s_inputs, "inputs"}, {&s_launch, "launch"},
        {&s_cpu_ops, "cpu_ops"}, {&s_outputs, "outputs"}, {&s_ok, "ok"}, {&s_kind, "kind"},
        {&s_op, "op"}, {&s_i, "i"}, {&s_name, "name"}, {&s_module, "module"},
        {&s_args, "args"}, {&s_kwargs, "kwargs"}, {&s_tuple, "tuple"},
        {&s_devices, "devices"}, {&s_seconds, "seconds"}, {&s_mutated, "mutated"},
        {&s_arg, "arg"}, {&s_dollar_t, "$t"}, {&s_leaf, "leaf"}, {&s_aten, "aten."},
        {&s_empty, ""}, {&s_copies, "copies"}, {&s_tensor, "tensor"}, {&s_clone, "clone"},
        {&s_shape, "shape"}, {&s_stride, "stride"}, {&s_key, "key"}, {&s_role, "role"},
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (!*names[i].p && !(*names[i].p = intern(names[i].s)))
            return -1;
    return 0;
}

/* setup(dict): the torch objects and Python functions named in setup_keys */
static PyObject *setup(PyObject *self, PyObject *pargs)
{
    PyObject *d;
    if (!PyArg_ParseTuple(pargs, "O!", &PyDict_Type, &d))
        return NULL;
    struct {
        PyObject **p;
        const char *key;
    } keys[] = {
        {&g_tensor_type, "Tensor"}, {&g_cpu, "cpu"}, {&g_torch, "torch"},
        {&g_dtypes, "NAME_OF_DTYPE"}, {&g_facts, "SCHEMA_FACTS"},
        {&g_device_names, "DEVICE_NAMES"}, {&g_schema_facts, "schema_facts"},
        {&g_encode, "encode"}, {&g_storage_of, "storage_of"}, {&g_dtype_name, "dtype_name"},
        {&g_devices_of, "device_names"},
    };
    if (setup_names())
        return NULL;
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        PyObject *v = PyDict_GetItemString(d, keys[i].key);
        if (!v) {
            PyErr_Format(PyExc_KeyError, "_gpuvet_capture_record.setup: no %s", keys[i].key);
            return NULL;
        }
        if ((keys[i].p == &g_dtypes || keys[i].p == &g_facts || keys[i].p == &g_device_names)
            && !PyDict_Check(v)) {
            PyErr_Format(PyExc_TypeError, "_gpuvet_capture_record.setup: %s is not a dict",
                         keys[i].key);
            return NULL;
        }
        Py_INCREF(v);
        Py_XDECREF(*keys[i].p);
        *keys[i].p = v;
    }
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"setup", setup, METH_VARARGS, "setup(dict): the torch objects and Python functions"},
    {"dispatch", dispatch, METH_VARARGS,
     "dispatch(recorder, func, args, kwargs): runs and records one op"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_gpuvet_capture_record", "gpuvet's capture recorder in C", -1,
    methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__gpuvet_capture_record(void);
PyMODINIT_FUNC PyInit__gpuvet_capture_record(void)
{
    return PyModule_Create(&module);
}
