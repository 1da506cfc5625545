# Where the time of gpuvet's recorded forward goes, without gpuvet's C side: runs
# the worker's capture_model (python/gpuvet_capture.py, the real code) on a model
# with a channel that counts and drops what it is sent, and prints the capture's
# timing and memory, the per-op overhead, the modules first imported during the
# capture, and optionally the recorded forward's cProfile and the floors any
# dispatch-mode capture stands on (--floors: the forward under an empty
# TorchDispatchMode, with module hooks or with the capture's forward wrappers, holding
# every output, with timing events, best of 20 each).
# --per-op: the recorded pass's overhead by op name (gpuvet's parts of each op, and the
# gap since the previous op returned: the model's Python, module hooks, dispatch).
# --cprofile-pass N: the N dearest functions of the recorded pass alone.
# --emptying N: N rounds, in turns, of the plain forward and of recorded passes whose queue
#   (the capture's size) is emptied with copies, emptied with the wait only, or never.
# usage: PYTHON tests/bench/profile_capture.py MODEL.py:FUNCTION [DEVICE] [--cprofile N]
#        [--cprofile-pass N] [--floors] [--per-op] [--emptying N]
#   e.g. GV_MODEL_BATCH=1 /usr/bin/python3 tests/bench/profile_capture.py \
#            tests/cli/models/resnet18_224.py:make cpu --cprofile 25
# GPUVET_TEST_CAPTURE_QUEUE=BYTES queues values on any device (as the GPU does).
# GPUVET_NATIVE_SO=BUILD/_gpuvet_capture_record.abi3.so: the recorder in C, as gpuvet sends
# it to the worker (without it the Python recorder runs; GPUVET_TEST_CAPTURE_RECORDER=python
# forces it).
import importlib
import json
import os
import sys
import time

SRC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python")


class Chan(object):
    def __init__(self):
        self.msgs, self.bytes, self.done = 0, 0, None

    def send(self, hdr, payload=b""):
        self.msgs += 1
        self.bytes += len(payload)
        if hdr.get("kind") == "done" or hdr.get("ok") is False:
            self.done = hdr


class Names(object):
    """The worker's modules seen as one namespace: g[name] is what the module that
    defines name holds; g[name] = v sets it in every module that holds it (those that
    imported it too), so that the worker's own calls find v."""

    def __init__(self, mods):
        self.mods = mods

    def __getitem__(self, name):
        for m in self.mods:
            if name in m.__dict__:
                return m.__dict__[name]
        raise KeyError(name)

    def __setitem__(self, name, v):
        for m in self.mods:
            if name in m.__dict__:
                setattr(m, name, v)


def load_worker(so=None):
    """The worker's modules (python/*.py), imported anew, so that each call has a copy
    of its own, as one namespace (Names); so: the recorder in C
    (BUILD/_gpuvet_capture_record.abi3.so), which gpuvet sends with them, or None for
    none."""
    if SRC not in sys.path:
        sys.path.insert(0, SRC)
    for name in [n for n in sys.modules if n.startswith("gpuvet_")]:
        del sys.modules[name]
    importlib.import_module("gpuvet_torch_worker")  # and every module it imports
    import gpuvet_capture_native
    if so:
        with open(so, "rb") as f:
            gpuvet_capture_native.BLOBS[gpuvet_capture_native.SO_NAME] = f.read()
    return Names([m for n, m in sys.modules.items() if n.startswith("gpuvet_")])


def on_device(g, w, req):
    """The model (in evaluation mode) and its inputs on the worker's device, loaded as
    the capture loads them."""
    model, inputs, _, _, _ = g["load_model"](w.torch, req, bytearray(), 0)  # (positional inputs)
    model.eval()
    model.to(w.dev)
    return model, [x.to(w.dev) for x in inputs]


