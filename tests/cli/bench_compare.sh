#!/usr/bin/env bash
# gpuvet compare of two gpuvet.bench documents, and gpuvet ab --bench. The documents are
# real CPU bench runs; the changes judged are edits made here with python (samples scaled,
# statuses changed, a variable, a library and a clock changed in B), so nothing depends on
# how fast this machine is or on two runs measuring alike.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
gv_workdir T && cd "$T"

rc=0
"$GPUVET" bench --device cpu --quick --only 'memory.*,gemm.*' -o run1.json >/dev/null 2>&1 || rc=$?
[[ $rc == 0 || $rc == 1 ]] || fail "bench run 1: exit $rc"
rc=0
"$GPUVET" bench --device cpu --quick --only 'memory.*,gemm.*' -o run2.json >/dev/null 2>&1 || rc=$?
[[ $rc == 0 || $rc == 1 ]] || fail "bench run 2: exit $rc"

# two live runs: whatever the machine did, the comparison reads them and says 0 or 1
rc=0
"$GPUVET" compare run1.json run2.json >live.txt || rc=$?
[[ $rc == 0 || $rc == 1 ]] || fail "compare of two live runs: exit $rc"
grep -q "regressed/improved: the change is larger than the noise" live.txt || fail "no rule line"

# The edits. base: run1 with every ok result's samples set to its median times fixed factors
# (spread 2%), so the judgement of each edit is known exactly.
python3 - <<'PY' || fail "making the edited documents"
import json, copy
a = json.load(open("run1.json"))
F = [0.99, 1.0, 1.01, 1.0, 0.995]
for r in a["results"]:
    if r["status"] == "ok":
        m = r["value"]
        r["samples"] = [m * f for f in F]
        r["value"], r["min"], r["max"] = m, m * 0.99, m * 1.01
        r["spread"] = 0.02
ids = [r["id"] for r in a["results"] if r["status"] == "ok"]
gemm = [i for i in ids if i.startswith("gemm.")]
mem = [i for i in ids if i.startswith("memory.")]
assert gemm and len(mem) >= 3, ids
a["conditions"]["before"]["sm_clock_mhz"] = 1980
json.dump(a, open("base.json", "w"), indent=1)
open("ids", "w").write("%s\n%s\n%s\n%s\n" % (gemm[0], mem[0], mem[1], mem[2]))

def scaled(doc, rid, k):
    d = copy.deepcopy(doc)
    for r in d["results"]:
        if r["id"] == rid:
            r["samples"] = [s * k for s in r["samples"]]
            for key in ("value", "min", "max"):
                r[key] *= k
    return d

def res(d, rid):
    return next(r for r in d["results"] if r["id"] == rid)

# a clear regression of the first GEMM, with a variable, a library and the clock changed in B
reg = scaled(a, gemm[0], 0.5)
reg["snapshot"]["environment"]["variables"]["OPENBLAS_NUM_THREADS"] = "1"
libs = reg["snapshot"]["libraries"]["items"]
if not libs:
    libs.append({"name": "cublas", "path": "/x/libcublas.so.13", "version": "13.1.0.3"})
    a2 = copy.deepcopy(a)
    a2["snapshot"]["libraries"]["items"] = copy.deepcopy(libs)
    json.dump(a2, open("base.json", "w"), indent=1)
    a = a2
libs[0]["version"] = "0.0.0-edited"
reg["conditions"]["before"]["sm_clock_mhz"] = 1410
json.dump(reg, open("reg.json", "w"), indent=1)
json.dump(scaled(a, gemm[0], 0.99), open("noise.json", "w"), indent=1)   # within the noise
json.dump(scaled(a, mem[0], 2.0), open("better.json", "w"), indent=1)    # improved
# lower is better: the same doubling is a regression
lo_a, lo_b = copy.deepcopy(a), scaled(a, mem[0], 2.0)
res(lo_a, mem[0])["better"] = res(lo_b, mem[0])["better"] = "lower"
json.dump(lo_a, open("lower_a.json", "w"), indent=1)
json.dump(lo_b, open("lower_b.json", "w"), indent=1)
# ok -> failed, and an id only in A (B lacks mem[2])
f = copy.deepcopy(a)
r = res(f, mem[1])
for k in ("value", "min", "max", "spread", "samples"):
    r.pop(k, None)
