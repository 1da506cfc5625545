#!/bin/bash
# Benchmark: two settings of the capture against each other, interleaved, so that a
# change to the recorded pass is judged against the run-to-run noise and not against a
# figure from another day. Each round runs profile_capture.py (the worker's real
# capture code, gpuvet's C side left out) once with A's variables and once with B's,
# in ABBA order (A first in odd rounds, B first in even ones), so a machine that drifts
# (clocks, caches, a neighbour) weighs on both alike. With --gpuvet GPUVET each run is a
# real `gpuvet torch capture --json` instead (gpuvet's reader and socket included, for
# what only they cost: values sent mid-pass). Prints every run, then for A and
# B the median and range of the recorded forward (without writing) over the plain
# forward, and a verdict: B faster or slower when the two ranges do not overlap, else
# "no clear difference".
# usage: tests/bench/capture_ab.sh [-n ROUNDS] [--gpuvet GPUVET] PYTHON MODEL.py:FUNCTION DEVICE 'A VARS' 'B VARS'
#   VARS: NAME=VALUE words put in the environment of that side's runs ('' for none)
#   e.g. tests/bench/capture_ab.sh -n 4 /opt/torch/.venv/bin/python \
#            tests/cli/models/resnet18_224.py:make cuda:0 '' 'GPUVET_TEST_CAPTURE_QUEUE=115000000'
#        tests/bench/capture_ab.sh -n 6 --gpuvet build/gpuvet /opt/torch/.venv/bin/python \
#            tests/cli/models/resnet18_224.py:make cuda:0 'GPUVET_TEST_CAPTURE_HOLD=0' ''
# Exit status: 0 after a comparison (whatever the verdict), 1 when a run failed, 2 on usage.
set -u
rounds=3 gpuvet=
while [[ ${1:-} == -n || ${1:-} == --gpuvet ]]; do
    if [[ $1 == -n ]]; then rounds=${2:-}; else gpuvet=${2:-}; fi
    shift 2
done
usage() { sed -n '13,19p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
[[ $# -eq 5 && $rounds =~ ^[1-9][0-9]*$ ]] || usage
[[ -z $gpuvet || -x $gpuvet ]] || { echo "capture_ab: --gpuvet $gpuvet is not an executable" >&2; exit 2; }
PY=$1 MODEL=$2 DEV=$3
declare -A vars=([A]=$4 [B]=$5)
for side in A B; do
    for w in ${vars[$side]}; do
        [[ $w =~ ^[A-Za-z_][A-Za-z0-9_]*=[^[:space:]]*$ ]] ||
            { echo "capture_ab: $side: '$w' is not NAME=VALUE" >&2; exit 2; }
    done
done
HERE=$(cd "$(dirname "$0")" && pwd)
. "$(dirname "$0")/../cli/lib.sh"
gv_tmpdir W
export XDG_CACHE_HOME=$W/cache

run() { # SIDE ROUND: one profiled capture; prints its line, adds "SIDE RATIO" to $W/ratios
    local side=$1 r=$2
    # shellcheck disable=SC2086 # the side's NAME=VALUE words, checked above
    if [[ -n $gpuvet ]]; then
        env ${vars[$side]} "$gpuvet" torch capture --model "$MODEL" --python "$PY" --device "$DEV" \
            -o "$W/r.gvcap" --json >"$W/$side.$r.log" 2>"$W/$side.$r.err"
    else
        env ${vars[$side]} "$PY" "$HERE/profile_capture.py" "$MODEL" "$DEV" >"$W/$side.$r.log" 2>&1
    fi || { echo "capture_ab: run $side$r failed: $(tail -3 "$W/$side.$r.log" "$W/$side.$r.err" 2>/dev/null)" >&2
            return 1; }
    python3 - "$W/$side.$r.log" "$side$r" "$W/ratios" <<'PY' || { echo "capture_ab: run $side$r" >&2; return 1; }
import json, sys
log, run, ratios = sys.argv[1:]
t = m = None
text = open(log, errors="replace").read()
if text.startswith("{"):  # gpuvet torch capture --json: the capture's header
    h = json.loads(text)
    t, m = h.get("timing"), h.get("memory")
for line in text.splitlines():
    if line.startswith("timing: "):
        t = json.loads(line[len("timing: "):])
    elif line.startswith("memory: "):
        m = json.loads(line[len("memory: "):])
if t is None or m is None:
    sys.exit("no timing or memory in the run's output")
plain = t["plain_forward_seconds"]
rec = t["capture_seconds"] - t["capture_writing_seconds"]
more = ""
if m.get("plain_gpu_peak_bytes"):
    more += "; GPU peak %.2fx" % (m["capture_gpu_peak_bytes"] / m["plain_gpu_peak_bytes"])
if m.get("plain_rss_peak_bytes"):
    more += "; RSS peak %.2fx" % (m["capture_rss_peak_bytes"] / m["plain_rss_peak_bytes"])
if "held_peak_bytes" in t:
    more += "; held %.0f MB at most, sent early %d times" % (t["held_peak_bytes"] / 1e6, t["hold_drains"])
print("%s: recorded %.2f ms, plain %.2f ms (median %.2f), %.2fx; queue emptied %d times; writing %.0f ms%s" % (
    run, rec * 1e3, plain * 1e3, t.get("plain_forward_median_seconds", plain) * 1e3, rec / plain,
    t.get("queue_flushes", 0), t["capture_writing_seconds"] * 1e3, more))
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
