# bisect's replays (docs/capture.md): one recorded op, or a stretch of them,
# fed the recorded inputs, on this environment's device, and the same in float64
# on the CPU as the referee. What a capture names is resolved by
# gpuvet_capture_load's rules only (op_of, torch_enum).
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