r["status"], r["reason"] = "failed", "12 of 4096 sampled results wrong"
f["results"] = [x for x in f["results"] if x["id"] != mem[2]]
json.dump(f, open("failed.json", "w"), indent=1)
g = copy.deepcopy(a)
g["results"] = [x for x in g["results"] if x["id"] != mem[2]]
json.dump(g, open("fewer.json", "w"), indent=1)
# overlapping ranges: 10% slower but one sample of B inside A's range -> within noise
o = scaled(a, mem[0], 0.9)
res(o, mem[0])["samples"][0] = res(a, mem[0])["min"]
res(o, mem[0])["max"] = res(a, mem[0])["min"]
json.dump(o, open("overlap.json", "w"), indent=1)
# another device and mode: notes, not errors
d = copy.deepcopy(a)
d["device"]["name"] = "Some Other CPU"
d["mode"] = "default"
json.dump(d, open("otherdev.json", "w"), indent=1)
PY
G=$(sed -n 1p ids); M0=$(sed -n 2p ids); M1=$(sed -n 3p ids); M2=$(sed -n 4p ids)

# identical documents: exit 0, nothing changed
rc=0; "$GPUVET" compare base.json base.json >same.txt || rc=$?
[[ $rc == 0 ]] || fail "base vs base: exit $rc"
grep -q "No result changed beyond its noise" same.txt || fail "base vs base: says a change"

# the regression: exit 1, the id named, the variable, library and clock named as causes
rc=0; "$GPUVET" compare base.json reg.json >reg.txt || rc=$?
[[ $rc == 1 ]] || { cat reg.txt; fail "regression: exit $rc, not 1"; }
grep -E "^$G +regressed" reg.txt >/dev/null || { cat reg.txt; fail "regressed id $G not named"; }
grep -q "OPENBLAS_NUM_THREADS" reg.txt || fail "the changed variable is not named as a cause"
grep -q "0.0.0-edited" reg.txt || fail "the changed library is not named as a cause"
grep -q "sm_clock_mhz: 1980 -> 1410 (lower in B)" reg.txt || fail "the lower clock is not named"
rc=0; "$GPUVET" compare base.json reg.json --json --junit reg.xml >reg_c.json || rc=$?
[[ $rc == 1 ]] || fail "regression --json: exit $rc"
python3 - "$G" <<'PY' || fail "the JSON comparison"
import json, sys
g = sys.argv[1]
d = json.load(open("reg_c.json"))
assert d["schema"] == "gpuvet.compare" and d["kind"] == "bench" and d["flagged"] is True
r = {x["id"]: x for x in d["results"]}
assert r[g]["change"] == "regressed", r[g]
assert abs(r[g]["ratio"] - 0.5) < 1e-9 and abs(r[g]["noise"] - 0.02) < 1e-9, r[g]
assert r[g]["ranges_apart"] is True
assert d["summary"]["regressed"] == 1, d["summary"]
others = [x for x in d["results"] if x["id"] != g]
assert all(x["change"] == "within_noise" and x["ratio"] == 1 for x in others), others
c = {x["name"]: x for x in d["causes"]}
assert c["OPENBLAS_NUM_THREADS"]["kind"] == "environment"
assert c["OPENBLAS_NUM_THREADS"]["before"] is None and c["OPENBLAS_NUM_THREADS"]["after"] == "1"
assert c["OPENBLAS_NUM_THREADS"]["rank"] == 0 and c["OPENBLAS_NUM_THREADS"]["touched_results"] == g
assert c["sm_clock_mhz"]["rank"] == 0 and c["sm_clock_mhz"]["kind"] == "conditions"
lib = [x for x in d["causes"] if x["kind"] == "library"]
assert lib and "0.0.0-edited" in lib[0]["after"] and lib[0]["change"] == "version changed", lib
assert lib[0]["rank"] == 3, lib  # a CUDA library does not touch an OpenBLAS GEMM
ranks = [x["rank"] for x in d["causes"]]
assert ranks == sorted(ranks), ranks
PY
grep -q "<failure" reg.xml || fail "junit: no failure"
grep -q "name=\"$G\"" reg.xml || fail "junit: the regressed id is not a testcase"

