# gpuvet's capture of a user's model, run inside the PyTorch worker
# (gpuvet_torch_worker.py calls capture_model()). docs/capture.md.
#
# capture: every ATen operation of one forward pass, seen through a
# TorchDispatchMode (so functional calls, in-place ops and views are there too,
# which module hooks miss), with the module it ran in; each tensor an op reads
# or writes goes to gpuvet once, as it appears, and gpuvet streams it to disk.
# The parts: gpuvet_capture_load (the model, and what a capture may name),
# gpuvet_capture_tensors, gpuvet_capture_schema, gpuvet_capture_record (the
# dispatch mode; gpuvet_capture_native loads its C half), gpuvet_capture_budget
# (the device queue's size), gpuvet_capture_replay (bisect's replays).
import gc
import os
import time

from gpuvet_capture_budget import (HOLD_SHARE, QUEUE_START, gpu_segments, proc_rss_peak,
                                   reset_rss_peak, warm_up)
from gpuvet_capture_load import (ModelError, call_json, call_model, fill, load_model,
                                 load_state, out_tensors)
from gpuvet_capture_native import NATIVE
from gpuvet_capture_record import compiles, make_recorder, module_paths, opaque_modules
from gpuvet_capture_schema import rng_state, same_rng
from gpuvet_capture_tensors import Tensors
from gpuvet_errors import err_text, where

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


def capture_model(worker, req, payload):
    """Runs the model once plainly (timed), then once recorded, streaming tensors
    and ops to gpuvet; ends with {"kind": "done"} or {"ok": false}."""
    chan = worker.chan
    seed = int(req.get("seed") or 0)
    try:
        run = Run(worker, req, payload, seed)
        plain_forward(run)
        plain_memory(run)
        first_budget(run)
        chan.send(finish(run, recorded(run)))
    except ModelError as e:
        chan.send({"ok": False, "status": "model-error", "error": str(e)})
    except Exception as e:
        chan.send({"ok": False, "status": "model-error",
                   "error": "the model raised %s%s" % (err_text(e), where(e))})


class Run(object):
    """One capture request: the model and its inputs on the worker's device, and
    what its passes found (the steps below fill in the rest)."""

    def __init__(self, worker, req, payload, seed):
        torch = self.torch = worker.torch
        self.worker, self.seed = worker, seed
        program = int(req.get("program_nbytes") or 0)
        model, inputs, call, path, fn = load_model(torch, req, payload[:program], seed)
        if req.get("load"):
            inputs = load_state(torch, model, inputs, req["load"], payload[program:], path)
        if hasattr(model, "eval"):
            try:
                model.eval()
            except NotImplementedError:
                pass  # a torch.export program's module: its mode was set when it was exported
        if hasattr(model, "to"):
            model.to(worker.dev)
        self.model, self.call, self.path, self.fn = model, call, path, fn
        self.inputs = [x.to(worker.dev) for x in inputs]
        self.mem = {}

    def forward(self):
        return call_model(self.model, self.call, self.inputs)


def plain_forward(run):
    """The plain forward: a warm-up, then the best of ten (at least three, within
    about a second: a launch-bound forward's time varies from pass to pass, and the
    fastest is the baseline). Sets run.plain (the times), run.updated (the buffers
    the forward changes) and run.reset."""
    torch, worker = run.torch, run.worker
    # a forward that changes the model's buffers (running statistics, counters)
    # would start every pass from another state: those buffers are put back
    # before each pass (reset), so every pass, the recorded one too, starts where
    # the first did
    copies = buffer_copies(torch, run.model)
    plain = []
    with torch.no_grad():
        out = run.forward()
        out_tensors(torch, out, run.path)
        worker.sync()
        copies = changed_buffers(torch, copies)
        run.updated = [c[0] for c in copies]

        def reset():
            put_back(torch, copies)
        reset()
        while len(plain) < 3 or (len(plain) < 10 and sum(plain) < 1.0):
            reset()
            t0 = time.perf_counter()
            run.forward()
            worker.sync()
            plain.append(time.perf_counter() - t0)
    run.plain, run.reset = plain, reset


