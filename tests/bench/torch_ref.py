"""The PyTorch side of tests/bench/bench_vs_torch.sh: the same work as a gpuvet
bench result document, measured the same way through PyTorch on the same GPU,
and the ratios gpuvet / PyTorch with the issue's targets.

Same method as gpuvet: device events behind a spin (torch.cuda._sleep) that holds
the stream while the repetitions are enqueued; GEMM operands rotated through at
least twice the L2 cache; C = A . W^T (torch.mm(a, w.t())); random data; the
median of the samples. The host clock only for launch-and-wait.

usage: python torch_ref.py BENCH.json [samples] [--save REF.json]
  --save: PyTorch's figure per result id as JSON, for tests/bench/vs_best.py"""
import json
import math
import os
import statistics
import sys
import time

import torch

doc = json.load(open(sys.argv[1]))
SAMPLES = int(sys.argv[2]) if len(sys.argv) > 2 and sys.argv[2] != "--save" else 10
SAVE = sys.argv[sys.argv.index("--save") + 1] if "--save" in sys.argv else None
dev = torch.device("cuda:0")
props = torch.cuda.get_device_properties(0)
L2 = getattr(props, "L2_cache_size", 50 << 20)
# _sleep counts clock cycles; calibrate cycles per second once
torch.cuda.synchronize()
e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
e0.record()
torch.cuda._sleep(10_000_000)
e1.record()
torch.cuda.synchronize()
CYCLES_PER_S = 10_000_000 / (e0.elapsed_time(e1) / 1e3)


def gated(fn, iters, enq_per_iter=30e-6):
    """Device seconds of iters calls of fn, enqueued behind a spin."""
    for _ in range(3):
        gate = min(enq_per_iter * iters * 1.5 + 100e-6, 0.25)
        torch.cuda._sleep(int(gate * CYCLES_PER_S))
        t0 = time.perf_counter()
        e0.record()
        for i in range(iters):
            fn(i)
        e1.record()
        enq = time.perf_counter() - t0
        torch.cuda.synchronize()
        enq_per_iter = enq / iters
        if enq < gate:
            break
    return e0.elapsed_time(e1) / 1e3


def measure(fn, work, lower=False, min_s=2e-3, warm_s=0.3):
    iters = 1
    for _ in range(8):
        t = gated(fn, iters)
        if t >= min_s:
            break
        iters = max(iters * 2, int(min_s / max(t, 1e-7) * iters * 1.2))
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < warm_s:
        gated(fn, iters)
    vals = []
    for _ in range(SAMPLES):
        t = gated(fn, iters)
        vals.append(t / iters * 1e6 if lower else work * iters / t)
    return statistics.median(vals)


DT = {"f64": torch.float64, "f32": torch.float32, "tf32": torch.float32, "f16": torch.float16,
      "bf16": torch.bfloat16, "f8e4m3": torch.float8_e4m3fn}


def gemm(p):
    m, n, k, dt = p["m"], p["n"], p["k"], p["dtype"]
    torch.backends.cuda.matmul.allow_tf32 = dt == "tf32"
    store = DT[dt]
    # the output in the rotation too (in its own format, bf16 for fp8), as gpuvet has
    # it: a fresh output per call would be a block the caching allocator just freed,
    # still in L2, and the small products would write to the cache, not memory
    out_store = torch.bfloat16 if dt == "f8e4m3" else store
    size = lambda d: torch.tensor([], dtype=d).element_size()
    set_bytes = (m * k + n * k) * size(store) + m * n * size(out_store)
    nsets = max(1, min(64, math.ceil(2 * L2 / set_bytes)))
    if dt == "f8e4m3":
        a = [(torch.rand(m, k, device=dev) * 2 - 1).to(store) for _ in range(nsets)]
        w = [(torch.rand(n, k, device=dev) * 2 - 1).to(store) for _ in range(nsets)]
        c = [torch.empty(m, n, device=dev, dtype=out_store) for _ in range(nsets)]
        one = torch.ones((), device=dev)
        f = lambda i: torch._scaled_mm(a[i % nsets], w[i % nsets].t(), one, one,
                                       out_dtype=out_store, out=c[i % nsets])
    else:
        a = [torch.rand(m, k, device=dev, dtype=store) * 2 - 1 for _ in range(nsets)]
        w = [torch.rand(n, k, device=dev, dtype=store) * 2 - 1 for _ in range(nsets)]
        c = [torch.empty(m, n, device=dev, dtype=store) for _ in range(nsets)]
        f = lambda i: torch.mm(a[i % nsets], w[i % nsets].t(), out=c[i % nsets])
    try:
        return measure(f, 2.0 * m * n * k) / 1e12
    finally:
        torch.backends.cuda.matmul.allow_tf32 = False


def copies(r):
    p, rid = r["params"], r["id"]
    nbytes = p["bytes"]
    n = nbytes // 4
    if rid.startswith("memory.d2d_memcpy") or rid.startswith("memory.copy"):
        x = torch.ones(n, device=dev)
        y = torch.empty_like(x)
        return measure(lambda i: y.copy_(x), 2.0 * nbytes) / 1e9
    if rid.startswith("transfer.") and ".pinned." in rid:
        h = torch.ones(n, pin_memory=True)
        x = torch.empty(n, device=dev)
        if ".h2d." in rid:
            return measure(lambda i: x.copy_(h, non_blocking=True), float(nbytes)) / 1e9
        return measure(lambda i: h.copy_(x, non_blocking=True), float(nbytes)) / 1e9
    return None


def launch(rid):
    empty = lambda i: torch.cuda._sleep(0)
    if rid.endswith("back_to_back"):
        return measure(empty, 0, lower=True)
    if rid.endswith("launch_and_wait"):
        vals = []
        for _ in range(SAMPLES):
            t0 = time.perf_counter()
            for i in range(200):
                torch.cuda._sleep(0)
                torch.cuda.synchronize()
            vals.append((time.perf_counter() - t0) / 200 * 1e6)
        return statistics.median(vals)
    return None


sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vs_best import TARGET as RATIO  # noqa: E402 (one table of targets)
TARGET = {g: (v, "higher") for g, v in RATIO.items()}
TARGET["latency"] = (1.0, "lower")
saved, misses = {}, 0
print("%-46s %12s %12s %7s  %s" % ("id", "gpuvet", "pytorch", "ratio", "target"))
for r in doc["results"]:
    if r.get("status") != "ok":
        continue
    g, rid, v = r["group"], r["id"], r["value"]
    try:
        if g == "gemm":
            ref = gemm(r["params"])
        elif g in ("memory", "transfer"):
            ref = copies(r)
        elif g == "latency":
            ref = launch(rid)
        else:
            ref = None
    except Exception as e:  # a shape or dtype this torch cannot do
        print("%-46s %12.2f %12s  (pytorch: %s)" % (rid, v, "-", str(e).split("\n")[0][:60]))
        continue
    if ref is None:
        continue
    saved[rid] = ref
    tgt, better = TARGET[g]
    ratio = v / ref if better == "higher" else ref / v
    ok = ratio >= tgt if g != "latency" else v <= ref * 1.05
    misses += not ok
    print("%-46s %12.2f %12.2f %7.3f  %s%s" % (rid, v, ref, ratio,
                                               (">= %.2f" % tgt) if g != "latency" else "no worse",
                                               "" if ok else "  MISSES"))
    sys.stdout.flush()
print("torch %s, %s; %d below target" % (torch.__version__, props.name, misses))
if SAVE:
    with open(SAVE, "w") as f:
        json.dump({"torch": torch.__version__, "gpu": props.name, "values": saved}, f, indent=1)