# documents whose keys were written in another order ("schema" not first) are still found
python3 -c "
import json
for f in ('base', 'reg'):
    json.dump(json.load(open(f + '.json')), open(f + '_sorted.json', 'w'), sort_keys=True)"
rc=0; "$GPUVET" compare base_sorted.json reg_sorted.json >sorted.txt || rc=$?
[[ $rc == 1 ]] || fail "sorted keys: exit $rc, not 1"
grep -E "^$G +regressed" sorted.txt >/dev/null || fail "sorted keys: regressed id not named"

# within the noise, improved, overlap: exit 0
for f in noise better overlap; do
  rc=0; "$GPUVET" compare base.json $f.json --json >$f.out || rc=$?
  [[ $rc == 0 ]] || fail "$f: exit $rc, not 0"
done
python3 - "$G" "$M0" <<'PY' || fail "within noise / improved / overlap"
import json, sys
g, m0 = sys.argv[1:]
ch = lambda f, i: next(x for x in json.load(open(f))["results"] if x["id"] == i)
assert ch("noise.out", g)["change"] == "within_noise"
assert ch("better.out", m0)["change"] == "improved" and ch("better.out", m0)["ratio"] == 2
x = ch("overlap.out", m0)
assert x["change"] == "within_noise" and x["ranges_apart"] is False, x
PY
rc=0; "$GPUVET" compare base.json better.json >better.txt || rc=$?
grep -E "^$M0 +improved" better.txt >/dev/null || fail "improved not listed"
rc=0; "$GPUVET" compare base.json noise.json >noise.txt || rc=$?
grep -E "^$G " noise.txt >/dev/null && fail "a within-noise result is listed without --all"
"$GPUVET" compare base.json noise.json --all | grep -E "^$G +within_noise" >/dev/null ||
  fail "--all does not list the within-noise result"

# lower is better: doubling is a regression
rc=0; "$GPUVET" compare lower_a.json lower_b.json --json >lower.out || rc=$?
[[ $rc == 1 ]] || fail "lower-is-better doubling: exit $rc, not 1"
python3 -c "
import json; x=[r for r in json.load(open('lower.out'))['results'] if r['id']=='$M0'][0]
assert x['change']=='regressed' and x['ratio']==0.5, x" || fail "lower is better: ratio"

# ok -> failed is a regression; an id only in A is listed as such
rc=0; "$GPUVET" compare base.json failed.json >failed.txt || rc=$?
[[ $rc == 1 ]] || fail "ok -> failed: exit $rc, not 1"
grep -E "^$M1 +newly_failing" failed.txt >/dev/null || fail "newly failing id not named"
grep -q "B's result is wrong: 12 of 4096" failed.txt || fail "the failure is not said"
grep -E "^$M2 +only_before" failed.txt >/dev/null || fail "id only in A not listed"
rc=0; "$GPUVET" compare base.json fewer.json >fewer.txt || rc=$?
[[ $rc == 0 ]] || fail "an id only in A: exit $rc, not 0"
rc=0; "$GPUVET" compare fewer.json base.json >more.txt || rc=$?
grep -E "^$M2 +only_after" more.txt >/dev/null || fail "id only in B not listed"

# different device and mode: said, compared
rc=0; "$GPUVET" compare base.json otherdev.json >otherdev.txt || rc=$?
[[ $rc == 0 ]] || fail "other device: exit $rc"
grep -q "note: different devices: .* in A, Some Other CPU in B" otherdev.txt || fail "device note"
grep -q "note: different modes: quick in A, default in B" otherdev.txt || fail "mode note"

