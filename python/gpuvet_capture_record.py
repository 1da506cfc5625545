# The capture's recording (docs/capture.md): a TorchDispatchMode that sees every
# ATen op of the forward pass (make_recorder: its per-op work in Python,
# dispatch_py, or in C where _gpuvet_capture_record loads), and which module of
# the model each op ran in (module_paths).
import re
import time

from gpuvet_capture_native import native_recorder
from gpuvet_capture_schema import mutated_args, op_writes, rng_state, same_rng, schema_facts
from gpuvet_capture_tensors import device_names, encode

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


class Recording(object):
    """The recording dispatch mode's work, Python half (make_recorder makes the
    mode's class from this and TorchDispatchMode, which torch provides)."""

    def start(self, calls, worker, tensors, stack, events, timed):
        """What __init__ sets (calls: torch's objects the ops need, from make_recorder)."""
        self.torch, self.cpu, self.cur_stream_key, self.record_event = calls
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

    def event(self):
        return self.pool.pop() if self.pool else self.torch.cuda.Event(enable_timing=True)

    def stream(self):
        """The current stream, for the timing events: Event.record() without one
        asks torch.cuda.current_stream(), which costs tens of microseconds a call
        in torch 2.x (a quarter of the capture's overhead per op); the C call that
        identifies the current stream costs one."""
        key = self.cur_stream_key()
        if key != self.stream_key:
            self.stream_key, self.cur = key, self.torch.cuda.current_stream()
        return self.cur

    def dispatch_py(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        torch, CPU = self.torch, self.cpu
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


def make_recorder(torch, wrap):
    """The dispatch mode class. wrap: keep torch's torch._dynamo.disable around
    __torch_dispatch__ (torch 2.x wraps every mode's unless it says otherwise;
    the wrapper costs every op a call through Dynamo's frame switching, and
    imports all of Dynamo at the first op where it is not loaded). gpuvet's mode
    compiles nothing, so it is wrapped only when the model compiles (compiles()).
    Its per-op work is done in C where _gpuvet_capture_record loads (native_recorder), the
    same work as dispatch_py's, which does it otherwise."""
    from torch.utils._python_dispatch import TorchDispatchMode
    record, cur_stream_key = event_calls(torch)
    CPU = torch.device("cpu")
    native = native_recorder(torch)

    class Recorder(Recording, TorchDispatchMode):
        @classmethod
        def _should_skip_dynamo(cls):
            return wrap

        def __init__(self, worker, tensors, stack, events=None, timed=True):
            super().__init__()
            self.start((torch, CPU, cur_stream_key, record), worker, tensors, stack, events,
                       timed)

        if native is not None:
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                return native.dispatch(self, func, args, kwargs)
        else:
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                return self.dispatch_py(func, types, args, kwargs)

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
