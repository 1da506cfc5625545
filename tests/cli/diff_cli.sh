#!/usr/bin/env bash
# gpuvet diff on hand-written snapshot inputs (tests/data/diff): every layer,
# ranking, kinds, not-comparable sections, the environment allowlist, exit codes
# and errors. The expected changes below are written from the inputs by hand.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_cmd python3 "python3 is needed to read the JSON"
D=$GV_SRC/tests/data/diff
gv_workdir T

# identical snapshots: exit 0, no changes
"$GPUVET" diff "$D/before.json" "$D/before.json" >"$T/same.txt" || fail "self diff exit $?"
grep -q "no differences" "$T/same.txt" || fail "self diff does not say 'no differences'"

# before -> after: exit 1 and the JSON document
set +e
"$GPUVET" diff --json "$D/before.json" "$D/after.json" >"$T/d.json"; rc=$?
"$GPUVET" diff "$D/before.json" "$D/after.json" >"$T/d.txt"; rc_text=$?
set -e
[[ $rc == 1 && $rc_text == 1 ]] || fail "exit codes $rc/$rc_text, expected 1"

python3 - "$T/d.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["schema"] == "gpuvet.diff" and d["schema_version"] == 1, d.get("schema")
ch = d["changes"]
def find(layer, kind, subject, before=None, after=None):
    for c in ch:
        if c["layer"] == layer and c["kind"] == kind and c["subject"] == subject:
            if before is not None and c["before"] != before: continue
            if after is not None and c["after"] != after: continue
            return c
    raise AssertionError(f"missing {layer} {kind} {subject} {before} -> {after}")
expected = [
 ("driver", "changed", "kernel module amdgpu", "6.1.5", "6.2.4"),
 ("driver", "changed", "dkms package amdgpu-dkms", "1:6.1.5.50700-1652687.22.04", "1:6.2.4.60000-1697730.22.04"),
 ("runtime", "added", "hip-runtime (/opt/rocm-6.0.0)", None, "6.0.32830"),
 ("runtime", "changed", "hip-runtime (/opt/rocm-5.7.0)", "hip-runtime-amd", "hip-runtime-amd5.7.0"),
 ("runtime", "changed", "hsa-runtime (/opt/rocm-5.7.0)", "aaaa00000000", "bbbb00000000"),
 ("runtime", "mixed", "librccl.so.1", None, None),
 ("runtime", "added", "rocm amd install /opt/rocm-6.0.0", None, "6.0.0 (default)"),
 ("math", "removed", "miopen (/opt/rocm-5.7.0)", "1.0.50700", None),
 ("math", "unowned", "/opt/rocm-5.7.0/lib/librocblas.so.4.0.0", None, "owned by no package"),
 ("math", "added", "rocblas (/opt/rocm-6.0.0)", None, "4.0.0"),
 ("math", "added", "rccl (/opt/rocm-6.0.0)", None, "1.0.60000"),
 ("framework", "changed", "torch version (/home/u/venv)", "2.2.2+rocm5.7", "2.3.0+rocm6.0"),
 ("framework", "changed", "torch hip (/home/u/venv)", "5.7.31921-d1770ee1b", "6.0.32830-d62f6a171"),
 ("framework", "changed", "torch bundled rocblas (/home/u/venv)", "librocblas.so.3", "librocblas.so.4"),
 ("framework", "removed", "torch GPU target gfx900 (/home/u/venv)", "gfx900", None),
 ("framework", "removed", "torch GPU target gfx906 (/home/u/venv)", "gfx906", None),
 ("framework", "added", "torch GPU target gfx942 (/home/u/venv)", None, "gfx942"),
 ("framework", "changed", "pip pytorch-triton-rocm (/home/u/venv)", "2.2.0", "2.3.0"),
 ("framework", "removed", "python environment /opt/old-env", None, None),
 ("framework", "added", "python environment /home/u/venv2", None, None),
 ("loader", "changed", "/opt/rocm link", "/opt/rocm-5.7.0", "/opt/rocm-6.0.0"),
 ("loader", "changed", "alternative rocm", "/opt/rocm-5.7.0", "/opt/rocm-6.0.0"),
 ("loader", "added", "LD_LIBRARY_PATH (loader)", None, "/opt/rocm-5.7.0/lib"),
 ("loader", "removed", "HSA_OVERRIDE_GFX_VERSION (environment)", "10.3.0", None),
 ("loader", "changed", "MIOPEN_FIND_MODE (environment)", "FAST", "NORMAL"),
 ("loader", "added", "HSA_AUTH_TOKEN (environment)", None, "(value withheld)"),
 ("loader", "added", "HIP_API_KEY (environment)", None, "set (value withheld)"),
 ("loader", "added", "profile script /etc/profile.d/zz-rocm-ldpath.sh", None, "sets LD_LIBRARY_PATH"),
 ("loader", "removed", "loader resolves libMIOpen.so.1", "/opt/rocm-5.7.0/lib/libMIOpen.so.1.0.50700", None),
 ("loader", "added", "loader resolves librocblas.so.4", None, "/opt/rocm-5.7.0/lib/librocblas.so.4.0.0"),
 ("packages", "changed", "hip-runtime-amd", "5.7.31921.50700-63~22.04", "6.0.32830.60000-91~22.04"),
 ("packages", "added", "hip-runtime-amd5.7.0", None, "5.7.31921.50700-63~22.04"),
 ("packages", "changed", "rocm-core", "5.7.0.50700-63~22.04", "6.0.0.60000-91~22.04"),
 ("packages", "changed", "curl", "7.81.0-1ubuntu1.15", "7.81.0-1ubuntu1.14"),
 ("packages", "changed", "libc6:amd64", "2.35-0ubuntu3.6", "2.35-0ubuntu3.8"),
 ("packages", "added", "new-tool", None, "2.0-1"),
]
for e in expected:
    find(*e)
