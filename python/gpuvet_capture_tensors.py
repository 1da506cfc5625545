# The capture's tensors (docs/capture.md): each tensor value an op reads or writes
# gets a capture id and goes to gpuvet once (Tensors, with the device queue and the
# values held until the pass is over); op arguments as JSON (encode); the names of
# dtypes and devices; a tensor's bytes.
import time
import weakref

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
