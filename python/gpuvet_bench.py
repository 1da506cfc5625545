# gpuvet bench through the user's PyTorch (src/dev/torch/torch_bench.c): one GEMM,
# torch.mm(a, w.t()) (torch._scaled_mm for fp8), prepared once, timed many
# times, then checked. The same method as gpuvet's own routes: on a GPU the
# repetitions are enqueued behind torch.cuda._sleep so that device events time
# the GPU's work; operand sets rotated through at least the given bytes; random
# data; on the CPU the wall clock.
#
# gpuvet -> worker: {"op": "bench_gemm", "action": "prepare", "key": K, "dtype",
#                    "m", "n", "k", "rotate_bytes"}   -> {"ok", "impl"}
#                   {"action": "time", "key": K, "iters": N} -> {"ok", "seconds"}
#                   {"action": "check", "key": K}   -> {"ok", "good", "what"}
#                   {"action": "release", "key": K} -> {"ok"}
import os
import time

from gpuvet_errors import Unsupported

BENCH_WORK = {}
BENCH_CLOCK = {}


def bench_cycles_per_second(torch):
    """torch.cuda._sleep counts clock cycles: how many make a second, measured once."""
    if "cps" not in BENCH_CLOCK:
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        torch.cuda.synchronize()
        e0.record()
        torch.cuda._sleep(20000000)
        e1.record()
        torch.cuda.synchronize()
        BENCH_CLOCK["cps"] = 20000000 / max(e0.elapsed_time(e1) / 1e3, 1e-6)
    return BENCH_CLOCK["cps"]


