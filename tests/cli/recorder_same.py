# The capture's recorder in C (python/native/gpuvet_rec.c) against the Python one
# (dispatch_py): each model is captured by both, in one process, each with its own
# copy of the worker (python/*.py, the real code), and every message the capture
# sends (each tensor's header and bytes, each op's record, the header at the end)
# must be the same, except the times and the memory figures.
# usage: PYTHON tests/cli/recorder_same.py RECORDER.so DEVICE MODEL.py:FUNCTION...
# GPUVET_TEST_CAPTURE_QUEUE=BYTES queues values on any device (as on a GPU), and
# GPUVET_TEST_CAPTURE_HOLD as for the capture (here 1 GB unless set). The header's
# counts of what the copy-out queue did must be the same too (unless
# GV_RECORDER_SAME_UNCOUNTED is set: on a GPU the second capture in a process finds
# PyTorch's allocator warm, and may settle on another queue size).
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


def load_worker(so):
    """The worker's files in a namespace of their own, as profile_capture.py loads them
    (with the recorder in C from so, or without one)."""
    saved = os.environ.pop("GPUVET_NATIVE_SO", None)
    try:
        if so:
            os.environ["GPUVET_NATIVE_SO"] = so
        return profile_capture.load_worker()
    finally:
        os.environ.pop("GPUVET_NATIVE_SO", None)
        if saved is not None:
            os.environ["GPUVET_NATIVE_SO"] = saved


def capture(so, device, model):
    g = load_worker(so)
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
    if isinstance(hdr.get("timing"), dict) and not os.environ.get("GV_RECORDER_SAME_UNCOUNTED"):
        out["timing"] = dict((k, hdr["timing"].get(k)) for k in COUNTED)
    return out


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


def main(argv):
    so, device, models = argv[1], argv[2], argv[3:]
    # held values: a fixed budget, not one from this process's memory, which varies
    os.environ.setdefault("GPUVET_TEST_CAPTURE_HOLD", "1000000000")
    bad = 0
    for m in models:
        why = compare(m, capture(None, device, m), capture(so, device, m))
        if why:
            print("%s: %s" % (m, why))
            bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