def plain_memory(run):
    """The plain forward's peak GPU memory and peak resident memory, into run.mem;
    run.base_rss: the resident peak before."""
    torch, worker, mem = run.torch, run.worker, run.mem
    if worker.is_gpu:
        torch.cuda.reset_peak_memory_stats(worker.dev)
        run.reset()
        with torch.no_grad():
            run.forward()
        worker.sync()
        mem["plain_gpu_peak_bytes"] = int(torch.cuda.max_memory_allocated(worker.dev))
        torch.cuda.reset_peak_memory_stats(worker.dev)
    run.base_rss = proc_rss_peak()
    if reset_rss_peak():
        run.reset()
        with torch.no_grad():
            run.forward()
        mem["plain_rss_peak_bytes"] = proc_rss_peak()
        reset_rss_peak()


def first_budget(run):
    """The device queue's size for the first warm-up pass (run.budget) and the peak it
    adapts to (run.adapt, None: it stays); run.forced: the test setting of a queue
    on any device."""
    run.roles = model_roles(run.model, run.inputs)
    # on a GPU, values wait on the device in a queue that starts at 0.4x the plain
    # forward's peak and grows in the warm-up while the capture's peak stays
    # within 1.4x of it (next_budget)
    budget, adapt = 0, None
    if run.worker.is_gpu:
        adapt = run.mem["plain_gpu_peak_bytes"]
        budget = max(int(QUEUE_START * adapt), 1)
    forced = os.environ.get("GPUVET_TEST_CAPTURE_QUEUE")  # tests: a queue on any device
    if forced:
        budget, adapt = int(forced), None
    run.budget, run.adapt, run.forced = budget, adapt, forced


def recorded(run):
    """The warm-up passes and the recorded pass, with the model's module paths kept
    (module_paths) and taken out again; returns what the recorded pass left: its
    recorder, its Tensors and what the forward returned."""
    torch, worker = run.torch, run.worker
    stack = []
    compiled = compiles(torch, run.model)
    handles = module_paths(run.model, stack, compiled)
    try:
        Recorder = make_recorder(torch, compiled)
        # warm-up passes, recorded the same way but sending nothing: first uses
        # (imports, handles, timing events) and the device memory the queue holds
        # (so PyTorch's allocator has it cached) come before the timed pass
        pool = []
        w0 = time.perf_counter()
        warm = warm_up(torch, worker, run.model, run.call, run.inputs, run.roles, run.budget,
                       bool(run.forced), stack, Recorder, pool, run.adapt, run.reset)
        p = {"warm": warm, "warm_seconds": time.perf_counter() - w0}
        run.budget = warm["budget"]
        if worker.is_gpu:
            torch.cuda.reset_peak_memory_stats(worker.dev)
        tensors = p["tensors"] = Tensors(torch, worker.chan, run.roles, run.budget, worker.sync,
                                         any_device=bool(run.forced))
        hold = os.environ.get("GPUVET_TEST_CAPTURE_HOLD")  # tests: bytes held, 0 none
        tensors.hold_budget = int(hold) if hold else int(
            HOLD_SHARE * (run.mem.get("plain_rss_peak_bytes") or run.base_rss))
        p["in_ids"] = [tensors.ref(x, "input:%d" % i) for i, x in enumerate(run.inputs)]
        # the recorded pass has no timing events (two per op were a third of its
        # cost): its GPU ops take their device times from the last warm-up pass
        p["rec"] = Recorder(worker, tensors, stack, pool, timed=not worker.is_gpu)
        record_pass(run, p)
    finally:
        for h in handles:
            h.remove()
    return p


