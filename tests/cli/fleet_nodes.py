#!/usr/bin/env python3
"""Node documents (docs/fleet.md, gpuvet.fleet.node) made from one real result
file of `gpuvet check --json`, for tests/cli/fleet_compare.sh and
tests/bench/fleet_compare.sh. Every node gets the result's cases, a stack
summary from the result's snapshot and a bench figure; the options plant the
differences the tests then expect to be named. Not a test itself.

usage: fleet_nodes.py RESULT OUTDIR NODES [options]
  --repeats K               K runs per node (the same digests)
  --outputs FILE            a check --save-outputs file: copied to every node as
                            OUTDIR/outputs/NODE.rRANK.safetensors
  --drift RANK:LIB:VER      that node's library LIB has version VER
  --flip RANK:CASE[:REP]    one bit of that node's output of CASE flipped (in
                            repeat REP only, 1-based; default every repeat); the
                            digest recomputed from the flipped bytes when
                            --outputs is given, else a digest of other bytes
  --nondet RANK:CASE        CASE not run-to-run identical on that node
  --slow RANK:FACTOR        that node's bench figure times FACTOR
  --cannot RANK:REASON      that node could not run
  --missing RANK            no document for that rank
  --model RANK:MODEL        that node has another GPU model
  --split CASE:N            CASE gets a distinct digest on ranks 0..N-1
  --pad-libs N              N more (made-up) libraries in every stack, the size
                            of a GPU node's stack summary (the benchmark)
"""
import argparse
import copy
import hashlib
import json
import multiprocessing
import os
import struct
import sys