# details that carry meaning
assert find("packages", "changed", "curl")["detail"] == "downgraded"
assert "now held" in find("packages", "changed", "rocm-core")["detail"]
assert "upgraded" in find("packages", "changed", "hip-runtime-amd")["detail"]
m = find("runtime", "mixed", "librccl.so.1")
assert "/opt/rocm-5.7.0/lib/librccl.so.1.0.50700" in m["detail"] and "6.0" in m["after"], m
# nothing that did not change: numpy, libc6:i386, old-tool (config-files on both sides),
# unchanged 5.7 rocblas/comgr, nvidia module (not loaded on both sides)
subjects = [c["subject"] for c in ch]
for s in ["pip numpy (/home/u/venv)", "libc6:i386", "old-tool", "rocblas (/opt/rocm-5.7.0)",
          "comgr (/opt/rocm-5.7.0)", "kernel module nvidia", "ROCM_PATH (environment)"]:
    assert s not in subjects, f"unexpected change for {s}"
# the unowned stray is reported once, as unowned, not also as added
assert not any(c["kind"] == "added" and "librocblas.so.4.0.0" in (c.get("detail") or "")
               and c["subject"].startswith("rocblas (/opt/rocm-5.7.0)") for c in ch)
# ranks: one per layer, in order, never decreasing; GPU packages before the others
layers = {"driver": 1, "runtime": 2, "math": 3, "framework": 4, "loader": 5, "packages": 6}
ranks = [c["rank"] for c in ch]
assert ranks == sorted(ranks), ranks
assert all(layers[c["layer"]] == c["rank"] for c in ch)
pk = [c["subject"] for c in ch if c["layer"] == "packages"]
assert pk.index("rocm-core") < pk.index("curl"), pk
assert all(set(c) >= {"layer", "rank", "kind", "subject", "before", "after"} for c in ch)
assert d["summary"]["changes"] == len(ch)
assert d["summary"]["by_layer"]["driver"] == 2, d["summary"]
# gpus was not collected on either side: not comparable, and no change about it
nc = {n["section"]: n for n in d["not_comparable"]}
assert "gpus" not in [c["layer"] for c in ch]
print("json ok:", len(ch), "changes")
PY

# secrets: an allowlisted-but-secret value and a non-allowlisted variable never appear
for f in "$T/d.json" "$T/d.txt"; do
    ! grep -q "s3cr3t-hsa-value" "$f" || fail "secret value copied into $f"
    ! grep -q "AWS_SECRET_ACCESS_KEY\|hunter2" "$f" || fail "non-allowlisted variable in $f"
done
# text: grouped headings in rank order, old -> new on one line
grep -n "^kernel driver$\|^GPU runtime$\|^math and communication libraries$\|^framework\|^loader and environment$\|^packages and GPU tools$" \
    "$T/d.txt" | cut -d: -f1 | sort -n -c || fail "text headings out of order"
grep -q "~ kernel module amdgpu: 6.1.5 -> 6.2.4" "$T/d.txt" || fail "text line for amdgpu"
! grep -q $'\033' "$T/d.txt" || fail "colour codes when not a terminal"

