# gpuvet's capture and replay of a user's model, run inside the PyTorch worker
# (gpuvet_torch_worker.py, which imports this module and calls capture_model(),
# replay_op() and replay_span()). docs/capture.md.
#
# capture: every ATen operation of one forward pass, seen through a
# TorchDispatchMode (so functional calls, in-place ops and views are there too,
# which module hooks miss), with the module it ran in; each tensor an op reads
# or writes goes to gpuvet once, as it appears, and gpuvet streams it to disk.
# replay: one recorded op, fed the recorded inputs, on this environment's device,
# and the same op in float64 on the CPU as the referee.
import dataclasses
import gc
import hashlib
import linecache
import os
import re
import time
import traceback
import weakref
from collections.abc import Mapping

from gpuvet_errors import Unsupported, err_text, where

CAPTURE_FMT = 1

NAME_OF_DTYPE = {}


DEVICE_NAMES = {}


def device_name(d):
    """str(device), remembered per device."""
    n = DEVICE_NAMES.get(d)
    if n is None:
        n = DEVICE_NAMES[d] = str(d)
    return n


def device_names(devs):
    """The sorted names of a set of devices (most ops have one)."""
    if len(devs) == 1:
        for d in devs:
            return [device_name(d)]
    return sorted(set(device_name(d) for d in devs))


def dtype_name(torch, dt):
    if not NAME_OF_DTYPE:
        for n in ("float64", "float32", "float16", "bfloat16", "float8_e4m3fn", "float8_e5m2",
                  "int64", "int32", "int16", "int8", "uint8", "bool", "complex64",
                  "complex128", "uint16", "uint32", "uint64"):
            d = getattr(torch, n, None)
            if d is not None:
                NAME_OF_DTYPE[d] = n
    return NAME_OF_DTYPE.get(dt)


# The names a capture may give a dtype, a layout or a memory format ({"$dtype": ...} in
# an op's arguments, a tensor's "dtype"). A document's name is looked up on torch only
# when it is in its table, and used only when what torch has under it is of that kind:
# no other attribute of torch is ever reached from a capture.
TORCH_ENUMS = {
    "dtype": frozenset((
        "float64", "float32", "float16", "bfloat16", "float8_e4m3fn", "float8_e5m2",
        "float8_e4m3fnuz", "float8_e5m2fnuz", "float8_e8m0fnu", "float4_e2m1fn_x2",
        "int64", "int32", "int16", "int8", "uint8", "uint16", "uint32", "uint64", "bool",
        "complex32", "complex64", "complex128", "qint8", "quint8", "qint32", "quint4x2",
        "quint2x4")),
    "layout": frozenset(("strided", "sparse_coo", "sparse_csr", "sparse_csc", "sparse_bsr",
                         "sparse_bsc", "_mkldnn", "jagged")),
    "memory_format": frozenset(("contiguous_format", "channels_last", "channels_last_3d",
                                "preserve_format")),
}


def quoted(v):
    """A document's value for a message: ASCII, escaped, quoted, at most 200 characters."""
    return ascii(v)[:200]


def torch_enum(torch, kind, name):
    """torch.<name> for a dtype, layout or memory_format name from a capture (TORCH_ENUMS)."""
    if not isinstance(name, str) or name not in TORCH_ENUMS[kind]:
        raise Unsupported("unknown %s %s: not replayed" % (kind, quoted(name)))
    v = getattr(torch, name, None)
    if not isinstance(v, getattr(torch, kind)):
        raise Unsupported("this torch has no %s %s: not replayed" % (kind, name))
    return v


def tensor_bytes(torch, t):
    """The tensor's values, C-contiguous, as a bytearray (no numpy)."""
    t = t.detach()
    if t.device.type != "cpu" and not t.is_contiguous():
        t = t.cpu()  # (a contiguous one is copied from the device straight into out)
    t = t.contiguous().reshape(-1)
    out = bytearray(t.numel() * t.element_size())
    if out:
        try:
            torch.frombuffer(out, dtype=t.dtype).copy_(t)
        except (TypeError, RuntimeError, ValueError):
            torch.frombuffer(out, dtype=torch.uint8).copy_(t.view(torch.uint8))
    return out


class ModelError(Exception):
    """The user's model file or function failed: the message names the file and line."""


def user_frame(e, path):
    """The last traceback frame inside the user's file: ' (model.py:12 in make)'."""
    for f in reversed(traceback.extract_tb(e.__traceback__)):
        if f.filename == path:
            return " (%s:%d in %s)" % (path, f.lineno, f.name)
    return ""


def load_state(torch, model, inputs, specs, payload, path):
    """Gives the model another capture's parameters, buffers and inputs (bisect's
    run of the model in this environment, so that it computes on the same values)."""
    params = dict(model.named_parameters()) if hasattr(model, "named_parameters") else {}
    bufs = dict(model.named_buffers()) if hasattr(model, "named_buffers") else {}
    off = 0
    for spec in specs:
        n = int(spec["nbytes"])
        dt = torch_enum(torch, "dtype", spec["dtype"])
        t = torch.frombuffer(payload[off:off + n], dtype=dt) if n else torch.zeros(0, dtype=dt)
        t = t.reshape(spec["shape"])
        off += n
        kind, _, name = spec["role"].partition(":")
        if kind == "input":
            i = int(name)
            if i >= len(inputs) or list(inputs[i].shape) != list(t.shape):
                raise ModelError("%s: input %s here does not match the capture's" % (path, name))
            inputs[i] = t.to(inputs[i].dtype)
            continue
        target = params.get(name) if kind == "param" else bufs.get(name)
        if target is None or list(target.shape) != list(t.shape):
            raise ModelError("%s: the model here has no %s %s of shape %s like the capture's"
                             % (path, "parameter" if kind == "param" else "buffer", name,
                                list(t.shape)))
        with torch.no_grad():
            target.copy_(t)
    return inputs


def export_schema(torch):
    """This PyTorch's torch.export schema version as "8.2", or None."""
    try:
        from torch._export.serde.schema import SCHEMA_VERSION
        return "%d.%d" % tuple(SCHEMA_VERSION[:2])
    except Exception:
        return None


def pt2_origin(torch, data):
    """Why a .pt2 may not load here, from the archive itself: the PyTorch that saved
    it and its export schema (recorded in the program's JSON, in every layout since
    2.1), against this PyTorch's; "" when the archive does not say or matches."""
    import io
    import json
    import zipfile
    try:
        with zipfile.ZipFile(io.BytesIO(bytes(data))) as z:
            for info in z.infolist():
                name = info.filename
                if not name.endswith(".json") or info.file_size > 256 << 20 or not (
                        "/models/" in "/" + name or name.endswith("exported_program.json")):
                    continue
                doc = json.loads(z.read(info))
                saved = doc.get("torch_version") if isinstance(doc, dict) else None
                if isinstance(saved, str):
                    break
            else:
                return ""
    except Exception:
        return ""
    sv = doc.get("schema_version")
    schema = "%s.%s" % (sv.get("major"), sv.get("minor")) if isinstance(sv, dict) else None
    mine = export_schema(torch)
    if saved == torch.__version__ and schema == mine:
        return ""
    return ("; the program was saved by PyTorch %s%s, this is PyTorch %s%s: load it with a "
            "PyTorch that reads that format (the one that saved it, or newer), or export it "
            "again with this one" % (saved, " (export schema %s)" % schema if schema else "",
                                     torch.__version__, " (schema %s)" % mine if mine else ""))


