#!/usr/bin/env python3
"""Edits real gpuvet documents to hold hostile strings where the inspected
machine puts its own text (package names and versions, library paths,
environment values, Python prefixes, the OS name, model module names):

  hostile.py SNAPSHOT.json CAPTURE-COMPARE.json OUTDIR

writes OUTDIR/snapshot.json, OUTDIR/capture-compare.json and OUTDIR/strings.json
(the strings, which the page must show as text and never run)."""
import json
import os
import sys

snap_in, cc_in, out = sys.argv[1:4]
H = [
    "<script>window.__gv_pwned=1</script>",
    "\"><img src=x onerror=\"window.__gv_pwned=2\">",
    "'><svg onload=window.__gv_pwned=3>",
    "</title><script>window.__gv_pwned=4</script>",
    "</desc></svg><iframe src=\"http://203.0.113.7/\"></iframe>",
    "&lt;b&gt;not bold&lt;/b&gt; & <!-- -->",
]
s = json.load(open(snap_in))
pk = next((p for p in s["packages"]["items"] if p.get("gpu")), s["packages"]["items"][0])
pk["gpu"] = True
pk["name"] = "libfoo" + H[0]
pk["version"] = H[1]
pk["arch"] = H[5]
pk["description"] = H[0]  # not a field gpuvet writes; a reader must not trip over it either
s["libraries"]["items"].append({"name": "rocblas" + H[2], "path": "/opt/rocm/lib/librocblas.so" + H[3],
                                "origin": "/opt/rocm", "origin_kind": "rocm", "version": H[4],
                                "package": H[1], "unowned": False})
s["environment"]["variables"]["HSA_OVERRIDE_GFX_VERSION"] = H[3]
s["host"]["os"]["pretty_name"] = "Debian " + H[4]
env = s["python"]["environments"][0]
env["prefix"] = "/venv" + H[2]
if env.get("torch"):
    env["torch"]["version"] = "2.6.0" + H[0]
json.dump(s, open(os.path.join(out, "snapshot.json"), "w"))
cc = json.load(open(cc_in))
for i, op in enumerate(cc["ops"]):
    op["module"] = "head.fc" + H[3 if i % 2 else 0]
fd = cc["summary"].get("first_difference")
if fd:
    fd["module"] = H[3]
    fd["name"] = "aten.gelu" + H[1]
cc["before"] = "/tmp/a" + H[2] + ".gvcap"
json.dump(cc, open(os.path.join(out, "capture-compare.json"), "w"))
json.dump(H, open(os.path.join(out, "strings.json"), "w"))
