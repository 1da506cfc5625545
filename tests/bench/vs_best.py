"""Rounds of tests/bench/bench_vs_torch.sh combined: gpuvet's and PyTorch's best
figure per result over the rounds (gpuvet, PyTorch, gpuvet, PyTorch, ...), and
their ratio against the issue's targets. Taking each tool's best of alternating
rounds keeps the order they ran in (a GPU that is warmer, or a neighbour busier,
in one tool's turn) out of the ratio; the per-round ratios are printed beside it
so that the spread between rounds shows.

usage: python3 vs_best.py BENCH1.json REF1.json [BENCH2.json REF2.json ...]
(BENCHi: gpuvet bench -o; REFi: torch_ref.py --save; no torch needed here)"""
import json
import sys

# issue 13's targets, gpuvet / PyTorch (latency: no worse; torch_ref.py uses these too)
TARGET = {"gemm": 0.97, "memory": 0.95, "transfer": 0.95}


def main(args):
    if len(args) < 2 or len(args) % 2:
        print(__doc__)
        return 2
    rounds = []
    for i in range(0, len(args), 2):
        with open(args[i]) as f:
            doc = json.load(f)
        with open(args[i + 1]) as f:
            ref = json.load(f)["values"]
        rounds.append(({r["id"]: r for r in doc["results"] if r.get("status") == "ok"}, ref))
    ids = [rid for rid in rounds[0][0] if all(rid in g and rid in t for g, t in rounds)]
    misses = 0
    print("%-46s %11s %11s %7s %-24s %s" % ("id (best of %d rounds each)" % len(rounds), "gpuvet",
                                           "pytorch", "ratio", "per round", "target"))
    for rid in ids:
        r0 = rounds[0][0][rid]
        lower = r0.get("better") == "lower"
        gv = [g[rid]["value"] for g, _ in rounds]
        pt = [t[rid] for _, t in rounds]
        pick = min if lower else max
        g, t = pick(gv), pick(pt)
        per = [(b / a if lower else a / b) for a, b in zip(gv, pt)]
        ratio = t / g if lower else g / t
        group = r0["group"]
        ok = g <= t * 1.05 if lower else ratio >= TARGET.get(group, 0.95)
        misses += not ok
        note = ""
        alg = (r0.get("params") or {}).get("algorithm")
        if alg:
            note = " (algo #%d of %d)" % (alg["heuristic_rank"], alg["tried"])
        print("%-46s %11.2f %11.2f %7.3f %-24s %s%s%s" % (
            rid, g, t, ratio, " ".join("%.3f" % x for x in per),
            "no worse" if lower else ">= %.2f" % TARGET.get(group, 0.95),
            "" if ok else "  MISSES", note))
    print("%d of %d below target (best of %d rounds each)" % (misses, len(ids), len(rounds)))
    # per precision and shape: gpuvet's best route (what `best` reports) against
    # PyTorch's matmul, measured once per route and taken at its best as well
    by = {}
    for rid in ids:
        f = rid.split(".")
        if f[0] != "gemm":
            continue
        key = (f[2], f[3])
        gv = max(g[rid]["value"] for g, _ in rounds)
        pt = max(t[rid] for _, t in rounds)
        b = by.setdefault(key, [0.0, 0.0, ""])
        if gv > b[0]:
            b[0], b[2] = gv, f[1]
        b[1] = max(b[1], pt)
    low = [(k, v) for k, v in by.items() if v[0] / v[1] < TARGET["gemm"]]
    print("GEMM per precision and shape, gpuvet's best route: %d of %d below %.2f%s" % (
        len(low), len(by), TARGET["gemm"], "".join(
            "\n  %s %s: %.2f (%s) / %.2f = %.3f" % (k[0], k[1], v[0], v[2], v[1], v[0] / v[1])
            for k, v in low)))
    ratios = sorted(v[0] / v[1] for v in by.values())
    if ratios:
        print("  ratios: min %.3f, median %.3f, max %.3f" % (ratios[0], ratios[len(ratios) // 2],
                                                         ratios[-1]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