def load_model(torch, req, payload, seed):
    """The model and its example inputs. req["model"] is path/to/file.py:function
    (its text arrives in req["source"], so the file need not be visible to this
    interpreter, e.g. inside a root filesystem) or a torch.export program (.pt2,
    its bytes the payload), whose recorded example inputs are used."""
    spec = req["model"]
    want = req.get("file_sha256")
    if want is not None:  # gpuvet read and checked these bytes: run nothing else
        got = hashlib.sha256(bytes(payload) if spec.endswith(".pt2")
                             else req["source"].encode("utf-8")).hexdigest()
        if got != want:
            raise ModelError("%s: the model's bytes here do not have the sha256 gpuvet checked "
                             "(%s): not run" % (spec, want))
    torch.manual_seed(seed)
    if spec.endswith(".pt2"):
        export = getattr(torch, "export", None)
        if export is None or not hasattr(export, "load"):
            raise ModelError("%s: torch %s cannot load torch.export programs (added in 2.1)"
                             % (spec, torch.__version__))
        import io
        try:
            ep = export.load(io.BytesIO(bytes(payload)))
        except Exception as e:
            raise ModelError("%s: torch.export.load raised %s%s" % (spec, err_text(e),
                                                                  pt2_origin(torch, payload)))
        ex = getattr(ep, "example_inputs", None)
        if not ex:
            raise ModelError("%s: the exported program carries no example inputs" % spec)
        args, kwargs = ex if isinstance(ex, tuple) and len(ex) == 2 and \
            isinstance(ex[1], dict) else (ex, {})
        return (ep.module(),) + example_call(torch, args, kwargs, spec, "") + \
            (spec, "(exported program)")
    path, sep, fn = spec.rpartition(":")
    if not sep or not path or not fn.isidentifier():
        raise ModelError("--model %s: expected path/to/file.py:function or a .pt2 program" % spec)
    # the source goes into linecache under the file's name, so that what reads a model's
    # source through inspect (torch.jit.script, tracebacks) finds it where the file
    # cannot be read (inside a root filesystem); mtime None: never checked against disk
    src = req["source"]
    linecache.cache[path] = (len(src), None, src.splitlines(True), path)
    try:
        code = compile(src, path, "exec")
        mod = {"__name__": "gpuvet_user_model", "__file__": path}
        exec(code, mod)
    except Exception as e:
        raise ModelError("%s raised %s while loading%s" % (path, err_text(e), user_frame(e, path)))
    make = mod.get(fn)
    if not callable(make):
        raise ModelError("%s has no function %s" % (path, fn))
    torch.manual_seed(seed)
    try:
        got = make()
    except Exception as e:
        raise ModelError("%s:%s() raised %s%s" % (path, fn, err_text(e), user_frame(e, path)))
    if not isinstance(got, (tuple, list)) or len(got) not in (2, 3):
        raise ModelError("%s:%s() must return (model, inputs) or (model, args, kwargs), not %s"
                         % (path, fn, type(got).__name__))
    model = got[0]
    if not callable(model):
        raise ModelError("%s:%s() returned a model that cannot be called (%s)"
                         % (path, fn, type(model).__name__))
    if len(got) == 3:
        args, kwargs = got[1], got[2]
        if not isinstance(kwargs, Mapping):
            raise ModelError("%s:%s(): the keyword arguments must be a dict, not %s"
                             % (path, fn, type(kwargs).__name__))
    elif isinstance(got[1], Mapping):
        args, kwargs = (), got[1]
    else:
        args, kwargs = got[1], {}
    if isinstance(args, torch.Tensor):
        args = (args,)
    if not isinstance(args, (tuple, list)):
        raise ModelError("%s:%s(): the inputs must be a tensor, a tuple of arguments or a dict "
                         "of keyword arguments, not %s" % (path, fn, type(args).__name__))
    return (model,) + example_call(torch, args, kwargs, path, fn) + (path, fn)


class Slot(object):
    """Where the i-th tensor of the example inputs goes in the model's call."""
    __slots__ = ("i",)

    def __init__(self, i):
        self.i = i


def example_call(torch, args, kwargs, path, fn):
    """(the tensors of the example inputs, in order; the call with a Slot for each):
    the tensors may sit in tuples, lists and dicts, among values of other kinds
    (None, numbers, strings), which are passed as they are."""
    leaves = []

    def lift(v, depth):
        if isinstance(v, torch.Tensor):
            leaves.append(v)
            return Slot(len(leaves) - 1)
        if not isinstance(v, (tuple, list, Mapping)):
            return v
        if depth > 16:
            raise ModelError("%s:%s(): the inputs are nested more than 16 deep" % (path, fn))
        n = len(leaves)
        if isinstance(v, Mapping):
            got = dict((k, lift(x, depth + 1)) for k, x in v.items())
        elif isinstance(v, tuple) and hasattr(v, "_fields"):
            got = type(v)(*[lift(x, depth + 1) for x in v])
        else:
            got = [lift(x, depth + 1) for x in v]
            got = tuple(got) if isinstance(v, tuple) else got
        return got if len(leaves) > n else v  # (one without tensors stays as it is)

    call = (tuple(lift(x, 1) for x in args),
            dict((str(k), lift(x, 1)) for k, x in kwargs.items()))
    return leaves, call


def fill(v, leaves):
    """The call (or part of it) with each Slot replaced by its tensor in leaves."""
    if isinstance(v, Slot):
        return leaves[v.i]
    t = type(v)
    if t is tuple or t is list:
        return t(fill(x, leaves) for x in v)
    if t is dict:
        return dict((k, fill(x, leaves)) for k, x in v.items())
    if isinstance(v, tuple) and hasattr(v, "_fields"):
        return t(*[fill(x, leaves) for x in v])
    return v  # (what example_call left as it was)


def call_model(model, call, leaves):
    """The model run on the example inputs (leaves: their tensors, on the device)."""
    args, kwargs = fill(call, leaves)
    return model(*args, **kwargs)


def call_json(torch, call, ids):
    """The call as JSON for the capture's header: each input tensor as {"$t": id}
    (ids: the capture's ids of the leaves), other values as op arguments are."""
    def enc(v):
        if isinstance(v, Slot):
            return {"$t": ids[v.i]}
        if isinstance(v, (tuple, list)):
            return [enc(x) for x in v]
        if isinstance(v, dict):
            return dict((str(k), enc(x)) for k, x in v.items())
        e = encode(torch, None, v, None, set())
        if isinstance(e, dict) and "$repr" in e:  # (an object's address differs run to run)
            e = {"$repr": re.sub(r" at 0x[0-9a-fA-F]+", "", e["$repr"])}
        return e
    return {"args": enc(call[0]), "kwargs": enc(call[1])}


def tuple_fields(v):
    """The field names of a named tuple or a struct sequence (torch.return_types,
    as torch.max(x, dim) returns), else ()."""
    if not isinstance(v, tuple):
        return ()
    for attr in ("_fields", "__match_args__"):
        f = getattr(type(v), attr, None)
        if isinstance(f, tuple) and all(isinstance(n, str) for n in f):
            return f
    return ()


def out_tensors(torch, out, path):
    """The model's output's tensors as [(name, tensor)], depth first: the output
    may be a tensor or tuples, lists, dicts and dataclasses of them (a dict in the
    order of its sorted keys, a dataclass, a named tuple or a struct sequence
    in the order of its fields; a name is the path to the tensor, "logits", "hidden.3", "pair.lo");
    values of other kinds among them (None, numbers) are left out. ModelError
    without any."""
    found = []

    def join(name, part):
        return "%s.%s" % (name, part) if name else str(part)

    def walk(v, name, depth):
        if isinstance(v, torch.Tensor):
            found.append((name or "output", v))
        elif depth > 16:
            return
        elif isinstance(v, (tuple, list)):
            fields = tuple_fields(v)
            for i, x in enumerate(v):
                walk(x, join(name, fields[i] if i < len(fields) else i), depth + 1)
        elif isinstance(v, Mapping):
            for k in sorted(v, key=str):
                walk(v[k], join(name, k), depth + 1)
        elif dataclasses.is_dataclass(v) and not isinstance(v, type):
            for f in dataclasses.fields(v):
                walk(getattr(v, f.name, None), join(name, f.name), depth + 1)

    walk(out, "", 0)
    if not found:
        raise ModelError("%s: the model's output holds no tensor (it may be a tensor, or "
                         "tuples, lists, dicts and dataclasses with tensors in them) but is %s"
                         % (path, type(out).__name__))
    return found