# bad input: exit 3, the file and the field named, nothing written
head -c 3000 base.json >trunc.json
python3 - <<'PY'
import json
a = json.load(open("base.json"))
def w(name, d, **kw):
    json.dump(d, open(name, "w"), **kw)
b = dict(a); b["schema_version"] = 2; w("ver.json", b)
b = dict(a); b["results"] = {"x": 1}; w("notarray.json", b)
b = json.loads(json.dumps(a)); b["results"][0]["value"] = float("nan"); w("nan.json", b)
b = json.loads(json.dumps(a)); b["results"][0]["value"] = "nan"; w("nanstr.json", b)
b = json.loads(json.dumps(a)); b["results"][0]["samples"][1] = "fast"; w("samples.json", b)
b = json.loads(json.dumps(a)); b["results"].append(b["results"][0]); w("dup.json", b)
w("other.json", {"schema": "gpuvet.snapshot", "schema_version": 1})
PY
check_bad() { # file, expected text
  local rc=0
  rm -f bad.xml
  "$GPUVET" compare base.json "$1" --junit bad.xml >bad.out 2>bad.err || rc=$?
  [[ $rc == 3 ]] || fail "$1: exit $rc, not 3"
  grep -q "$1" bad.err || fail "$1: the message does not name the file: $(cat bad.err)"
  grep -q "$2" bad.err || fail "$1: the message does not say '$2': $(cat bad.err)"
  [[ ! -e bad.xml && ! -s bad.out ]] || fail "$1: something was written on failure"
}
check_bad trunc.json "premature end of input\|end of file\|unexpected"
check_bad ver.json "version 2"
check_bad notarray.json "results is not an array"
check_bad nan.json "line"
check_bad nanstr.json "finite value"
check_bad samples.json "samples\[1\]"
check_bad dup.json "appears twice"
check_bad other.json "not a gpuvet bench result (schema gpuvet.snapshot)"
rc=0; "$GPUVET" compare other.json base.json 2>bad.err >/dev/null || rc=$?
[[ $rc == 3 ]] && grep -q other.json bad.err || fail "other schema first: exit $rc"
rc=0; "$GPUVET" compare base.json missing.json 2>bad.err >/dev/null || rc=$?
[[ $rc == 3 ]] || fail "missing file: exit $rc"

# gpuvet ab --bench: each side a real bench run in its own stack; whatever the timings, the
# variable set for B is named, both documents are kept
rc=0
"$GPUVET" ab --bench --quick --device cpu --only 'memory.copy.*' --a system \
  --b env=OPENBLAS_NUM_THREADS=1 --keep kd --json >ab.json 2>ab.err || rc=$?
[[ $rc == 0 || $rc == 1 ]] || { cat ab.err; fail "ab --bench: exit $rc"; }
[[ -s kd/a.json && -s kd/b.json ]] || fail "ab --bench: the documents were not kept"
python3 - <<'PY' || fail "ab --bench output"
import json
d = json.load(open("ab.json"))
assert d["kind"] == "bench" and d["results"], d
assert all(r["id"].startswith("memory.copy.") for r in d["results"])
assert any(c["name"] == "OPENBLAS_NUM_THREADS" and c["after"] == "1" for c in d["causes"]), d["causes"]
b = json.load(open("kd/b.json"))
assert b["schema"] == "gpuvet.bench" and b["mode"] == "quick"
PY
rc=0; "$GPUVET" ab --bench --a python=python3 --b system 2>/dev/null || rc=$?
[[ $rc == 2 ]] || fail "ab --bench with python=: exit $rc, not 2"
rc=0; "$GPUVET" ab --quick --a system --b system 2>/dev/null || rc=$?
[[ $rc == 2 ]] || fail "ab --quick without --bench: exit $rc, not 2"
echo ok