def floors(g, w, req):
    """The forward's best time plainly and under the cheapest recorders possible."""
    torch = w.torch
    from torch.utils._python_dispatch import TorchDispatchMode
    model, inputs = on_device(g, w, req)
    wrap = g["compiles"](torch, model)  # as the capture decides
    gpu = w.is_gpu

    class Empty(TorchDispatchMode):
        @classmethod
        def _should_skip_dynamo(cls):
            return wrap

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            return func(*args, **(kwargs or {}))

    class Wrapped(TorchDispatchMode):  # what torch 2.x does to a mode by default
        @classmethod
        def _should_skip_dynamo(cls):
            return True

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            return func(*args, **(kwargs or {}))

    class Timed(Empty):
        pool = [torch.cuda.Event(enable_timing=True) for _ in range(4096)] if gpu else []

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            e0, e1 = self.pool.pop(), self.pool.pop()
            e0.record()
            out = func(*args, **(kwargs or {}))
            e1.record()
            self.pool.insert(0, e1)
            self.pool.insert(0, e0)
            return out

    class Keep(Empty):  # holds every output to the end of the pass, as the queue does
        def __init__(self):
            super().__init__()
            self.kept = []

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            out = func(*args, **(kwargs or {}))
            self.kept.append(out)
            return out

    class Busy(Empty):  # Python work between ops, the op's own call timed alone
        work = 0
        every = 1  # the work of `every` ops done together, at every every-th op
        spent = [0.0, 0]

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            if self.spent[1] % self.every == 0:
                for _ in range(self.every):
                    d = {}
                    for i in range(self.work):
                        d[i] = (i, str(i))
            t0 = time.perf_counter()
            out = func(*args, **(kwargs or {}))
            self.spent[0] += time.perf_counter() - t0
            self.spent[1] += 1
            return out

    class Nothing(object):
        def __enter__(self):
            return self

        def __exit__(self, *a):
            return False

    stack = []

    def best(mode, hooks):
        handles = []
        if hooks:  # True: hooks on every module; "wrap": as the capture keeps the path
            handles = g["module_paths"](model, stack, hooks is True)
        times = []
        try:
            with torch.no_grad():
                for _ in range(22):
                    t0 = time.perf_counter()
                    with mode():
                        model(*inputs)
                    w.sync()
                    times.append(time.perf_counter() - t0)
        finally:
            for h in handles:
                h.remove()
        return min(times[2:])

    plain = best(Nothing, False)
    rows = [("plain", plain), ("module hooks", best(Nothing, True)),
            ("empty dispatch mode", best(Empty, False)),
            ("empty mode + hooks", best(Empty, True)),
            ("forward wrappers", best(Nothing, "wrap")),
            ("empty mode + forward wrappers", best(Empty, "wrap")),
            ("the same, in torch._dynamo.disable", best(Wrapped, True))]
    rows.append(("mode + hooks, outputs kept", best(Keep, True)))
    if gpu:
        rows.append(("mode + hooks + 2 events per op", best(Timed, True)))
    for name, t in rows:
        print("floor: %-32s %7.2f ms  %5.2fx plain" % (name, t * 1e3, t / plain))
    # does Python work between ops slow the op's own call (caches, clocks)?
    # and the same work done for 3 or 8 ops at once (the capture's deferred booking)
    for work, every in ((0, 1), (100, 1), (400, 1), (400, 3), (400, 8), (1600, 1), (1600, 3)):
        Busy.work, Busy.every, Busy.spent = work, every, [0.0, 0]
        t = best(Busy, True)
        print("floor: busy %4d items between ops, done every %d op(s): %7.2f ms  %5.2fx plain; "
              "the op's call %.1f us on average" % (work, every, t * 1e3, t / plain,
                                                    Busy.spent[0] * 1e6 / max(Busy.spent[1], 1)))


def per_op_recorder(g, acc):
    """Makes the capture's recorder add each op's parts, and the gap since the
    previous op returned, to acc[op name] (only the recorded pass: timed=False on a
    GPU, and the last pass elsewhere: acc is cleared at each new recorder)."""
    make = g["make_recorder"]
    clock = time.perf_counter

    def wrapped(torch, wrap):
        Recorder = make(torch, wrap)

        class PerOp(Recorder):
            def __init__(self, *a, **k):
                super().__init__(*a, **k)
                acc.clear()
                self.last = None

            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                c0 = clock()
                before = dict(self.parts)
                out = super().__torch_dispatch__(func, types, args, kwargs)
                row = acc.setdefault(str(func), {"n": 0, "gap": 0.0, "all": 0.0})
                row["n"] += 1
                if self.last is not None:
                    row["gap"] += c0 - self.last
                for k, v in self.parts.items():
                    row[k] = row.get(k, 0.0) + v - before[k]
                self.last = clock()
                row["all"] += self.last - c0
                return out

        return PerOp

    g["make_recorder"] = wrapped