class Tensors(object):
    """Gives each tensor value a capture id, sending it to gpuvet the first time:
    a tensor object keeps its id while its version counter (bumped by every
    in-place write, also through a view) is unchanged.

    On a GPU, values wait on the device in a queue of at most `budget` bytes (the
    memory of the values it keeps alive: parameters, buffers and inputs live on
    anyway and are not counted) and are copied out together, so that the forward
    pass keeps the GPU busy instead of stopping after every op. An op about to
    write into a waiting value's storage has that value copied on the device
    first (in stream order, so the copy holds what the op before produced), or,
    when the copy does not fit the budget, empties the queue; an op gpuvet cannot
    see the writes of (not an ATen op) empties it too. So what is sent is always
    the value the op produced.

    dry: a warm-up pass that queues, copies on the device and empties the queue as
    the capture will, but sends nothing (so the capture's pass finds the device
    memory it needs already in PyTorch's allocator)."""

    def __init__(self, torch, chan, roles, budget=0, sync=None, any_device=False, dry=False):
        self.torch = torch
        self.any_device = any_device # queue CPU values too (tests of the queue)
        self.sync = sync             # waits for the device (budget > 0)
        self.chan = chan
        self.roles = roles           # id(tensor) -> "param:conv1.weight", ...
        self.dry = dry
        self.known = {}              # id(tensor) -> (weakref, version, capture id)
        self.next = 0
        self.send_seconds = 0.0      # copying and sending (writing)
        self.wait_seconds = 0.0      # waiting for the device before copying
        self.device_bytes = 0
        self.budget = budget
        self.pending = []            # [tensor, meta, storage key] not yet sent, in capture
                                     # id order; meta (cid, role, dtype) until built
        self.pending_bytes = 0
        self.pending_storages = {}   # storage key -> [bytes counted against the budget,
                                     # the pending entries in that storage]
        self.flushes = 0             # times the queue was emptied before the end
        self.copies = 0              # waiting values copied on the device before a write
        self.hold_budget = 0         # bytes of copied values held in this process until
        self.held = []               # the pass is over: [(header, bytes)] in capture id order
        self.held_bytes = 0
        self.held_peak = 0
        self.hold_drains = 0         # times the held values were sent before the end

    def send(self, t, role):
        """Gives t's value the next capture id and queues or writes it. role: a
        string, or for an op's output the op's index (an int) or (index, argument)
        (formatted when written)."""
        dt = NAME_OF_DTYPE.get(t.dtype) or dtype_name(self.torch, t.dtype)
        if dt is None:
            raise RuntimeError("a tensor of dtype %s, which gpuvet cannot store" % t.dtype)
        cid = self.next
        self.next += 1
        meta = (cid, role, dt)  # described when written (or before an op writes it)
        # a CPU value (a fallback inside a GPU model) joins the queue when values wait
        # in it: values reach gpuvet in capture id order
        if self.budget and (self.any_device or self.pending or t.device.type != "cpu"):
            key, n = storage_of(t)
            if id(t) in self.roles:
                n = 0  # lives on anyway
            held = self.pending_storages.get(key)
            if held is not None:
                n = 0
            elif self.pending and self.pending_bytes + n > self.budget:
                self.flush()
            if n > self.budget:
                self.write(t, meta)  # larger than the whole queue: alone, now
            else:
                entry = [t, meta, key]
                self.pending.append(entry)
                self.pending_bytes += n
                if held is None:
                    self.pending_storages[key] = [n, [entry]]
                else:
                    held[1].append(entry)
        else:
            self.write(t, meta)
        return cid

    @staticmethod
    def describe(t, meta):
        """The header of a tensor message from (cid, role, dtype): shape, strides
        and device as they are now, which is as the op produced them (an op
        about to write a waiting value makes the queue describe it first)."""
        if type(meta) is not tuple:
            return meta
        cid, role, dt = meta
        if type(role) is int:
            role = "op:%d" % role
        elif type(role) is tuple:
            role = "op:%d:%s" % role
        return {"ok": True, "kind": "tensor", "key": cid, "dtype": dt, "shape": list(t.shape),
                "device": device_name(t.device), "stride": list(t.stride()), "role": role}

    def write(self, t, meta):
        if self.dry:
            return
        t0 = time.perf_counter()
        meta = self.describe(t, meta)
        data = tensor_bytes(self.torch, t)  # a copy: later writes into t do not reach it
        if t.device.type != "cpu":
            self.device_bytes += len(data)
        if self.hold_budget:
            # sending mid-pass wakes gpuvet's reader and blocks on the socket, and
            # the ops after it start cold: the copies wait here until the pass is
            # over, or until they would pass the budget
            if self.held and self.held_bytes + len(data) > self.hold_budget:
                self.hold_drains += 1
                self.drain()
            self.held.append((meta, data))
            self.held_bytes += len(data)
            self.held_peak = max(self.held_peak, self.held_bytes)
        else:
            self.chan.send(meta, data)
        self.send_seconds += time.perf_counter() - t0

    def drain(self):
        """Sends the held values, in capture id order."""
        held, self.held, self.held_bytes = self.held, [], 0
        for meta, data in held:
            self.chan.send(meta, data)

    def flush(self, final=False):
        """Sends every waiting value (after the device has computed them); at the
        end (final), the held ones too."""
        if self.pending:
            if not final:
                self.flushes += 1
            pending, self.pending = self.pending, []
            self.pending_bytes = 0
            self.pending_storages = {}
            if self.dry:
                return
            t0 = time.perf_counter()
            self.sync()
            self.wait_seconds += time.perf_counter() - t0
            for t, meta, _ in pending:
                self.write(t, meta)
        if final and self.held:
            t0 = time.perf_counter()
            self.drain()
            self.send_seconds += time.perf_counter() - t0

    def before_writes(self, name, written):
        """Called before an op runs: a waiting value in the storage the op writes is
        copied on the device (the queue is emptied where the copies would not fit,
        or when the op is not an ATen op, whose writes are unknown)."""
        if not self.pending:
            return
        if not name.startswith("aten."):
            self.flush()
            return
        keys, hit = [], []
        for v in written:
            k = storage_key(v)
            held = self.pending_storages.get(k)
            if held is not None and k not in keys:
                keys.append(k)
                hit.extend(held[1])
        if not hit:
            return
        need = sum(p[0].numel() * p[0].element_size() for p in hit)
        if self.pending_bytes + need > self.budget:
            self.flush()
            return
        for p in hit:
            p[1] = self.describe(p[0], p[1])
            p[0] = p[0].clone()
            self.copies += 1
            k = p[2] = storage_key(p[0])
            n = p[0].numel() * p[0].element_size()
            self.pending_storages[k] = [n, [p]]  # a clone's storage is its own
            self.pending_bytes += n
        # the written storages now hold no waiting value; what they held is counted
        # until the next flush (it lives on in the tensor written anyway)
        for k in keys:
            del self.pending_storages[k]

    def remember(self, t, cid, produced=False):
        """t holds the value cid. An op's output (produced) takes its version at its
        first use: PyTorch sets the version counter of a view, and bumps that of a
        tensor written in place, only after the op has returned to gpuvet."""
        try:
            wr = weakref.ref(t)
        except TypeError:
            return
        self.known[id(t)] = (wr, None if produced else t._version, cid)

    def ref(self, t, role_hint):
        """The capture id of t's current value (sending it when new)."""
        k = self.known.get(id(t))
        if k is not None and k[0]() is t:
            if k[1] is None:
                self.known[id(t)] = (k[0], t._version, k[2])
                return k[2]
            if k[1] == t._version:
                return k[2]
        role = self.roles.get(id(t), role_hint)
        cid = self.send(t, role)
        self.remember(t, cid)
        return cid


def storage_key(t):
    """What identifies the memory a tensor lives in (views share it): where its
    storage begins, from the tensor's own pointer and offset (asking for the
    storage object costs a Python object per call, and in torch 1.x a
    deprecated wrapper)."""
    try:
        return t.data_ptr() - t.storage_offset() * t.element_size()
    except (AttributeError, RuntimeError, NotImplementedError):
        return None


def storage_of(t):
    """(storage_key, bytes of the whole storage): what queueing t keeps alive.
    A tensor that is not a view owns its storage, of its own size; only a view
    (of a storage not yet queued, see send) asks for the storage's size."""
    n = t.numel() * t.element_size()
    try:
        if t._is_view():
            s = t.untyped_storage() if hasattr(t, "untyped_storage") else t.storage()
            n = s.nbytes() if hasattr(s, "nbytes") else s.size() * t.element_size()
    except (AttributeError, RuntimeError, NotImplementedError):
        pass
    return storage_key(t), n


PLAIN_TYPES = (bool, int, str, type(None))


def encode(torch, tensors, v, role_hint, devs):
    """Arguments as JSON: tensors as {"$t": id}, dtypes, devices and other enums
    by name; tuples and lists as lists. The tensors' devices go into devs."""
    if type(v) in PLAIN_TYPES:
        return v
    if isinstance(v, torch.Tensor):
        devs.add(v.device)
        return {"$t": tensors.ref(v, role_hint)}
    if isinstance(v, (list, tuple)):
        return [x if type(x) in PLAIN_TYPES else encode(torch, tensors, x, role_hint, devs)
                for x in v]
    if v is None or isinstance(v, (bool, int, str)):
        return v
    if isinstance(v, float):
        if v != v or v in (float("inf"), float("-inf")):
            return {"$float": repr(v)}
        return v
    if isinstance(v, dict):
        return {str(k): encode(torch, tensors, x, role_hint, devs) for k, x in v.items()}
    if isinstance(v, torch.dtype):
        return {"$dtype": dtype_name(torch, v) or str(v)}
    if isinstance(v, torch.device):
        return {"$device": str(v)}
    if isinstance(v, torch.memory_format):
        return {"$memory_format": str(v).split(".")[-1]}
    if isinstance(v, torch.layout):
        return {"$layout": str(v).split(".")[-1]}
    return {"$repr": repr(v)}


SCHEMA_FACTS = {}  # func -> ((index, name) of written arguments, draws random numbers,
                  # name, UNMARKED_WRITES' entry or None)

# operators that write arguments their schema does not mark as written (Tensor(a!)):
# the batch norms update running_mean and running_var (their arguments 3 and 4) when
# their argument 5, training, is true, without bumping the tensors' version counters
# (torch 1.13 to 2.14): (index and name of the flag, the arguments written)
UNMARKED_WRITES = dict((op, (5, "training", ((3, "running_mean"), (4, "running_var"))))
                       for op in ("native_batch_norm", "cudnn_batch_norm", "miopen_batch_norm"))

# operators that draw random numbers, also those without a Generator argument in their
# schema in some torch (rand_like, dropout); any other op with one is checked too
RNG_OPS = frozenset((
    "native_dropout", "dropout", "feature_dropout", "alpha_dropout", "feature_alpha_dropout",
    "rrelu", "rrelu_with_noise", "rand", "rand_like", "randn", "randn_like", "randint",
    "randint_like", "randperm", "normal", "normal_", "bernoulli", "bernoulli_", "multinomial",
    "uniform_", "exponential_", "cauchy_", "geometric_", "log_normal_", "random_", "poisson",
    "binomial", "_standard_gamma", "_sample_dirichlet"))