def record_pass(run, p):
    """The recorded forward: into p its output ("out"), time ("total"), the random
    number generators' state before ("rng_before") and the allocator's segments
    before and after ("seg0", "seg1")."""
    torch, worker, tensors = run.torch, run.worker, p["tensors"]
    run.reset()
    torch.manual_seed(run.seed)
    p["rng_before"] = rng_state(torch, worker.is_gpu)
    p["seg0"] = gpu_segments(torch, worker)
    # the records the pass keeps (a dict per op, per tensor) would set off
    # Python's cyclic collector again and again, scanning all of them each
    # time: it waits until the pass is over (tensors are freed as usual)
    args, kwargs = fill(run.call, run.inputs)
    gc_was = gc.isenabled()
    gc.disable()
    t0 = time.perf_counter()
    try:
        with torch.no_grad():
            with p["rec"]:
                p["out"] = run.model(*args, **kwargs)
    finally:
        if gc_was:
            gc.enable()
    tensors.flush(final=True)
    worker.sync()
    p["total"] = time.perf_counter() - t0
    p["seg1"] = gpu_segments(torch, worker)


def finish(run, p):
    """After the recorded pass: sends the op records and the output's tensors;
    returns the capture's last message, {"kind": "done"} with its figures."""
    torch, worker, mem = run.torch, run.worker, run.mem
    warm, tensors, rec = p["warm"], p["tensors"], p["rec"]
    if p["seg0"] is not None:
        mem["warmup_new_gpu_segments"] = warm["segments"]
        mem["capture_new_gpu_segments"] = p["seg1"][0] - p["seg0"][0]
        mem["capture_alloc_retries"] = p["seg1"][1] - p["seg0"][1]
    parts = rec.parts
    parts["waiting"] = tensors.wait_seconds
    parts["other"] = max(p["total"] - tensors.send_seconds - sum(parts.values()), 0.0)
    rec.op_times()
    times_from = rec.times_from(warm["records"]) if worker.is_gpu else "this pass"
    in_forward_writing = tensors.send_seconds
    w0 = time.perf_counter()
    for r in rec.records:
        worker.chan.send(r)
    records_seconds = time.perf_counter() - w0
    rng_unattributed = not rec.rng_flagged and not same_rng(torch, p["rng_before"],
                                                            rng_state(torch, worker.is_gpu))
    outs = out_tensors(torch, p["out"], run.path)
    out_ids = [tensors.ref(o, "output:%d" % i) for i, (_, o) in enumerate(outs)]
    tensors.flush(final=True)
    if worker.is_gpu:
        peak = int(torch.cuda.max_memory_allocated(worker.dev))
        mem["capture_gpu_peak_bytes"] = max(peak, warm["gpu_peak"])
        mem["recorded_pass_gpu_peak_bytes"] = peak
        mem["warmup_queue_sizes"] = [{"queue_bytes": b, "gpu_peak_bytes": pk,
                                      "queue_flushes": f} for b, pk, f in warm["sizes"]]
    mem["capture_rss_peak_bytes"] = proc_rss_peak()
    mem["rss_before_bytes"] = run.base_rss
    plain = run.plain
    return {"ok": True, "kind": "done", "inputs": [{"$t": i} for i in p["in_ids"]],
            "outputs": [{"$t": i, "name": n} for i, (n, _) in zip(out_ids, outs)],
            "call": call_json(torch, run.call, p["in_ids"]), "model_file": run.path,
            "model_function": run.fn, "seed": run.seed, "ops": rec.n,
            "timing": {"plain_forward_seconds": min(plain),
                       "plain_forward_median_seconds": sorted(plain)[len(plain) // 2],
                       "capture_seconds": p["total"],
                       "capture_writing_seconds": in_forward_writing,
                       "capture_waiting_seconds": tensors.wait_seconds,
                       "records_writing_seconds": records_seconds,
                       "capture_ops_seconds": rec.op_seconds,
                       "op_times_from": times_from,
                       "recorder": NATIVE.get("why"),
                       "capture_overhead_seconds": parts,
                       "warmup_seconds": p["warm_seconds"], "warmup_passes": warm["passes"],
                       "queue_bytes": run.budget, "queue_flushes": tensors.flushes,
                       "queue_device_copies": tensors.copies,
                       "hold_bytes": tensors.hold_budget,
                       "held_peak_bytes": tensors.held_peak,
                       "hold_drains": tensors.hold_drains,
                       "device_to_host_bytes": tensors.device_bytes},
            "memory": mem, "rng_unattributed": rng_unattributed,
            "opaque_modules": opaque_modules(torch, run.model),
            "buffers_updated": run.updated,
            "describe": worker.describe()}
