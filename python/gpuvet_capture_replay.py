# bisect's replays (docs/capture.md): one recorded op, or a stretch of them,
# fed the recorded inputs, on this environment's device, or in float64 on the
# CPU by the referee ("mode": "referee": a worker of its own that gpuvet starts
# clean, see referee_open; never in the environment judged, whose floating-point
# mode would leak into it). What a capture names is resolved
# by gpuvet_capture_load's rules only (op_of, torch_enum). fp_mode: the
# floating-point mode a process computes in, as its results show it.
import struct

from gpuvet_capture_load import op_of, torch_enum
from gpuvet_capture_schema import op_writes, schema_facts
from gpuvet_capture_tensors import dtype_name, tensor_bytes
from gpuvet_errors import Unsupported, err_text

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


def replay_reply(torch, outs, note):
    """A replay's reply: each output's dtype, shape and bytes."""
    specs, blobs = [], []
    for o in outs:
        b = tensor_bytes(torch, o)
        specs.append({"dtype": dtype_name(torch, o.dtype), "shape": list(o.shape),
                      "nbytes": len(b)})
        blobs.append(b)
    return ({"ok": True, "outputs": specs, "impl": ", ".join(note)},
            b"".join(bytes(b) for b in blobs))


def replay_span(worker, req, payload):
    """A stretch of A's ops run one after another on this device, each fed what
    the ones before it computed here (A's recorded values only for what comes
    from outside the stretch); or, by the referee, the same chain in float64 on
    the CPU. Replies with the values of the ids asked for."""
    torch = worker.torch
    note = []
    try:
        ext = load_tensors(worker, req, payload)
        funcs = [op_of(torch, op["name"]) for op in req["ops"]]
        referee = req.get("mode") == "referee"
        live = {k: to_f64(torch, t) if referee else t.clone() for k, t in ext.items()}
        dev = torch.device("cpu") if referee else worker.dev

        def chain():
            for func, op in zip(funcs, req["ops"]):
                run_chained(torch, func, op, live, dev)
            return [live[k] for k in req["want"]]

        with torch.no_grad():
            outs = chain() if referee else worker.run_case({"op": "replay", "id": "span"},
                                                           note, chain)
        return replay_reply(torch, outs, note)
    except Unsupported as e:
        return {"ok": False, "status": "unsupported", "error": str(e)}, b""
    except KeyError as e:
        return {"ok": False, "status": "unsupported",
                "error": "the stretch reads tensor %s, which it was not given" % e}, b""
    except Exception as e:
        return worker.failure(e), b""


def replay_op(worker, req, payload):
    """One recorded op on this device, or, by the referee, in float64 on the CPU;
    replies with its outputs' bytes."""
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
            if req.get("mode") == "referee":
                out = func(*to_f64(torch, args), **to_f64(torch, kwargs))
            else:
                out = worker.run_case({"op": "replay", "id": req["name"]}, note,
                                      lambda: func(*args, **kwargs))
        return replay_reply(torch, flat_outputs(torch, out), note)
    except Unsupported as e:
        return {"ok": False, "status": "unsupported", "error": str(e)}, b""
    except Exception as e:
        return worker.failure(e), b""


# ---------------------------------------------------------------- floating-point mode

# Past ATen's grain size (32768 elements): an element-wise op over this many runs
# on the thread pool, so the pool's threads show their mode too (each inherits
# MXCSR from the thread that created it, not from a later set_flush_denormal).
FP_PROBE_N = 1 << 18


def subnormals(torch, bits, n):
    """n float32 values with the bit pattern bits (a subnormal when below 1 << 23),
    made from bytes: converting a double to float32 could itself be flushed."""
    return torch.frombuffer(bytearray(struct.pack("<I", bits) * n), dtype=torch.float32)


def seen(flushed, n):
    return "off" if flushed == 0 else "on" if flushed == n else "some threads"


def fp_mode(torch, pool=True):
    """FTZ: a float32 product below the normal range (2^-70 * 2^-70) comes out as
    zero; DAZ: a subnormal float32 input (2^-139) reads as zero (widened to
    float64, where it is normal). On the calling thread (one element) and, with
    pool, over FP_PROBE_N elements (the thread pool: not at open, where the
    probe would create the pool before the user's code sets its mode); "on",
    "off" or "some threads"."""
    try:
        flushed = [0, 0]
        sizes = (1, FP_PROBE_N) if pool else (1,)
        for n in sizes:
            big = torch.full((n,), 2.0 ** -70, dtype=torch.float32)
            flushed[0] += int(((big * big) == 0).sum())
            flushed[1] += int((subnormals(torch, 0x400, n).double() == 0).sum())
        mode = {"ftz": seen(flushed[0], sum(sizes)), "daz": seen(flushed[1], sum(sizes)),
                "probed": "calling thread and thread pool" if pool else "calling thread"}
        getter = getattr(torch, "is_flush_denormal", None)  # no release has one yet
        if callable(getter):
            mode["torch_flush_denormal"] = bool(getter())
        return mode
    except Exception as e:
        return {"error": err_text(e)}


def referee_open(worker, req):
    """The referee's start (gpuvet started this interpreter with -I -S, a scrubbed
    environment and no preloads): torch on the CPU, req["threads"] threads,
    flush-denormal off, then the canary gpuvet checks against values it computes
    itself. Canary: req["n"] float32 subnormals of bit patterns (i % 1000) + 1,
    widened to float64 and summed (DAZ would read them as zero); and n float32
    products 2^-70 * 2^-70 = 2^-140, widened and summed (FTZ would flush them),
    both large enough for the thread pool. Replies the sums as float.hex()."""
    r = worker.open({"device": "cpu"})
    if not r.get("ok"):
        return r
    torch = worker.torch
    try:
        torch.set_num_threads(int(req["threads"]))
        flush = torch.set_flush_denormal(False)
        n = int(req["n"])
        with torch.no_grad():
            x = (torch.arange(n, dtype=torch.int32) % 1000 + 1).view(torch.float32)
            daz_sum = float(x.double().sum())
            big = torch.full((n,), 2.0 ** -70, dtype=torch.float32)
            ftz_sum = float((big * big).double().sum())
        return {"ok": True, "describe": worker.describe(), "threads": torch.get_num_threads(),
                "set_flush_denormal": bool(flush), "daz_sum": daz_sum.hex(),
                "ftz_sum": ftz_sum.hex(), "fp_mode": fp_mode(torch)}
    except Exception as e:
        return worker.failure(e)
