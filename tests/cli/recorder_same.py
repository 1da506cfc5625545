# The capture's recorder in C (python/native/_gpuvet_capture_record.c) against the Python one
# (dispatch_py): each model is captured by both, in one process, each with its own
# copy of the worker (python/*.py, the real code), and every message the capture
# sends (each tensor's header and bytes, each op's record, the header at the end)
# must be the same, except the times and the memory figures.
# usage: PYTHON tests/cli/recorder_same.py RECORDER.so DEVICE MODEL.py:FUNCTION...
#        PYTHON tests/cli/recorder_same.py --gpu-branch RECORDER.so MODEL.py:FUNCTION...
# --gpu-branch: the recorder's GPU branch (timing events, the device queue) run without a
# GPU, the model on the meta device and stand-ins for the events (gpu_branch); a model that
# copies a value to the CPU (fallback.py) cannot run there.
# GPUVET_TEST_CAPTURE_QUEUE=BYTES queues values on any device (as on a GPU), and
# GPUVET_TEST_CAPTURE_HOLD as for the capture (here 1 GB unless set). The header's
# counts of what the copy-out queue did must be the same too, and the order of the
# messages. GV_RECORDER_SAME_GPU=1 (tests/gpu/torch_capture_cuda.sh) leaves out both: on
# a GPU the second capture in a process finds PyTorch's allocator warm, stops its warm-up
# sooner and may settle on another queue size, and a value larger than the queue is sent
# at once, ahead of those waiting, so the order of the tensors depends on that size; each
# tensor's header and bytes, and every op record in order, must still be the same.
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bench"))
import profile_capture  # noqa: E402 (the worker loaded without gpuvet's C side)

VARYING = ("seconds", "timing", "memory", "describe")  # differ from run to run
# the header's timing figures that do not: the copy-out queue's size and what it did
COUNTED = ("queue_bytes", "queue_flushes", "queue_device_copies", "held_peak_bytes",
           "hold_drains", "device_to_host_bytes", "warmup_passes", "op_times_from")


class Chan(object):
    def __init__(self):
        self.msgs = []

    def send(self, hdr, payload=b""):
        self.msgs.append((json.loads(json.dumps(hdr)), bytes(payload)))


def capture(so, device, model):
    g = profile_capture.load_worker(so)
    chan = Chan()
    w = g["Worker"](chan)
    opened = w.open({"device": device})
    if not opened.get("ok"):
        raise SystemExit("cannot open %s: %s" % (device, opened.get("error")))
    with open(model.rpartition(":")[0]) as f:
        req = {"model": model, "source": f.read(), "seed": 0}
    g["capture_model"](w, req, bytearray())
    return chan.msgs


def stripped(hdr):
    out = dict((k, v) for k, v in hdr.items() if k not in VARYING)
    if isinstance(hdr.get("timing"), dict) and not os.environ.get("GV_RECORDER_SAME_GPU"):
        out["timing"] = dict((k, hdr["timing"].get(k)) for k in COUNTED)
    return out


def by_tensor_id(msgs):
    """The messages with the tensors' in the order of their ids, each where the first
    tensor message was, the rest as they came."""
    tensors = sorted((m for m in msgs if m[0].get("kind") == "tensor"),
                     key=lambda m: m[0].get("key"))
    it = iter(tensors)
    return [next(it) if m[0].get("kind") == "tensor" else m for m in msgs]


def compare(model, py, nat):
    done = nat[-1][0] if nat else {}
    if not done.get("ok"):
        return "the capture with the recorder in C failed: %s" % done.get("error")
    why = done["timing"].get("recorder")
    if why != "native":
        return "the recorder in C did not run: %s" % why
    why = py[-1][0].get("timing", {}).get("recorder", "")
    if not why.startswith("python"):
        return "the Python recorder did not run: %s" % why
    if len(py) != len(nat):
        return "%d messages from the Python recorder, %d from the one in C" % (len(py), len(nat))
    if os.environ.get("GV_RECORDER_SAME_GPU"):  # (tensors in the order of their ids)
        py, nat = by_tensor_id(py), by_tensor_id(nat)
    for i, ((ha, pa), (hb, pb)) in enumerate(zip(py, nat)):
        a, b = stripped(ha), stripped(hb)
        if a != b:
            keys = sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))
            return "message %d (%s) differs in %s:\n  Python %s\n  C      %s" % (
                i, a.get("kind"), ", ".join(keys), json.dumps([a.get(k) for k in keys])[:2000],
                json.dumps([b.get(k) for k in keys])[:2000])
        if pa != pb:
            return "message %d (%s) has other bytes" % (i, json.dumps(a, sort_keys=True))
    ops = sum(1 for h, _ in nat if h.get("kind") == "op")
    tensors = sum(1 for h, _ in nat if h.get("kind") == "tensor")
    print("%s: the same %d messages (%d ops, %d tensors)" % (model, len(nat), ops, tensors))
    return None