def schema_facts(func):
    """(written arguments as (index, name), may draw random numbers, name, the
    arguments it writes when a flag is set: UNMARKED_WRITES' entry, less those the
    schema marks, or None) of an op."""
    f = SCHEMA_FACTS.get(func)
    if f is None:
        name = str(func)
        packet = name.split(".")[1] if "." in name else ""
        writes, rng = [], packet in RNG_OPS
        try:
            for i, a in enumerate(func._schema.arguments):
                if a.alias_info is not None and a.alias_info.is_write:
                    writes.append((i, a.name))
                if "Generator" in str(a.type):
                    rng = True
        except AttributeError:
            rng = True  # unknown: check
        unmarked = UNMARKED_WRITES.get(packet) if name.startswith("aten.") else None
        if unmarked:
            more = tuple(w for w in unmarked[2] if w[0] not in [i for i, _ in writes])
            unmarked = (unmarked[0], unmarked[1], more) if more else None
        f = SCHEMA_FACTS[func] = (tuple(writes), rng, name, unmarked)
    return f


def op_writes(facts, args, kwargs):
    """The arguments (index, name) this call of the op writes: those its schema marks,
    and its UNMARKED_WRITES where the flag is true in this call."""
    writes, unmarked = facts[0], facts[3]
    if unmarked:
        i, flag, more = unmarked
        if (args[i] if i < len(args) else kwargs.get(flag)) is True:
            return writes + more
    return writes


def mutated_args(writes, args, kwargs):
    """(name, tensor) of the arguments the op writes (Tensor(a!) in its schema)."""
    out = []
    for i, name in writes:
        v = args[i] if i < len(args) else kwargs.get(name)
        if v is not None and hasattr(v, "_version"):
            out.append((name, v))
    return out


def rng_state(torch, cuda):
    """What tells whether an op drew random numbers: the CPU generator's state, and
    the CUDA generator's offset where this torch has it (get_rng_state copies)."""
    s = [torch.default_generator.get_state()]
    if cuda:
        g = torch.cuda.default_generators[torch.cuda.current_device()]
        off = getattr(g, "get_offset", None)
        s.append(off() if off else torch.cuda.get_rng_state())
    return s


def same_rng(torch, a, b):
    for x, y in zip(a, b):
        if isinstance(x, torch.Tensor):
            if not torch.equal(x, y):
                return False
        elif x != y:
            return False
    return True


def event_calls(torch):
    """(record(event, stream), a cheap key of the current stream): the C methods
    under torch.cuda.Event.record and torch.cuda.current_stream where this torch
    has them, the Python ones otherwise."""
    base = getattr(torch._C, "_CudaEventBase", None)
    record = getattr(base, "record", None) or (lambda e, s: e.record(s))
    get = getattr(torch._C, "_cuda_getCurrentStream", None)
    dev = getattr(torch._C, "_cuda_getDevice", None) or torch.cuda.current_device
    if get is None:
        return record, lambda: torch.cuda.current_stream()
    return record, lambda: get(dev())


def compiles(torch, model):
    """Whether the model runs code compiled by Dynamo (torch.compile), asked after
    its plain forward, which compiled whatever it compiles: a frame Dynamo has
    processed, or a compiled module in it. Loading Dynamo is not enough (torch 2.x
    and torchvision import it without compiling anything); where Dynamo's counters
    cannot be read, assume it does."""
    import sys
    if "torch._dynamo" not in sys.modules:
        return False
    try:
        from torch._dynamo.utils import counters
        if counters["frames"]["total"] > 0:
            return True
    except Exception:  # another layout of Dynamo's internals
        return True
    mods = getattr(model, "modules", None)
    return any(type(m).__name__ == "OptimizedModule" for m in (mods() if mods else ()))


NATIVE = {}  # "module": the recorder in C, or None; "why": what was used and why
# the files gpuvet sent that are not Python, by name (set by gpuvet_torch_worker.main):
# "gpuvet_rec.so", where this gpuvet has the recorder in C
BLOBS = {}
SO_NAME = "gpuvet_rec.so"