def pass_profiler(g, prof):
    """Makes the capture's recorder profile the recorded pass only (not the warm-up
    passes, which send nothing, nor loading the model)."""
    make = g["make_recorder"]

    def wrapped(torch, wrap):
        Recorder = make(torch, wrap)

        class Profiled(Recorder):
            def __enter__(self):
                r = super().__enter__()
                if not self.t.dry:
                    prof.enable()
                return r

            def __exit__(self, *a):
                if not self.t.dry:
                    prof.disable()
                return super().__exit__(*a)

        return Profiled

    g["make_recorder"] = wrapped


def print_per_op(acc, n):
    keys = ["all", "gap", "inputs", "launch", "cpu_ops", "outputs", "rng"]
    print("per op name, microseconds per call (all: inside gpuvet's dispatch; gap: since "
          "the previous op returned)")
    print("%-36s %5s " % ("op", "calls") + " ".join("%8s" % k for k in keys))
    tot = {k: 0.0 for k in keys}
    for name, row in sorted(acc.items(), key=lambda kv: -(kv[1]["all"] + kv[1]["gap"])):
        print("%-36s %5d " % (name[:36], row["n"]) +
              " ".join("%8.1f" % (row.get(k, 0.0) * 1e6 / row["n"]) for k in keys))
        for k in keys:
            tot[k] += row.get(k, 0.0)
    print("%-36s %5d " % ("(all ops)", n) + " ".join("%8.1f" % (tot[k] * 1e6 / max(n, 1))
                                                     for k in keys))