class Event(object):
    """A stand-in for a CUDA event, numbered in the order the recorder takes them."""
    made = 0

    def __init__(self):
        Event.made += 1
        self.id = Event.made


def gpu_branch(so, model, budget):
    """The recorder's GPU branch (timing events around each op, values queued on the
    device, copies before in-place writes) driven without a GPU: the model on the meta
    device (no data), the worker told it is a GPU, the events stand-ins; returns what
    the recorder did: the op records (times left out), the events it took and recorded
    in order, the parts it timed, its queue's counts."""
    g = profile_capture.load_worker(so)
    w = g["Worker"](Chan())
    if not w.open({"device": "cpu"}).get("ok"):
        raise SystemExit("cannot open the CPU")
    torch = w.torch
    w.is_gpu, w.sync = True, lambda: None
    # (the random number generators' state: the CPU's alone, there is no CUDA one)
    g["rng_state"] = lambda torch, cuda: [torch.default_generator.get_state()]
    with open(model.rpartition(":")[0]) as f:
        req = {"model": model, "source": f.read(), "seed": 0}
    mdl, inputs, call, _, _ = g["load_model"](torch, req, bytearray(), 0)
    mdl.eval()
    mdl.to("meta")
    inputs = [x.to("meta") for x in inputs]
    roles = g["model_roles"](mdl, inputs)
    stack = []
    handles = g["module_paths"](mdl, stack, False)
    T = g["Tensors"](torch, None, roles, budget, w.sync, dry=True)
    for i, x in enumerate(inputs):
        T.ref(x, "input:%d" % i)
    rec = g["make_recorder"](torch, False)(w, T, stack, [])
    taken, recorded = [], []
    Event.made = 0

    def event():
        e = Event()
        taken.append(e.id)
        return e
    rec.event, rec.stream = event, lambda: "the stream"
    rec.record_event = lambda e, s: recorded.append((e.id, s))
    args, kwargs = g["fill"](call, inputs)
    try:
        with torch.no_grad():
            with rec:
                mdl(*args, **kwargs)
    finally:
        for h in handles:
            h.remove()
    records = [dict((k, v) for k, v in r.items() if k != "seconds") for r in rec.records]
    return {"why": g["NATIVE"].get("why"), "records": json.loads(json.dumps(records)),
            "events": [(r["i"], a.id, b.id) for r, a, b in rec.events],
            "taken": taken, "recorded": recorded, "timed": sorted(k for k, v in rec.parts.items() if v),
            "seconds": sorted(set(r["seconds"] is None for r in rec.records)),
            "queue": (T.next, T.copies, T.flushes, T.pending_bytes)}


def compare_gpu_branch(so, model):
    copies = []
    for budget in (10 ** 9, 1000):
        py, nat = gpu_branch(None, model, budget), gpu_branch(so, model, budget)
        if nat["why"] != "native" or not py["why"].startswith("python"):
            return "the recorders that ran: %s and %s" % (py["why"], nat["why"])
        if not nat["events"] or True not in nat["seconds"] or "launch" not in nat["timed"]:
            return "the recorder in C did not take the GPU branch: %s" % nat["timed"]
        for k in sorted(py):
            if k != "why" and py[k] != nat[k]:
                return "GPU branch, queue %d: %s differ:\n  Python %s\n  C      %s" % (
                    budget, k, json.dumps(py[k])[:1500], json.dumps(nat[k])[:1500])
        copies.append("%d copies, emptied %d times" % nat["queue"][1:3])
    cpu = sum(1 for r in nat["records"] if r["devices"] == ["cpu"])
    print("%s: the same on the GPU branch (%d ops, %d of them on CPU tensors, %d events; queue "
          "of 1 GB: %s, of 1000 bytes: %s)" % (model, len(nat["records"]), cpu, len(nat["taken"]),
                                               copies[0], copies[1]))
    return None


def main(argv):
    if argv[1:2] == ["--gpu-branch"]:  # PYTHON recorder_same.py --gpu-branch SO MODEL...
        bad = [m for m in argv[3:] if report(m, compare_gpu_branch(argv[2], m))]
        return 1 if bad else 0
    so, device, models = argv[1], argv[2], argv[3:]
    # held values: a fixed budget, not one from this process's memory, which varies
    os.environ.setdefault("GPUVET_TEST_CAPTURE_HOLD", "1000000000")
    bad = [m for m in models if report(m, compare(m, capture(None, device, m),
                                                   capture(so, device, m)))]
    return 1 if bad else 0


def report(model, why):
    if why:
        print("%s: %s" % (model, why))
    return why


if __name__ == "__main__":
    sys.exit(main(sys.argv))
