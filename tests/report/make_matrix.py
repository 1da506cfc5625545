#!/usr/bin/env python3
"""Writes a gpuvet.matrix document as the contract between `gpuvet matrix --json`
and `gpuvet report` defines it (docs/report.md, "Version matrix"), for tests of
the report while the history command is built elsewhere:

  make_matrix.py OUT.json [HOSTILE]

Three rows (newest first), null optional fields, timelines of 1, 7 and 100 runs
with passes and failures; HOSTILE, when given, is used as a machine name and a
torch version, to test escaping."""
import json
import sys

out = sys.argv[1]
hostile = sys.argv[2] if len(sys.argv) > 2 else None


def ts(day, hour):
    return "2026-11-%02dT%02d:00:00Z" % (day, hour)


def timeline(n, fail_every, machine, first_run):
    return [{"time": ts(1 + i // 24 % 28, i % 24), "machine": machine, "run": first_run + i,
             "verdict": "fail" if fail_every and i % fail_every == fail_every - 1 else "pass"} for i in range(n)]


rows = [
    {"gpu_model": "AMD Instinct MI250X", "gpu_arch": "gfx90a", "kernel": "6.8.0-45-generic", "driver": "6.8.5",
     "rocm": "6.4.3", "cuda": None, "torch": hostile or "2.6.0+rocm6.4", "runs": 100, "machines": 3,
     "passes": 80, "failures": 20, "first_seen": ts(1, 0), "last_seen": ts(28, 3),
     "worst": {"case": "gemm.f16acc32.64x64x8192.uniform.s1", "bits_lost": 3.5, "run": 417},
     "timeline": timeline(100, 5, hostile or "node-a", 318)},
    {"gpu_model": "NVIDIA H200", "gpu_arch": "sm_90", "kernel": None, "driver": "580.65.06", "rocm": None,
     "cuda": "13.0.96", "torch": "2.11.0+cu130", "runs": 7, "machines": 1, "passes": 7, "failures": 0,
     "first_seen": ts(20, 1), "last_seen": ts(27, 9), "worst": {"case": None, "bits_lost": None, "run": None},
     "timeline": timeline(7, 0, "gpu-h200-1", 40)},
    {"gpu_model": "AMD Instinct MI250X", "gpu_arch": "gfx90a", "kernel": "6.5.0-35-generic", "driver": "6.3.6",
     "rocm": "5.7.1", "cuda": None, "torch": None, "runs": 1, "machines": 1, "passes": 0, "failures": 1,
     "first_seen": ts(2, 5), "last_seen": ts(2, 5),
     "worst": {"case": "conv2d.f16.2x16x32x32-k32x3x3-s1p1.normal.s1", "bits_lost": 7.25, "run": 3},
     "timeline": timeline(1, 1, "node-b", 3)},
]
doc = {"schema": "gpuvet.matrix", "schema_version": 1, "db": "postgresql://gpuvet@db.example/gpuvet",
       "generated": "2026-11-28T10:00:00Z", "filters": {"gpu": None, "since": "2026-11-01T00:00:00Z", "torch": None},
       "rows": rows}
json.dump(doc, open(out, "w"), indent=1)
