#!/bin/bash
# Ten probes of an unchanged stack show no fingerprint change, even on a device
# whose row sums race (issue 35: on an H100 "deterministic" flipped between
# probes). GPUVET_TEST_RACY_SUM=SEED (a testing aid of the CPU backend) makes
# one long row sum in about eight change its lowest bit; each probe gets its
# own seed, as each GPU run gets its own timing. The test asserts that the
# emulation really makes the old yes/no flip (some probes say yes, some no),
# and that compare still reports nothing, pair by pair; a route that races in
# most runs is still reported.
set -u
. "$(dirname "$0")/lib.sh"
gv_workdir T
for s in 1 2 3 4 5 6 7 8 9 10; do
  GPUVET_TEST_RACY_SUM=$s "$GPUVET" probe --device cpu --dtype sum.f32 --json -o "$T/p$s.json" \
    > "$T/p$s.out" 2>&1 || { cat "$T/p$s.out"; fail "probe $s"; }
done
python3 - "$T" <<'PY' || fail "the emulation did not make the old yes/no flip"
import json, sys
vals = set()
for s in range(1, 11):
    d = json.load(open(f"{sys.argv[1]}/p{s}.json"))
    assert d["device"]["test_racy_sum"] == s, d["device"]
    p = d["routes"][0]["precisions"][0]["properties"]["deterministic"]
    assert p["runs"] == 10 and 0 <= p["differing"] < 10, p
    vals.add(p["value"])
assert vals == {"yes", "no"}, vals
PY
for i in 1 2 3 4 5 6 7 8 9 10; do
  for j in 1 2 3 4 5 6 7 8 9 10; do
    [ "$i" -lt "$j" ] || continue
    "$GPUVET" compare "$T/p$i.json" "$T/p$j.json" > "$T/c.out" 2>&1; rc=$?
    [ $rc -eq 0 ] || { cat "$T/c.out"; fail "probes $i and $j: compare exit $rc (a fingerprint change on an unchanged stack)"; }
  done
done
grep -q "No property changed" "$T/c.out" || fail "compare of two probes says nothing changed"
# A route that now differs in nine runs of ten is a change, with the counts:
# against a probe that saw none, with the same document made to show nine.
base=$(python3 - "$T" <<'PY'
import json, sys
for s in range(1, 11):
    d = json.load(open(f"{sys.argv[1]}/p{s}.json"))
    if d["routes"][0]["precisions"][0]["properties"]["deterministic"]["value"] == "yes":
        print(f"{sys.argv[1]}/p{s}.json"); break
PY
)
[ -n "$base" ] || fail "no probe without an odd run"
python3 - "$base" "$T/racy.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
p = d["routes"][0]["precisions"][0]["properties"]["deterministic"]
p.update(value="no", differing=9)
json.dump(d, open(sys.argv[2], "w"))
PY
expect_rc 1 "$GPUVET" compare "$base" "$T/racy.json"
grep -q "fp32 sum on cpu: run-to-run bits now differ (9 of 10 runs" "$GV_OUT" || { cat "$GV_OUT"; fail "the real change"; }
echo ok