def native_recorder(torch):
    """gpuvet_rec, the recorder's per-op work in C (python/native/gpuvet_rec.c, built
    against CPython's stable ABI and sent with these modules), loaded once; None where
    this gpuvet has none, this interpreter cannot load it, or the test setting
    GPUVET_TEST_CAPTURE_RECORDER=python asks for the Python (=corrupt loads half
    of it). NATIVE["why"] says which recorder runs and why."""
    if "why" in NATIVE:
        return NATIVE["module"]
    mod, why = None, "native"
    data = BLOBS.get(SO_NAME)
    test = os.environ.get("GPUVET_TEST_CAPTURE_RECORDER")  # tests: python, corrupt
    if test == "python":
        why = "python (GPUVET_TEST_CAPTURE_RECORDER=python)"
    elif not data:
        why = "python (this gpuvet was built without the recorder in C)"
    else:
        try:
            if test == "corrupt":
                data = data[:len(data) // 2]
            mod = load_extension(SO_NAME[:-3], data)
            mod.setup({"Tensor": torch.Tensor, "cpu": torch.device("cpu"), "torch": torch,
                       "NAME_OF_DTYPE": NAME_OF_DTYPE, "SCHEMA_FACTS": SCHEMA_FACTS,
                       "DEVICE_NAMES": DEVICE_NAMES, "schema_facts": schema_facts,
                       "encode": encode, "storage_of": storage_of, "dtype_name": dtype_name,
                       "device_names": device_names})
        except Exception as e:
            mod, why = None, "python (the recorder in C did not load: %s)" % err_text(e)
    NATIVE["module"], NATIVE["why"] = mod, why
    return mod


def elf_fits(data):
    """Why a shared object's bytes cannot be loaded whole (not ELF, or a segment or
    the section table past the end: mapping those would kill the process with
    SIGBUS), or None."""
    import struct
    if len(data) < 64 or data[:4] != b"\x7fELF" or data[4] != 2:
        return "not a 64-bit ELF file"
    end = "<" if data[5] == 1 else ">"
    phoff, shoff = struct.unpack_from(end + "QQ", data, 32)
    phentsize, phnum, shentsize, shnum = struct.unpack_from(end + "HHHH", data, 54)
    if phoff + phnum * phentsize > len(data) or shoff + shnum * shentsize > len(data):
        return "its headers end past its %d bytes" % len(data)
    for i in range(phnum):
        kind, _, off = struct.unpack_from(end + "IIQ", data, phoff + i * phentsize)
        filesz = struct.unpack_from(end + "Q", data, phoff + i * phentsize + 32)[0]
        if kind == 1 and off + filesz > len(data):  # PT_LOAD
            return "segment %d ends at byte %d of %d" % (i, off + filesz, len(data))
    return None


def load_extension(name, data):
    """Imports the extension module in data (a shared object's bytes) from an
    anonymous file, or where there is none from a temporary one, removed again."""
    import importlib.machinery
    import importlib.util
    import tempfile
    bad = elf_fits(data)
    if bad:
        raise ImportError("%s: %s" % (name, bad))
    fd, path, tmp = -1, None, None
    try:
        try:
            fd = os.memfd_create(name)
            path = "/proc/self/fd/%d" % fd
            if not os.path.exists(path):  # no /proc here (a root without it)
                os.close(fd)
                fd = -1
        except (AttributeError, OSError):
            fd = -1
        if fd < 0:
            tmp = tempfile.NamedTemporaryFile(prefix="gpuvet-", suffix=".so", delete=False)
            fd, path = os.dup(tmp.fileno()), tmp.name
            tmp.close()
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        loader = importlib.machinery.ExtensionFileLoader(name, path)
        spec = importlib.util.spec_from_file_location(name, path, loader=loader)
        mod = importlib.util.module_from_spec(spec)
        loader.exec_module(mod)
        return mod
    finally:
        if fd >= 0:
            os.close(fd)
        if tmp is not None:
            os.unlink(tmp.name)


def make_recorder(torch, wrap):
    """The dispatch mode class. wrap: keep torch's torch._dynamo.disable around
    __torch_dispatch__ (torch 2.x wraps every mode's unless it says otherwise;
    the wrapper costs every op a call through Dynamo's frame switching, and
    imports all of Dynamo at the first op where it is not loaded). gpuvet's mode
    compiles nothing, so it is wrapped only when the model compiles (compiles()).
    Its per-op work is done in C where gpuvet_rec loads (native_recorder), the
    same work as dispatch_py's, which does it otherwise."""
    from torch.utils._python_dispatch import TorchDispatchMode
    record, cur_stream_key = event_calls(torch)
    CPU = torch.device("cpu")
    native = native_recorder(torch)

    class Recorder(TorchDispatchMode):
        @classmethod
        def _should_skip_dynamo(cls):
            return wrap

        def __init__(self, worker, tensors, stack, events=None, timed=True):
            super().__init__()
            self.w, self.t, self.stack = worker, tensors, stack
            self.timed = timed  # GPU ops between timing events (else times_from())
            self.n = 0
            self.op_seconds = 0.0
            # where the recorded forward's time goes besides writing: "inputs", "rng"
            # and "outputs" are gpuvet's bookkeeping; "launch" the GPU ops' calls with
            # their timing events; "cpu_ops" the ops timed by the wall clock
            # (capture_model adds "waiting" and the remainder, "other")
            self.parts = {"inputs": 0.0, "rng": 0.0, "launch": 0.0, "cpu_ops": 0.0,
                          "outputs": 0.0}
            self.records = []  # sent after the forward: sending is writing
            self.events = []   # (record, start, end) of GPU ops, read after the forward
            self.pool = events if events is not None else []  # timing events to reuse
            self.rng_flagged = False
            self.stream_key, self.cur = None, None
            self.record_event = record

        def event(self):
            return self.pool.pop() if self.pool else torch.cuda.Event(enable_timing=True)

        def stream(self):
            """The current stream, for the timing events: Event.record() without one
            asks torch.cuda.current_stream(), which costs tens of microseconds a call
            in torch 2.x (a quarter of the capture's overhead per op); the C call that
            identifies the current stream costs one."""
            key = cur_stream_key()
            if key != self.stream_key:
                self.stream_key, self.cur = key, torch.cuda.current_stream()
            return self.cur

        if native is not None:
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                return native.dispatch(self, func, args, kwargs)
        else:
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                return self.dispatch_py(func, types, args, kwargs)

        def dispatch_py(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            t = self.t
            parts, clock = self.parts, time.perf_counter
            is_gpu = self.w.is_gpu
            c0 = clock()
            module = self.stack[-1] if self.stack else ""
            sent0 = t.send_seconds + t.wait_seconds
            devs = set()
            enc_args = encode(torch, t, args, "leaf", devs)
            enc_kwargs = encode(torch, t, kwargs, "leaf", devs) if kwargs else {}
            facts = schema_facts(func)
            may_rng, name = facts[1], facts[2]
            writes = op_writes(facts, args, kwargs)
            written = mutated_args(writes, args, kwargs) if writes else ()
            t.before_writes(name, [v for _, v in written])
            c1 = clock()
            parts["inputs"] += c1 - c0 - (t.send_seconds + t.wait_seconds - sent0)
            rng0 = rng_state(torch, is_gpu) if may_rng else None
            c2 = clock()
            if is_gpu and CPU not in devs:
                # device events time the op on the GPU without stopping it
                if self.timed:
                    e0, e1 = self.event(), self.event()
                    self.record_event(e0, self.stream())
                    out = func(*args, **kwargs)
                    self.record_event(e1, self.stream())
                else:
                    e0 = None
                    out = func(*args, **kwargs)
                dt = None
                c3 = clock()
                parts["launch"] += c3 - c2
            else:
                # on the CPU (also a transfer or a fallback inside a GPU model): the
                # wall clock, after the device has finished what came before
                self.w.sync()
                t0 = clock()
                out = func(*args, **kwargs)
                self.w.sync()
                c3 = clock()
                dt = c3 - t0
                self.op_seconds += dt
                parts["cpu_ops"] += c3 - c2
            if may_rng:
                used_rng = not same_rng(torch, rng0, rng_state(torch, is_gpu))
                self.rng_flagged |= used_rng
                parts["rng"] += (c2 - c1) + (clock() - c3)
            else:
                used_rng = False
            c4 = clock()
            sent0 = t.send_seconds + t.wait_seconds
            tup = isinstance(out, (tuple, list))
            outs = out if tup else (out,)
            enc_out = []
            n = self.n
            for o in outs:
                if isinstance(o, torch.Tensor):
                    devs.add(o.device)
                    cid = t.send(o, n)
                    t.remember(o, cid, produced=True)
                    enc_out.append({"$t": cid})
                else:
                    enc_out.append(encode(torch, t, o, "leaf", devs))
            mutated = []
            for arg, v in written:
                if any(v is o for o in outs):
                    continue  # in-place ops return the tensor they wrote: already sent
                cid = t.send(v, (n, arg))
                t.remember(v, cid, produced=True)
                mutated.append({"arg": arg, "$t": cid})
            rec = {"ok": True, "kind": "op", "i": n, "name": name, "module": module,
                   "args": enc_args, "kwargs": enc_kwargs,
                   "outputs": enc_out if tup else enc_out[0],
                   "tuple": tup, "devices": device_names(devs),
                   "seconds": dt}
            if dt is None and e0 is not None:
                self.events.append((rec, e0, e1))
            if mutated:
                rec["mutated"] = mutated
            if used_rng:
                rec["rng"] = True
            parts["outputs"] += clock() - c4 - (t.send_seconds + t.wait_seconds - sent0)
            self.records.append(rec)
            self.n = n + 1
            return out

        def op_times(self):
            """After the forward (and a synchronisation): each op's device time; the
            events go back to the pool."""
            for rec, e0, e1 in self.events:
                rec["seconds"] = e0.elapsed_time(e1) / 1e3
                self.op_seconds += rec["seconds"]
                self.pool.append(e0)
                self.pool.append(e1)
            self.events = []

        def times_from(self, timed):
            """An untimed pass's GPU op times from the records of a timed pass of the
            same forward (the last warm-up pass), where the two ran the same ops in
            the same modules; otherwise they stay null. Returns where they came from."""
            mine = self.records
            if len(timed) != len(mine):
                return "none: the timed warm-up pass ran %d ops, this pass %d" % (
                    len(timed), len(mine))
            for a, b in zip(mine, timed):
                if a["name"] != b["name"] or a["module"] != b["module"]:
                    return "none: op %d was %s in %s in the timed warm-up pass, %s in %s " \
                        "here" % (a["i"], b["name"], b["module"] or "the model", a["name"],
                                  a["module"] or "the model")
            for a, b in zip(mine, timed):
                if a["seconds"] is None and b["seconds"] is not None:
                    a["seconds"] = b["seconds"]
                    self.op_seconds += b["seconds"]
            return "the last warm-up pass (the same ops between CUDA events)"

    return Recorder


def opaque_modules(torch, model):
    """The paths of the TorchScript modules in the model ("" for the model itself).
    After their first calls TorchScript's graph executor may fuse their ops into
    kernels of its own, which do not pass through the dispatcher, so the capture
    cannot see them; what they compute reaches the recorded ops as values from outside
    (torch 2.x on the CPU fuses from the second call on)."""
    script = getattr(getattr(torch, "jit", None), "ScriptModule", None)
    named = getattr(model, "named_modules", None)
    if script is None or named is None:
        return []
    return [name for name, m in named() if isinstance(m, script)]


def module_hooks(model, stack):
    """Keeps the path of the module running on stack with a pre- and a post-hook on
    every module; returns their handles."""
    handles = []
    for name, m in model.named_modules():
        if name:
            handles.extend(module_hooks_one(m, name, stack))
    return handles


class Unwrap(object):
    """Undoes a forward wrapper (the handle module_paths returns for it)."""

    def __init__(self, m, own):
        self.m, self.own = m, own

    def remove(self):
        if self.own is None:
            del self.m.forward
        else:
            self.m.forward = self.own


def module_paths(model, stack, hooks):
    """Keeps the path of the module running on stack; returns handles to remove().
    Each module's forward is wrapped (an instance attribute, taken out again
    afterwards): hooks send every call of a module down Module's slow path, which
    made a captured ResNet-18 slower (docs/capture.md, "Measured"). A module
    whose forward cannot be set (a scripted one), or every module where hooks is
    true (a model Dynamo compiles, which would trace the wrapper), gets hooks."""
    named = getattr(model, "named_modules", None)
    if named is None:
        return []
    if hooks:
        return module_hooks(model, stack)
    handles = []
    marks = graph_paths(model, stack)
    if marks is not None:
        handles.append(marks)
    for name, m in named():
        if not name:
            continue
        own = m.__dict__.get("forward")  # an instance attribute of the model's own
        try:
            m.forward = forward_wrapper(m.forward, name, stack)
        except (AttributeError, TypeError, RuntimeError):
            handles.extend(module_hooks_one(m, name, stack))
            continue
        handles.append(Unwrap(m, own))
    return handles


def graph_module_path(node):
    """The path of the module a graph node of a torch.export program ran in ("fc",
    "layer1.0.conv1"), from its nn_module_stack (older versions write
    "L['self'].layer1[0]"); "" for the model itself or where the graph says nothing."""
    st = node.meta.get("nn_module_stack") if hasattr(node, "meta") else None
    if not st:
        return ""
    last = list(st.values())[-1]
    path = last[0] if isinstance(last, (tuple, list)) and last else str(last)
    path = re.sub(r"^L\['self'\]", "", str(path))
    path = re.sub(r"\[(\d+)\]", r".\1", path)
    path = re.sub(r"\['([^']*)'\]", r".\1", path)
    return path.strip(".")


class GraphMarks(object):
    """The markers graph_paths put into a graph module, taken out by remove()."""

    def __init__(self, model, nodes):
        self.model, self.nodes = model, nodes

    def remove(self):
        for n in self.nodes:
            self.model.graph.erase_node(n)
        self.model.recompile()


def graph_paths(model, stack):
    """A torch.export program's module runs one graph of ATen ops and calls none of
    its submodules, so wrapping their forwards sees nothing: before each op whose
    module (the node's nn_module_stack) is not the op before's, a marker is put into
    the graph that sets stack to that module. None for any other model."""
    graph = getattr(model, "graph", None)
    nodes = list(getattr(graph, "nodes", None) or [])
    if not nodes or not callable(getattr(model, "recompile", None)) or \
            not any(getattr(n, "meta", {}).get("nn_module_stack") for n in nodes):
        return None

    def gpuvet_module(path):
        stack[:] = [path] if path else []

    marks, last = [], None
    for n in nodes:
        if n.op not in ("call_function", "call_method", "call_module"):
            continue
        path = graph_module_path(n)
        if path != last:
            with graph.inserting_before(n):
                marks.append(graph.call_function(gpuvet_module, (path,)))
            last = path
    if not marks:
        return None
    model.recompile()
    return GraphMarks(model, marks)


def forward_wrapper(forward, name, stack):
    def wrapped(*args, **kwargs):
        depth = len(stack)
        stack.append(name)
        try:
            return forward(*args, **kwargs)
        finally:
            del stack[depth:]
    return wrapped


def module_hooks_one(m, name, stack):
    def pre(mod, inp):
        stack.append(name)

    def post(mod, inp, out):
        if stack and stack[-1] == name:
            stack.pop()

    try:
        return [m.register_forward_pre_hook(pre), m.register_forward_hook(post)]
    except RuntimeError:  # a ScriptModule takes no hooks: its ops count to the module around
        return []


def proc_rss_peak():
    """The peak resident memory of this process (VmHWM), in bytes; -1 if unknown."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError):
        pass
    return -1


def reset_rss_peak():
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def model_roles(model, inputs):
    """id(tensor) -> its role ("param:conv1.weight", "buffer:...", "input:0") for the
    tensors that live through the forward anyway."""
    roles = {}
    named_params = getattr(model, "named_parameters", None)
    for name, p in (named_params() if named_params else []):
        roles[id(p)] = "param:" + name
    named_bufs = getattr(model, "named_buffers", None)
    for name, b in (named_bufs() if named_bufs else []):
        roles[id(b)] = "buffer:" + name
    for i, x in enumerate(inputs):
        roles[id(x)] = "input:%d" % i
    return roles


BUFFER_COPY_LIMIT = 1 << 30  # bytes of buffers copied to tell whether forward changes them


def buffer_copies(torch, model):
    """[(name, buffer, copy)] of the model's buffers, to tell whether its forward
    changes them (running statistics in training mode, counters, caches); [] where
    it has none or they pass BUFFER_COPY_LIMIT (then not checked)."""
    named = getattr(model, "named_buffers", None)
    bufs = [(n, b) for n, b in (named() if named else []) if isinstance(b, torch.Tensor)]
    if sum(b.numel() * b.element_size() for _, b in bufs) > BUFFER_COPY_LIMIT:
        return []
    with torch.no_grad():
        return [(n, b, b.detach().clone()) for n, b in bufs]


def same_values(torch, a, b):
    """a and b hold the same values (NaN where the other has NaN)."""
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if a.is_floating_point() or a.is_complex():
        return torch.equal(a.isnan(), b.isnan()) and torch.equal(a.nan_to_num(), b.nan_to_num())
    return torch.equal(a, b)


def changed_buffers(torch, copies):
    """The copies (buffer_copies) of the buffers whose values are no longer the copy's."""
    with torch.no_grad():
        return [c for c in copies if not same_values(torch, c[1], c[2])]


def put_back(torch, copies):
    """Every buffer in copies back to the values copied (before a pass: each pass of
    a model whose forward changes its buffers starts from the same state)."""
    if copies:
        with torch.no_grad():
            for _, b, c in copies:
                b.copy_(c)


def gpu_segments(torch, worker):
    """(device memory segments PyTorch's allocator has taken from the driver so far,
    its retries after a failed allocation); None off the GPU."""
    if not worker.is_gpu:
        return None
    st = torch.cuda.memory_stats(worker.dev)
    return int(st.get("segment.all.allocated", 0)), int(st.get("num_alloc_retries", 0))


# the device queue: it starts at QUEUE_START of the plain forward's peak GPU memory (it
# keeps at most that much alive, so the capture's peak stays within 1.4x), and grows in
# the warm-up while the measured peak of a pass stays within PEAK_LIMIT of the plain one
QUEUE_START = 0.4
# the values copied out of the device queue wait in the worker until the pass is over,
# at most HOLD_SHARE of the plain forward's peak resident memory (the capture's target
# is 1.5x of it); beyond that they are sent mid-pass
HOLD_SHARE = 0.35
PEAK_LIMIT = 1.4


def next_budget(plain_peak, tried):
    """The queue size for the next warm-up pass, from the passes so far: tried is
    [(budget, the pass's GPU peak, times the queue was emptied)], in order. The
    queue grows by the headroom the last pass left under PEAK_LIMIT (a queue keeps
    at most its size alive); a pass that went over is followed by the size the
    last two passes point at (the peak grows with the queue about linearly), and
    if that went over too, by the largest size that stayed within. A pass that
    never emptied the queue needs no larger one. Returns the last budget when it
    should stay."""
    limit = PEAK_LIMIT * plain_peak
    budget, peak, flushes = tried[-1]
    fits = [b for b, p, _ in tried if p <= limit]
    if peak > limit:
        if len(tried) >= 2 and tried[-2][1] <= limit and tried[-2][1] < peak:
            b0, p0, _ = tried[-2]
            guess = int(b0 + (budget - b0) * (limit - p0) / (peak - p0))
            if guess > b0 and guess not in [b for b, _, _ in tried]:
                return guess
        return max(fits) if fits else max(int(QUEUE_START * plain_peak) // 2, 1)
    if not flushes or budget != max(b for b, _, _ in tried):
        return budget  # everything fitted, or already back at the best one
    grow = int(limit - peak)
    if grow < 0.05 * plain_peak:
        return budget  # too little headroom to matter
    return budget + grow


def warm_up(torch, worker, model, call, inputs, roles, budget, any_device, stack, Recorder,
            pool, plain_peak=None, reset=None):
    """Runs the forward recorded as the capture will (queue, copies on the device),
    with timing events and sending nothing, until a pass at the queue size the
    capture will use takes no new device memory from the driver (1 pass off the
    GPU). With plain_peak (the plain forward's peak GPU memory), the queue's size
    is adapted first (next_budget), each pass's peak measured. Returns {"passes":
    n, "segments": new, "records": the last pass's op records, with their device
    times, "budget": the queue size, "sizes": [(size, peak, flushes)] of the
    passes, "gpu_peak": the highest peak of a pass}. reset() runs before each pass."""
    passes, new, tried, top = 0, 0, [], 0
    most = (3 + (4 if plain_peak else 0)) if worker.is_gpu else 1
    while passes < most:
        seg0 = gpu_segments(torch, worker)
        if seg0 is not None:
            torch.cuda.reset_peak_memory_stats(worker.dev)
        if reset is not None:
            reset()  # (the buffers a forward changes, as before the first pass)
        dry = Tensors(torch, None, roles, budget, worker.sync, any_device=any_device, dry=True)
        for i, x in enumerate(inputs):
            dry.ref(x, "input:%d" % i)
        rec = Recorder(worker, dry, stack, pool)
        args, kwargs = fill(call, inputs)
        with torch.no_grad():
            with rec:
                model(*args, **kwargs)
        dry.flush(final=True)
        worker.sync()
        if worker.is_gpu:
            rec.op_times()
        records = rec.records
        del stack[:]
        passes += 1
        if seg0 is None:
            break
        peak = int(torch.cuda.max_memory_allocated(worker.dev))
        top = max(top, peak)
        grown = gpu_segments(torch, worker)[0] - seg0[0]
        new += grown
        if plain_peak:
            tried.append((budget, peak, dry.flushes))
            nb = next_budget(plain_peak, tried)
            if nb != budget and passes < most:  # (the capture runs at a size a pass ran)
                budget = nb
                continue
        if not grown:
            break
    return {"passes": passes, "segments": new, "records": records, "budget": budget,
            "sizes": tried, "gpu_peak": top}


def capture_model(worker, req, payload):
    """Runs the model once plainly (timed), then once recorded, streaming tensors
    and ops to gpuvet; ends with {"kind": "done"} or {"ok": false}."""
    torch = worker.torch
    chan = worker.chan
    seed = int(req.get("seed") or 0)
    try:
        program = int(req.get("program_nbytes") or 0)
        model, inputs, call, path, fn = load_model(torch, req, payload[:program], seed)
        if req.get("load"):
            inputs = load_state(torch, model, inputs, req["load"], payload[program:], path)
        dev = worker.dev
        if hasattr(model, "eval"):
            try:
                model.eval()
            except NotImplementedError:
                pass  # a torch.export program's module: its mode was set when it was exported
        if hasattr(model, "to"):
            model.to(dev)
        inputs = [x.to(dev) for x in inputs]
        # a forward that changes the model's buffers (running statistics, counters)
        # would start every pass from another state: those buffers are put back
        # before each pass (reset), so every pass, the recorded one too, starts where
        # the first did
        copies = buffer_copies(torch, model)
        # the plain forward: a warm-up, then the best of ten (at least three, within
        # about a second: a launch-bound forward's time varies from pass to pass, and
        # the fastest is the baseline), and its memory
        plain = []
        with torch.no_grad():
            out = call_model(model, call, inputs)
            out_tensors(torch, out, path)
            worker.sync()
            copies = changed_buffers(torch, copies)
            updated = [c[0] for c in copies]

            def reset():
                put_back(torch, copies)
            reset()
            while len(plain) < 3 or (len(plain) < 10 and sum(plain) < 1.0):
                reset()
                t0 = time.perf_counter()
                call_model(model, call, inputs)
                worker.sync()
                plain.append(time.perf_counter() - t0)
        mem = {}
        if worker.is_gpu:
            torch.cuda.reset_peak_memory_stats(dev)
            reset()
            with torch.no_grad():
                call_model(model, call, inputs)
            worker.sync()
            mem["plain_gpu_peak_bytes"] = int(torch.cuda.max_memory_allocated(dev))
            torch.cuda.reset_peak_memory_stats(dev)
        base_rss = proc_rss_peak()
        if reset_rss_peak():
            reset()
            with torch.no_grad():
                call_model(model, call, inputs)
            mem["plain_rss_peak_bytes"] = proc_rss_peak()
            reset_rss_peak()
        roles = model_roles(model, inputs)
        # on a GPU, values wait on the device in a queue that starts at 0.4x the plain
        # forward's peak and grows in the warm-up while the capture's peak stays
        # within 1.4x of it (next_budget)
        budget, adapt = 0, None
        if worker.is_gpu:
            adapt = mem["plain_gpu_peak_bytes"]
            budget = max(int(QUEUE_START * adapt), 1)
        forced = os.environ.get("GPUVET_TEST_CAPTURE_QUEUE")  # tests: a queue on any device
        if forced:
            budget, adapt = int(forced), None
        stack = []
        compiled = compiles(torch, model)
        handles = module_paths(model, stack, compiled)
        try:
            Recorder = make_recorder(torch, compiled)
            # warm-up passes, recorded the same way but sending nothing: first uses
            # (imports, handles, timing events) and the device memory the queue holds
            # (so PyTorch's allocator has it cached) come before the timed pass
            pool = []
            w0 = time.perf_counter()
            warm = warm_up(torch, worker, model, call, inputs, roles, budget, bool(forced),
                           stack, Recorder, pool, adapt, reset)
            warm_seconds = time.perf_counter() - w0
            budget = warm["budget"]
            if worker.is_gpu:
                torch.cuda.reset_peak_memory_stats(dev)
            tensors = Tensors(torch, chan, roles, budget, worker.sync, any_device=bool(forced))
            hold = os.environ.get("GPUVET_TEST_CAPTURE_HOLD")  # tests: bytes held, 0 none
            tensors.hold_budget = int(hold) if hold else int(
                HOLD_SHARE * (mem.get("plain_rss_peak_bytes") or base_rss))
            in_ids = [tensors.ref(x, "input:%d" % i) for i, x in enumerate(inputs)]
            # the recorded pass has no timing events (two per op were a third of its
            # cost): its GPU ops take their device times from the last warm-up pass
            rec = Recorder(worker, tensors, stack, pool, timed=not worker.is_gpu)
            reset()
            torch.manual_seed(seed)
            rng_before = rng_state(torch, worker.is_gpu)
            seg0 = gpu_segments(torch, worker)
            # the records the pass keeps (a dict per op, per tensor) would set off
            # Python's cyclic collector again and again, scanning all of them each
            # time: it waits until the pass is over (tensors are freed as usual)
            args, kwargs = fill(call, inputs)
            gc_was = gc.isenabled()
            gc.disable()
            t0 = time.perf_counter()
            try:
                with torch.no_grad():
                    with rec:
                        out = model(*args, **kwargs)
            finally:
                if gc_was:
                    gc.enable()
            tensors.flush(final=True)
            worker.sync()
            total = time.perf_counter() - t0
            seg1 = gpu_segments(torch, worker)
        finally:
            for h in handles:
                h.remove()
        if seg0 is not None:
            mem["warmup_new_gpu_segments"] = warm["segments"]
            mem["capture_new_gpu_segments"] = seg1[0] - seg0[0]
            mem["capture_alloc_retries"] = seg1[1] - seg0[1]
        parts = rec.parts
        parts["waiting"] = tensors.wait_seconds
        parts["other"] = max(total - tensors.send_seconds - sum(parts.values()), 0.0)
        rec.op_times()
        times_from = rec.times_from(warm["records"]) if worker.is_gpu else "this pass"
        in_forward_writing = tensors.send_seconds
        w0 = time.perf_counter()
        for r in rec.records:
            chan.send(r)
        records_seconds = time.perf_counter() - w0
        rng_unattributed = not rec.rng_flagged and not same_rng(torch, rng_before,
                                                                rng_state(torch, worker.is_gpu))
        outs = out_tensors(torch, out, path)
        out_ids = [tensors.ref(o, "output:%d" % i) for i, (_, o) in enumerate(outs)]
        tensors.flush(final=True)
        if worker.is_gpu:
            peak = int(torch.cuda.max_memory_allocated(dev))
            mem["capture_gpu_peak_bytes"] = max(peak, warm["gpu_peak"])
            mem["recorded_pass_gpu_peak_bytes"] = peak
            mem["warmup_queue_sizes"] = [{"queue_bytes": b, "gpu_peak_bytes": p,
                                          "queue_flushes": f} for b, p, f in warm["sizes"]]
        mem["capture_rss_peak_bytes"] = proc_rss_peak()
        mem["rss_before_bytes"] = base_rss
        chan.send({"ok": True, "kind": "done", "inputs": [{"$t": i} for i in in_ids],
                   "outputs": [{"$t": i, "name": n} for i, (n, _) in zip(out_ids, outs)],
                   "call": call_json(torch, call, in_ids), "model_file": path,
                   "model_function": fn, "seed": seed, "ops": rec.n,
                   "timing": {"plain_forward_seconds": min(plain),
                              "plain_forward_median_seconds": sorted(plain)[len(plain) // 2],
                              "capture_seconds": total,
                              "capture_writing_seconds": in_forward_writing,
                              "capture_waiting_seconds": tensors.wait_seconds,
                              "records_writing_seconds": records_seconds,
                              "capture_ops_seconds": rec.op_seconds,
                              "op_times_from": times_from,
                              "recorder": NATIVE.get("why"),
                              "capture_overhead_seconds": parts,
                              "warmup_seconds": warm_seconds, "warmup_passes": warm["passes"],
                              "queue_bytes": budget, "queue_flushes": tensors.flushes,
                              "queue_device_copies": tensors.copies,
                              "hold_bytes": tensors.hold_budget,
                              "held_peak_bytes": tensors.held_peak,
                              "hold_drains": tensors.hold_drains,
                              "device_to_host_bytes": tensors.device_bytes},
                   "memory": mem, "rng_unattributed": rng_unattributed,
                   "opaque_modules": opaque_modules(torch, model),
                   "buffers_updated": updated,
                   "describe": worker.describe()})
    except ModelError as e:
        chan.send({"ok": False, "status": "model-error", "error": str(e)})
    except Exception as e:
        chan.send({"ok": False, "status": "model-error",
                   "error": "the model raised %s%s" % (err_text(e), where(e))})


# ---------------------------------------------------------------- replay


def decode(torch, v, tensors, device):
    if isinstance(v, list):
        return [decode(torch, x, tensors, device) for x in v]
    if isinstance(v, dict):
        if "$t" in v:
            return tensors[v["$t"]]
        if "$dtype" in v:
            return torch_enum(torch, "dtype", v["$dtype"])
        if "$device" in v:
            return torch.device(device if v["$device"] != "cpu" else "cpu")
        if "$memory_format" in v:
            return torch_enum(torch, "memory_format", v["$memory_format"])
        if "$layout" in v:
            return torch_enum(torch, "layout", v["$layout"])
        if "$float" in v:
            return float(v["$float"])
        if "$repr" in v:
            raise Unsupported("an argument gpuvet could not record: %s" % v["$repr"])
        return {k: decode(torch, x, tensors, device) for k, x in v.items()}
    return v


# An op's name in a capture: NAMESPACE.NAME.OVERLOAD (str() of an OpOverload), each part
# an identifier, no part __x__ but the NAME of ATen's operator methods. The same grammar
# as gv_cap_op_name_ok in src/capture/gvcap.c.
OP_PART = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}\Z")
DUNDER_OPS = frozenset(("__and__", "__or__", "__xor__", "__lshift__", "__rshift__", "__iand__",
                        "__ior__", "__ixor__", "__ilshift__", "__irshift__"))


def op_name_ok(name):
    parts = name.split(".") if isinstance(name, str) else ()
    if len(parts) != 3 or not all(OP_PART.match(p) for p in parts):
        return False
    return all(not (len(p) >= 4 and p.startswith("__") and p.endswith("__")) or
               (k == 1 and p in DUNDER_OPS) for k, p in enumerate(parts))


def dispatcher_op(torch, func):
    """Whether the OpOverload func is an operator of PyTorch's dispatcher (what a
    TorchDispatchMode records), not one of TorchScript's own (aten::save)."""
    has = getattr(torch._C, "_dispatch_has_kernel", None)
    try:
        s = func._schema
        return bool(has and has(s.name + ("." + s.overload_name if s.overload_name else "")))
    except Exception:
        return False


def file_argument(func):
    """The name of a string argument of func that names a file (aten::from_file's
    filename), or None."""
    try:
        for a in func._schema.arguments:
            if str(a.type) in ("str", "Optional[str]", "str?") and \
                    ("file" in a.name or "path" in a.name):
                return a.name
    except Exception:
        return "(schema unreadable)"
    return None


def op_of(torch, name):
    """torch.ops.aten.convolution.default from "aten.convolution.default": the only way
    a capture's op name becomes something to call. Resolved part by part (the
    namespace, its packet, the overload), each part checked first (op_name_ok) and
    each step's result checked for its type; the result must be an OpOverload of the
    dispatcher that takes no file name. Anything else is "not an operator"."""
    ops = torch._ops
    if not op_name_ok(name):
        raise Unsupported("not an operator: not replayed (%s is not NAMESPACE.NAME.OVERLOAD)"
                          % quoted(name))
    ns, op, overload = name.split(".")
    try:
        space = getattr(torch.ops, ns)
        packet = getattr(space, op) if isinstance(space, ops._OpNamespace) else None
        func = getattr(packet, overload) if isinstance(packet, ops.OpOverloadPacket) else None
    except Exception:  # no such operator here (older torch raise other than AttributeError)
        raise Unsupported("this torch has no operator %s" % name)
    if func is None:
        raise Unsupported("this torch has no operator %s" % name)
    if not isinstance(func, ops.OpOverload) or not dispatcher_op(torch, func):
        raise Unsupported("not an operator: not replayed (%s is not an operator of PyTorch's "
                          "dispatcher here)" % name)
    arg = file_argument(func)
    if arg:
        raise Unsupported("not replayed: %s takes a file name (%s), which a capture may not "
                          "give" % (name, arg))
    return func


def to_f64(torch, v):
    if isinstance(v, torch.Tensor):
        v = v.detach().cpu()
        return v.double() if v.is_floating_point() else v.clone()
    if isinstance(v, list):
        return [to_f64(torch, x) for x in v]
    if isinstance(v, tuple):
        return tuple(to_f64(torch, x) for x in v)
    if isinstance(v, dict):
        return {k: to_f64(torch, x) for k, x in v.items()}
    if isinstance(v, torch.device):
        return torch.device("cpu")
    return v


def flat_outputs(torch, out):
    outs = out if isinstance(out, (tuple, list)) else [out]
    return [o for o in outs if isinstance(o, torch.Tensor)]


def load_tensors(worker, req, payload):
    """The request's tensors (A's recorded values), on the device they were on."""
    torch = worker.torch
    tensors, off = {}, 0
    for spec in req["tensors"]:
        n = int(spec["nbytes"])
        dt = torch_enum(torch, "dtype", spec["dtype"])
        data = payload[off:off + n]
        off += n
        t = torch.frombuffer(data, dtype=dt) if n else torch.zeros(0, dtype=dt)
        t = t.reshape(spec["shape"])
        want = spec.get("stride")
        if want and list(t.stride()) != list(want) and t.numel() > 0:
            s = torch.empty_strided(spec["shape"], want, dtype=dt)
            s.copy_(t)
            t = s
        dev = "cpu" if spec.get("device", "cpu") == "cpu" else worker.dev
        tensors[spec["key"]] = t.to(dev)
    return tensors


def run_chained(torch, func, op, live, device):
    """One op of a span, on values computed earlier in the span: the arguments it
    writes are copied first (so earlier values stay as they were), and its results
    are filed under the ids A recorded for them."""
    args = decode(torch, op["args"], live, device)
    kwargs = decode(torch, op.get("kwargs") or {}, live, device)
    writes = op_writes(schema_facts(func), args, kwargs)
    for i, name in writes:
        if i < len(args) and isinstance(args[i], torch.Tensor):
            args[i] = args[i].clone()
        elif isinstance(kwargs.get(name), torch.Tensor):
            kwargs[name] = kwargs[name].clone()
    out = func(*args, **kwargs)
    rec = op["outputs"]
    outs = out if isinstance(out, (tuple, list)) else [out]
    recs = rec if isinstance(rec, list) else [rec]
    for o, r in zip(outs, recs):
        if isinstance(o, torch.Tensor) and isinstance(r, dict) and "$t" in r:
            live[r["$t"]] = o
    for m in op.get("mutated") or []:
        i = [k for k, (pos, name) in enumerate(writes) if name == m["arg"]]
        pos, name = writes[i[0]] if i else (None, m["arg"])
        v = args[pos] if pos is not None and pos < len(args) else kwargs.get(name)
        if isinstance(v, torch.Tensor):
            live[m["$t"]] = v
    return out


def replay_reply(torch, outs, ref_outs, note, ref_note):
    """A replay's reply: each output's bytes here, then the referee's (when there is one)."""
    specs, blobs = [], []
    for k, o in enumerate(outs):
        b = tensor_bytes(torch, o)
        spec = {"dtype": dtype_name(torch, o.dtype), "shape": list(o.shape), "nbytes": len(b)}
        blobs.append(b)
        if ref_outs is not None:
            rb = tensor_bytes(torch, ref_outs[k])
            spec["ref"] = {"dtype": dtype_name(torch, ref_outs[k].dtype), "nbytes": len(rb)}
            blobs.append(rb)
        specs.append(spec)
    return ({"ok": True, "outputs": specs, "impl": ", ".join(note), "referee": ref_note},
            b"".join(bytes(b) for b in blobs))


def replay_span(worker, req, payload):
    """A stretch of A's ops run one after another on this device, each fed what
    the ones before it computed here (A's recorded values only for what comes
    from outside the stretch), and the same chain in float64 on the CPU; replies
    with the values of the ids asked for (B's, then the referee's, per id)."""
    torch = worker.torch
    note = []
    try:
        ext = load_tensors(worker, req, payload)
        funcs = [op_of(torch, op["name"]) for op in req["ops"]]
        live = {k: t.clone() for k, t in ext.items()}
        ref = {k: to_f64(torch, t) for k, t in ext.items()}

        def chain():
            for func, op in zip(funcs, req["ops"]):
                run_chained(torch, func, op, live, worker.dev)
            return [live[k] for k in req["want"]]

        with torch.no_grad():
            outs = worker.run_case({"op": "replay", "id": "span"}, note, chain)
        ref_note = ""
        try:
            with torch.no_grad():
                for func, op in zip(funcs, req["ops"]):
                    run_chained(torch, func, op, ref, torch.device("cpu"))
            ref_outs = [ref[k] for k in req["want"]]
        except Exception as e:
            ref_outs, ref_note = None, "no float64 referee: " + err_text(e)
        return replay_reply(torch, outs, ref_outs, note, ref_note)
    except Unsupported as e:
        return {"ok": False, "status": "unsupported", "error": str(e)}, b""
    except KeyError as e:
        return {"ok": False, "status": "unsupported",
                "error": "the stretch reads tensor %s, which it was not given" % e}, b""
    except Exception as e:
        return worker.failure(e), b""


def replay_op(worker, req, payload):
    """One recorded op on this device, and in float64 on the CPU; replies with
    both outputs' bytes (B's first, then the referee's, per output)."""
    torch = worker.torch
    note = []
    try:
        tensors = load_tensors(worker, req, payload)
        func = op_of(torch, req["name"])
        # every tensor its own copy: an in-place op must not write into another's input
        tensors = {k: t.clone() for k, t in tensors.items()}
        args = decode(torch, req["args"], tensors, worker.dev)
        kwargs = decode(torch, req.get("kwargs") or {}, tensors, worker.dev)
        with torch.no_grad():
            out = worker.run_case({"op": "replay", "id": req["name"]}, note,
                                  lambda: func(*args, **kwargs))
        outs = flat_outputs(torch, out)
        ref_outs, ref_note = None, ""
        try:
            with torch.no_grad():
                r = func(*to_f64(torch, args), **to_f64(torch, kwargs))
            ref_outs = flat_outputs(torch, r)
            if len(ref_outs) != len(outs):
                ref_outs, ref_note = None, "the float64 call gave another number of outputs"
        except Exception as e:
            ref_outs, ref_note = None, "no float64 referee: " + err_text(e)
        return replay_reply(torch, outs, ref_outs, note, ref_note)
    except Unsupported as e:
        return {"ok": False, "status": "unsupported", "error": str(e)}, b""
    except Exception as e:
        return worker.failure(e), b""
