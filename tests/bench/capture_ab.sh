#!/bin/bash
# Benchmark: two settings of the capture against each other, interleaved, so that a
# change to the recorded pass is judged against the run-to-run noise and not against a
# figure from another day. Each round runs profile_capture.py (the worker's real
# capture code, gpuvet's C side left out) once with A's variables and once with B's,
# in ABBA order (A first in odd rounds, B first in even ones), so a machine that drifts
# (clocks, caches, a neighbour) weighs on both alike. Prints every run, then for A and
# B the median and range of the recorded forward (without writing) over the plain
# forward, and a verdict: B faster or slower when the two ranges do not overlap, else
# "no clear difference".
# usage: tests/bench/capture_ab.sh [-n ROUNDS] PYTHON MODEL.py:FUNCTION DEVICE 'A VARS' 'B VARS'
#   VARS: NAME=VALUE words put in the environment of that side's runs ('' for none)
#   e.g. tests/bench/capture_ab.sh -n 4 /opt/torch/.venv/bin/python \
#            tests/cli/models/resnet18_224.py:make cuda:0 '' 'GPUVET_TEST_CAPTURE_QUEUE=115000000'
# Exit status: 0 after a comparison (whatever the verdict), 1 when a run failed, 2 on usage.
set -u
rounds=3
if [[ ${1:-} == -n ]]; then
    rounds=${2:-}
    shift 2
fi
usage() { sed -n '11,14p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
[[ $# -eq 5 && $rounds =~ ^[1-9][0-9]*$ ]] || usage
PY=$1 MODEL=$2 DEV=$3
declare -A vars=([A]=$4 [B]=$5)
for side in A B; do
    for w in ${vars[$side]}; do
        [[ $w =~ ^[A-Za-z_][A-Za-z0-9_]*=[^[:space:]]*$ ]] ||
            { echo "capture_ab: $side: '$w' is not NAME=VALUE" >&2; exit 2; }
    done
done
HERE=$(cd "$(dirname "$0")" && pwd)
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT

run() { # SIDE ROUND: one profiled capture; prints its line, adds "SIDE RATIO" to $W/ratios
    local side=$1 r=$2
    # shellcheck disable=SC2086 # the side's NAME=VALUE words, checked above
    env ${vars[$side]} "$PY" "$HERE/profile_capture.py" "$MODEL" "$DEV" >"$W/$side.$r.log" 2>&1 ||
        { echo "capture_ab: run $side$r failed: $(tail -3 "$W/$side.$r.log")" >&2; return 1; }
    python3 - "$W/$side.$r.log" "$side$r" "$W/ratios" <<'PY' || { echo "capture_ab: run $side$r" >&2; return 1; }
import json, sys
log, run, ratios = sys.argv[1:]
t = m = None
for line in open(log, errors="replace"):
    if line.startswith("timing: "):
        t = json.loads(line[len("timing: "):])
    elif line.startswith("memory: "):
        m = json.loads(line[len("memory: "):])
if t is None or m is None:
    sys.exit("no timing or memory line in the profile's output")
plain = t["plain_forward_seconds"]
rec = t["capture_seconds"] - t["capture_writing_seconds"]
gpu = ""
if m.get("plain_gpu_peak_bytes"):
    gpu = "; GPU peak %.2fx" % (m["capture_gpu_peak_bytes"] / m["plain_gpu_peak_bytes"])
print("%s: recorded %.2f ms, plain %.2f ms, %.2fx; queue emptied %d times%s" % (
    run, rec * 1e3, plain * 1e3, rec / plain, t.get("queue_flushes", 0), gpu))
with open(ratios, "a") as f:
    f.write("%s %.6f\n" % (run[0], rec / plain))
PY
}

for ((r = 1; r <= rounds; r++)); do
    if ((r % 2)); then order="A B"; else order="B A"; fi
    for side in $order; do
        run "$side" "$r" || exit 1
    done
done
python3 -c '
import statistics, sys
runs = {"A": [], "B": []}
for line in open(sys.argv[1]):
    side, ratio = line.split()
    runs[side].append(float(ratio))
for side in "AB":
    v = runs[side]
    print("%s: median %.2fx plain, range %.2f-%.2fx over %d runs" % (
        side, statistics.median(v), min(v), max(v), len(v)))
a, b = runs["A"], runs["B"]
if max(b) < min(a):
    verdict = "B faster: every B run under every A run"
elif min(b) > max(a):
    verdict = "B slower: every B run over every A run"
else:
    verdict = "no clear difference: the ranges overlap"
print("verdict: %s (median B/A %.2f)" % (verdict, statistics.median(b) / statistics.median(a)))
' "$W/ratios"