def emptyings(g, w, req, budget, rounds):
    """What emptying the queue mid-pass costs, in this one process: recorded passes as
    the capture runs them (no timing events on a GPU) in turns with the plain forward,
    three ways. "copied": the queue of `budget` bytes is emptied as in the capture (a
    wait for the device, then every value copied to the host and dropped; the copying
    is writing, left out as the capture leaves it out). "waited": emptied at the same
    points with the wait but without the copies. "kept": a queue that holds every
    value to the end (the wait and copies come after the pass, left out)."""
    import gc
    torch = w.torch
    model, inputs = on_device(g, w, req)
    roles = g["model_roles"](model, inputs)
    compiled = g["compiles"](torch, model)
    stack = []
    handles = g["module_paths"](model, stack, compiled)
    Recorder = g["make_recorder"](torch, compiled)

    class Waited(g["Tensors"]):
        def write(self, t, meta):
            pass

    def one(kind):
        if kind == "plain":
            t0 = time.perf_counter()
            with torch.no_grad():
                model(*inputs)
            w.sync()
            return time.perf_counter() - t0, 0
        make = Waited if kind == "waited" else g["Tensors"]
        tensors = make(torch, Chan(), roles, budget if kind != "kept" else 1 << 50, w.sync,
                       any_device=not w.is_gpu)
        for i, x in enumerate(inputs):
            tensors.ref(x, "input:%d" % i)
        rec = Recorder(w, tensors, stack, [], timed=not w.is_gpu)
        gc.disable()
        t0 = time.perf_counter()
        try:
            with torch.no_grad():
                with rec:
                    model(*inputs)
            if kind != "kept":
                tensors.flush(final=True)
                w.sync()
            dt = time.perf_counter() - t0 - tensors.send_seconds
        finally:
            gc.enable()
        del stack[:]
        flushes = tensors.flushes
        if kind == "kept":
            tensors.flush(final=True)
        return dt, flushes

    kinds = ["plain", "copied", "waited", "kept"]
    times = {k: [] for k in kinds}
    flushes = {}
    try:
        for k in kinds:  # first uses
            one(k)
        for r in range(rounds):
            for k in kinds[r % 4:] + kinds[:r % 4]:
                dt, flushes[k] = one(k)
                times[k].append(dt)
    finally:
        for h in handles:
            h.remove()
    plain = sorted(times["plain"])
    best, median = plain[0], plain[len(plain) // 2]
    for k in kinds:
        v = sorted(times[k])
        print("emptying: %-6s best %6.2f ms (%5.2fx the best plain), median %6.2f ms (%5.2fx the "
              "median plain); emptied %s times a pass" % (
                  k, v[0] * 1e3, v[0] / best, v[len(v) // 2] * 1e3, v[len(v) // 2] / median,
                  flushes.get(k, 0)))


def main(argv):
    model = argv[1]
    device = argv[2] if len(argv) > 2 and not argv[2].startswith("--") else "cpu"
    top = int(argv[argv.index("--cprofile") + 1]) if "--cprofile" in argv else 0
    top_pass = int(argv[argv.index("--cprofile-pass") + 1]) if "--cprofile-pass" in argv else 0
    g = load_worker(os.environ.get("GPUVET_NATIVE_SO"))
    chan = Chan()
    w = g["Worker"](chan)
    opened = w.open({"device": device})
    if not opened.get("ok"):
        print(json.dumps(opened))
        return 1
    path = model.rpartition(":")[0]
    with open(path) as f:
        req = {"model": model, "source": f.read(), "seed": 0}
    if "--floors" in argv:
        floors(g, w, req)
    per_op = {} if "--per-op" in argv else None
    if per_op is not None:
        per_op_recorder(g, per_op)
    pass_prof = None
    if top_pass:
        import cProfile
        pass_prof = cProfile.Profile()
        pass_profiler(g, pass_prof)
    before = set(sys.modules)
    prof = None
    if top:
        import cProfile
        prof = cProfile.Profile()
        prof.enable()
    t0 = time.perf_counter()
    g["capture_model"](w, req, bytearray())
    wall = time.perf_counter() - t0
    if prof:
        prof.disable()
    done = chan.done
    if not done or not done.get("ok"):
        print(json.dumps(done))
        return 1
    t = done["timing"]
    n = done["ops"]
    rec = t["capture_seconds"] - t["capture_writing_seconds"]
    print("torch %s on %s: %d ops; plain forward %.2f ms; recorded forward %.2f ms without "
          "writing (%.1fx), of which device waits %.2f ms; op time %.2f ms; capture_model "
          "%.2f s in all" % (w.torch.__version__, device, n, t["plain_forward_seconds"] * 1e3,
                             rec * 1e3, rec / t["plain_forward_seconds"],
                             t["capture_waiting_seconds"] * 1e3,
                             t["capture_ops_seconds"] * 1e3, wall))
    ov = t.get("capture_overhead_seconds") or {}
    print("overhead per op: " + ", ".join("%s %.1f us" % (k, v * 1e6 / max(n, 1))
                                           for k, v in sorted(ov.items())))
    print("timing:", json.dumps(t, sort_keys=True))
    print("memory:", json.dumps(done["memory"], sort_keys=True))
    print("sent: %d messages, %.1f MB" % (chan.msgs, chan.bytes / 1e6))
    new = sorted(m for m in set(sys.modules) - before if m.startswith("torch"))
    print("torch modules first imported during the capture: %d %s" % (len(new), new[:40]))
    if per_op:
        print_per_op(per_op, n)
    if "--emptying" in argv:
        emptyings(g, w, req, t["queue_bytes"], int(argv[argv.index("--emptying") + 1]))
    import pstats
    if prof:
        pstats.Stats(prof, stream=sys.stdout).sort_stats("tottime").print_stats(top)
    if pass_prof:
        st = pstats.Stats(pass_prof).stats
        rows = sorted(st.items(), key=lambda kv: -kv[1][2])[:top_pass]
        print("the recorded pass alone, under cProfile (%.2f ms in all): calls, own us, "
              "us with callees, function" % (sum(v[2] for v in st.values()) * 1e3))
        for (fn, line, name), (cc, nc, tt, ct, _) in rows:
            print("%7d %9.1f %9.1f  %s:%d(%s)" % (nc, tt * 1e6, ct * 1e6,
                                                 os.path.basename(fn), line, name))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