# a section collected on one side only is "not comparable", never "removed"
python3 - "$D/after.json" "$T/nopkg.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["packages"] = {"collected": False, "source": "/var/lib/dpkg/status", "reason": "permission denied"}
d["python"] = {"collected": False, "source": "PATH", "reason": "hand-written: not collected"}
json.dump(d, open(sys.argv[2], "w"))
PY
set +e; "$GPUVET" diff --json "$D/before.json" "$T/nopkg.json" >"$T/nc.json"; rc=$?; set -e
[[ $rc == 1 ]] || fail "exit $rc with not-comparable sections"
python3 - "$T/nc.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert not any(c["layer"] in ("packages", "framework") for c in d["changes"]), "changes from uncollected sections"
assert any(c["layer"] == "driver" for c in d["changes"]), "collected sections are still compared"
nc = {n["section"]: n for n in d["not_comparable"]}
assert nc["packages"]["before"] is True and nc["packages"]["after"] is False, nc
assert "permission denied" in nc["packages"]["reason"], nc
assert "python" in nc
PY

# errors: corrupt, truncated, wrong schema, missing file -> 3 naming the file; usage -> 2
printf '{"schema": "gpuvet.snapshot", "schema_version": 1, "host": {' >"$T/trunc.json"
printf '\x00\xff garbage' >"$T/bin.json"
printf '{"schema": "gpuvet.result", "schema_version": 1}\n' >"$T/other.json"
printf '{"schema": "gpuvet.snapshot", "schema_version": 99}\n' >"$T/newer.json"
ln -s loop2.json "$T/loop1.json"; ln -s loop1.json "$T/loop2.json"
mkdir "$T/dir.json"
: >"$T/empty.json"
for f in trunc bin other newer missing loop1 dir empty; do
    set +e; "$GPUVET" diff "$D/before.json" "$T/$f.json" >/dev/null 2>"$T/err"; rc=$?; set -e
    [[ $rc == 3 ]] || fail "$f.json: exit $rc, expected 3"
    grep -q "$f.json" "$T/err" || fail "$f.json: message does not name the file: $(cat "$T/err")"
done
set +e
"$GPUVET" diff "$D/before.json" >/dev/null 2>&1; r1=$?
"$GPUVET" diff --bogus "$D/before.json" "$D/after.json" >/dev/null 2>&1; r2=$?
"$GPUVET" diff -o >/dev/null 2>&1; r3=$?
set -e
[[ $r1 == 2 && $r2 == 2 && $r3 == 2 ]] || fail "usage errors exit $r1/$r2/$r3, expected 2"
"$GPUVET" diff --help | grep -q "usage: gpuvet diff" || fail "--help"

# -o writes the same document atomically
set +e; "$GPUVET" diff -o "$T/out.json" "$D/before.json" "$D/after.json" >/dev/null; set -e
cmp -s <(python3 -c 'import json,sys; print(json.dumps(json.load(open(sys.argv[1]))["changes"]))' "$T/out.json") \
       <(python3 -c 'import json,sys; print(json.dumps(json.load(open(sys.argv[1]))["changes"]))' "$T/d.json") \
    || fail "-o document differs from --json"
# Debian has two Python environments under the prefix /usr (dist-packages, where
# python3-torch lives, and python3.N/dist-packages): they are told apart by their
# site-packages directory, so a snapshot diffed against itself shows nothing, and a
# change of torch there is named with the directory
python3 - "$D/before.json" "$T" <<'PY'
import json, sys, copy
d = json.load(open(sys.argv[1]))
env = lambda sp, pk, t=None: dict({"prefix": "/usr", "site_packages": sp, "python_version": "3.11",
                                   "interpreter": "/usr/bin/python3", "packages": pk}, **({"torch": t} if t else {}))
torch = {"version": "1.13.0a0", "cuda": None, "hip": None, "build": "cpu"}
d["python"]["environments"] = [env("/usr/lib/python3/dist-packages", {"torch": {"version": "1.13.0a0"}}, torch),
                               env("/usr/lib/python3.11/dist-packages", {})]
json.dump(d, open(sys.argv[2] + "/two-usr-a.json", "w"))
e = copy.deepcopy(d)
e["python"]["environments"][0]["torch"]["version"] = "2.6.0"
json.dump(e, open(sys.argv[2] + "/two-usr-b.json", "w"))
PY
"$GPUVET" diff "$T/two-usr-a.json" "$T/two-usr-a.json" >"$T/two-usr-same.txt" ||
    fail "two environments under /usr diffed against themselves: $(cat "$T/two-usr-same.txt")"
set +e; "$GPUVET" diff "$T/two-usr-a.json" "$T/two-usr-b.json" >"$T/two-usr.txt"; rc=$?; set -e
[[ $rc == 1 ]] || fail "torch 1.13 -> 2.6 under /usr: exit $rc"
grep -q "torch version (/usr/lib/python3/dist-packages).*1.13.0a0.*2.6.0" "$T/two-usr.txt" ||
    fail "the torch change is not named with its directory: $(cat "$T/two-usr.txt")"
! grep -q "python3.11/dist-packages" "$T/two-usr.txt" || fail "the other /usr environment was reported"
echo "diff_cli: ok"