def canonical_digest(stack):
    text = json.dumps(stack, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


def stack_of(result):
    snap = result.get("snapshot") or {}
    libs = []
    for it in (snap.get("libraries") or {}).get("items", []):
        libs.append({"name": it.get("soname") or it.get("name"), "version": it.get("version") or "",
                     "origin": it.get("origin") or ""})
    # a library every test stack has, so that --drift can change its version
    libs.append({"name": "libhipblaslt.so.0", "version": "0.10.0", "origin": "/opt/rocm-6.4.1"})
    py = snap.get("python") or {}
    return {"libraries": libs, "gpuvet_suite": result.get("suite"),
            "python_envs": len(py.get("environments", [])) if isinstance(py, dict) else 0,
            "environment": {"HSA_OVERRIDE_GFX_VERSION": None}}


def cases_of(result):
    out = []
    for c in result["cases"]:
        m = c.get("metrics") or {}
        det = c.get("determinism") or {}
        out.append({"id": c["id"], "verdict": c["verdict"], "output_digest": c.get("output_digest"),
                    "effective_bits": m.get("effective_bits"), "max_abs": m.get("max_abs"),
                    "nan_count": m.get("nan_count", 0), "inf_count": m.get("inf_count", 0),
                    "deterministic": det.get("run_to_run_identical", True) is not False})
    return out


def pairs(values, n):
    out = []
    for v in values or []:
        parts = v.split(":", n - 1)
        out.append([int(parts[0])] + parts[1:])
    return out


def read_st(path):
    b = open(path, "rb").read()
    n = struct.unpack("<Q", b[:8])[0]
    return b, json.loads(b[8:8 + n]), 8 + n


def flip_bit(st_bytes, header, base, case):
    """The safetensors bytes with bit 0 of CASE's first element flipped, and the
    new output digest (SHA-256 of the tensor's bytes, as check computes it)."""
    s, e = header[case]["data_offsets"]
    b = bytearray(st_bytes)
    b[base + s] ^= 1
    return bytes(b), hashlib.sha256(bytes(b[base + s:base + e])).hexdigest()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("result")
    ap.add_argument("outdir")
    ap.add_argument("nodes", type=int)
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--outputs")
    ap.add_argument("--pad-libs", type=int, default=0)
    for opt in ("drift", "flip", "nondet", "slow", "cannot", "missing", "model", "split"):
        ap.add_argument("--" + opt, action="append")
    a = ap.parse_args()
    result = json.load(open(a.result))
    base_stack = stack_of(result)
    for i in range(a.pad_libs):
        base_stack["libraries"].append({"name": "libpad%03d.so.1" % i, "version": "1.%d.0" % i,
                                        "origin": "/opt/rocm-6.4.1/lib"})
    base_cases = cases_of(result)
    desc = result["device"].get("description") or {}
    st = read_st(a.outputs) if a.outputs else None
    drift = {r: (lib, ver) for r, lib, ver in pairs(a.drift, 3)}
    flips = {}
    for f in pairs(a.flip, 3):
        flips.setdefault(f[0], []).append((f[1], int(f[2]) if len(f) > 2 else 0))
    nondet = {}
    for r, case in pairs(a.nondet, 2):
        nondet.setdefault(r, set()).add(case)
    slow = {r: float(x) for r, x in pairs(a.slow, 2)}
    cannot = {r: why for r, why in pairs(a.cannot, 2)}
    model = {r: m for r, m in pairs(a.model, 2)}
    missing = {int(x) for x in a.missing or []}
    split = [(s.split(":")[0], int(s.split(":")[1])) for s in a.split or []]
    os.makedirs(os.path.join(a.outdir, "nodes"), exist_ok=True)
    if st:
        os.makedirs(os.path.join(a.outdir, "outputs"), exist_ok=True)
    base_digest = canonical_digest(base_stack)
    G.update(locals())
    ranks = [r for r in range(a.nodes) if r not in missing]
    if a.nodes >= 1000:
        with multiprocessing.Pool() as pool:
            pool.map(write_rank, ranks, chunksize=256)
    else:
        for r in ranks:
            write_rank(r)


G = {}


def write_rank(rank):
    """One node document (and its outputs), from what main() put in G."""
    a, result, st = G["a"], G["result"], G["st"]
    base_stack, base_digest, base_cases, desc = (G[k] for k in ("base_stack", "base_digest",
                                                                 "base_cases", "desc"))
    drift, flips, nondet, slow, cannot, model, split = (
        G[k] for k in ("drift", "flips", "nondet", "slow", "cannot", "model", "split"))
    name = "gpu-a%03d" % rank
    stack, sd = base_stack, base_digest
    if rank in drift:
        stack = copy.deepcopy(base_stack)
        lib, ver = drift[rank]
        hit = [x for x in stack["libraries"] if x["name"] == lib]
        if hit:
            hit[0]["version"] = ver
        else:
            stack["libraries"].append({"name": lib, "version": ver, "origin": "/opt/other"})
        sd = canonical_digest(stack)
    doc = {"schema": "gpuvet.fleet.node", "schema_version": 1,
           "gpuvet_version": result.get("gpuvet_version", "?"), "node": name, "rank": rank,
           "size": a.nodes, "launcher": "none", "job": "test.0", "tier": "standard",
           "started": result.get("created"), "seconds": 1.5, "status": "ran", "reason": None,
           "hardware": {"device": "cpu", "model": model.get(rank, desc.get("name", "cpu")),
                        "compute_units": int(desc.get("threads", 1)), "driver": "none"},
           "stack_digest": sd, "stack": stack, "runs": [],
           "outputs": "present" if st else "absent"}
    if rank in cannot:
        doc.update(status="could_not_run", reason=cannot[rank], runs=[])
        del doc["hardware"]
    st_bytes = st[0] if st else None
    for rep in range(1, a.repeats + 1 if rank not in cannot else 1):
        cases = copy.deepcopy(base_cases)
        for c in cases:
            for case, n in split:
                if c["id"] == case and rank < n and c["output_digest"]:
                    c["output_digest"] = hashlib.sha256(b"split%d" % rank).hexdigest()
            if c["id"] in nondet.get(rank, ()):
                c["deterministic"] = False
                c["output_digest"] = hashlib.sha256(b"nondet%d" % rep).hexdigest()
            for case, which in flips.get(rank, []):
                if c["id"] != case or (which and which != rep):
                    continue
                if st:
                    flipped, c["output_digest"] = flip_bit(st[0], st[1], st[2], case)
                    st_bytes = flipped
                else:
                    c["output_digest"] = hashlib.sha256(b"flip" + c["id"].encode()).hexdigest()
        tflops = 1.0 + 0.002 * ((rank * 7) % 5 - 2)
        doc["runs"].append({"repeat": rep, "hot_seconds": 0, "cases": cases,
                            "bench": [{"id": "gemm.f32.1024", "unit": "TFLOP/s",
                                       "median": round(tflops * slow.get(rank, 1.0), 6),
                                       "spread": 0.01}]})
    with open(os.path.join(a.outdir, "nodes", "%s.r%d.json" % (name, rank)), "w") as f:
        json.dump(doc, f)
    if st and rank not in cannot:
        with open(os.path.join(a.outdir, "outputs", "%s.r%d.safetensors" % (name, rank)), "wb") as f:
            f.write(st_bytes)


if __name__ == "__main__":
    sys.exit(main())