def bench_prepare(worker, req):
    torch = worker.torch
    dt, m, n, k = req["dtype"], int(req["m"]), int(req["n"]), int(req["k"])
    names = {"f64": "float64", "f32": "float32", "tf32": "float32", "f16": "float16",
             "bf16": "bfloat16", "f8e4m3": "float8_e4m3fn"}
    if dt not in names or not hasattr(torch, names[dt]):
        raise Unsupported("torch %s has no %s" % (torch.__version__, dt))
    store = getattr(torch, names[dt])
    if dt in ("tf32", "f8e4m3") and not worker.is_gpu:
        raise Unsupported("%s GEMMs are a GPU setting in PyTorch" % dt)
    if dt == "f8e4m3" and not hasattr(torch, "_scaled_mm"):
        raise Unsupported("torch %s has no torch._scaled_mm" % torch.__version__)
    esize = torch.tensor([], dtype=store).element_size()
    set_bytes = (m * k + n * k) * esize + m * n * 4
    rot = float(req.get("rotate_bytes") or 0)
    nsets = max(1, min(64, int(-(-rot // set_bytes)) if rot > set_bytes else 1))
    g = torch.Generator(device=worker.dev)
    g.manual_seed(12345)

    def rand(r, c):
        x = torch.rand(r, c, device=worker.dev, generator=g) * 1.5 + 0.25
        sign = torch.rand(r, c, device=worker.dev, generator=g) < 0.5
        return torch.where(sign, -x, x).to(store if dt != "f8e4m3" else torch.float32)

    a = [rand(m, k) for _ in range(nsets)]
    w = [rand(n, k) for _ in range(nsets)]
    if dt == "f8e4m3":
        a = [x.to(store) for x in a]
        w = [x.to(store) for x in w]
        one = torch.ones((), device=worker.dev)
        c = [None] * nsets

        def call(i):
            c[i % nsets] = torch._scaled_mm(a[i % nsets], w[i % nsets].t(), one, one,
                                            out_dtype=torch.bfloat16)
        impl = "torch._scaled_mm(a, w.t(), out_dtype=bfloat16)"
    else:
        c = [torch.empty(m, n, device=worker.dev, dtype=store) for _ in range(nsets)]

        def call(i):
            torch.mm(a[i % nsets], w[i % nsets].t(), out=c[i % nsets])
        impl = "torch.mm(a, w.t(), out=c)"
    work = {"a": a, "w": w, "c": c, "call": call, "dtype": dt, "nsets": nsets,
            "enq": 30e-6, "m": m, "n": n}
    BENCH_WORK[req["key"]] = work
    tf32 = " allow_tf32=%d" % (dt == "tf32") if worker.is_gpu and dt in ("f32", "tf32") else ""
    return {"ok": True, "impl": "%s%s, torch %s, %d operand set(s)" % (impl, tf32,
                                                                    torch.__version__, nsets)}


def bench_time(worker, req):
    torch = worker.torch
    work = BENCH_WORK[req["key"]]
    iters = int(req["iters"])
    mm = getattr(getattr(torch.backends, "cuda", None), "matmul", None)
    old = getattr(mm, "allow_tf32", None) if mm is not None else None
    if mm is not None and worker.is_gpu:
        mm.allow_tf32 = work["dtype"] == "tf32"
    try:
        if not worker.is_gpu:
            t0 = time.perf_counter()
            for i in range(iters):
                work["call"](i)
            return {"ok": True, "seconds": time.perf_counter() - t0}
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        cps = bench_cycles_per_second(torch)
        for _ in range(3):
            gate = min(work["enq"] * iters * 1.5 + 100e-6, 0.25)
            torch.cuda._sleep(int(gate * cps))
            t0 = time.perf_counter()
            e0.record()
            for i in range(iters):
                work["call"](i)
            e1.record()
            enq = time.perf_counter() - t0
            torch.cuda.synchronize()
            work["enq"] = enq / iters
            if enq < gate:
                break
        return {"ok": True, "seconds": e0.elapsed_time(e1) / 1e3}
    finally:
        if mm is not None and old is not None:
            mm.allow_tf32 = old


def bench_check(worker, req):
    torch = worker.torch
    work = BENCH_WORK[req["key"]]
    tol = {"f64": 1e-12, "f32": 1e-5}.get(work["dtype"], 2e-2)
    if work["dtype"] == "f32" and worker.is_gpu and os.environ.get("NVIDIA_TF32_OVERRIDE") == "1":
        tol = 2e-2  # the override makes fp32 GEMMs TF32: still right, less exact
    if req.get("corrupt") and work["c"][0] is not None:  # tests: a wrong result must fail
        work["c"][0][work["m"] - 1, work["n"] - 1] += 1
    bad, worst, seen = 0, 0.0, 0
    gen = torch.Generator()
    gen.manual_seed(777)
    for s in range(work["nsets"]):
        c = work["c"][s]
        if c is None:
            continue
        a, w = work["a"][s], work["w"][s]
        for q in range(16):
            i = work["m"] - 1 if q == 0 else int(torch.randint(work["m"], (1,), generator=gen))
            j = work["n"] - 1 if q == 0 else int(torch.randint(work["n"], (1,), generator=gen))
            p = a[i].double() * w[j].double()
            ref, scale = float(p.sum()), float(p.abs().sum())
            got = float(c[i, j].double())
            e = abs(got - ref) / (scale or 1.0)
            if not e <= tol:
                bad += 1
            worst = max(worst, e) if e == e else float("nan")
            seen += 1
    return {"ok": True, "good": bad == 0 and seen > 0,
            "what": "%d sampled elements of the %d operand set(s)' last product against an fp64 "
                    "product of the same operands: %d beyond %.0e of sum|a*w| (worst %.2g)"
                    % (seen, work["nsets"], bad, tol, worst)}


def bench_gemm(worker, req):
    try:
        act = req.get("action")
        if act == "prepare":
            return bench_prepare(worker, req)
        if act == "time":
            return bench_time(worker, req)
        if act == "check":
            return bench_check(worker, req)
        if act == "release":
            BENCH_WORK.pop(req.get("key"), None)
            if worker.is_gpu:
                worker.torch.cuda.empty_cache()
            return {"ok": True}
        return {"ok": False, "status": "usage", "error": "bench_gemm: unknown action %r" % act}
    except Unsupported as e:
        return {"ok": False, "status": "unsupported", "error": str(e)}
    except KeyError as e:
        return {"ok": False, "status": "usage", "error": "bench_gemm: no prepared work %s" % e}
    except Exception as e:
        BENCH_WORK.pop(req.get("key"), None)
        return worker.failure(e)
