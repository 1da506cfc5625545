#!/bin/bash
# Benchmark: gpuvet torch capture of ResNet-18 (batch 8, 224x224) against its plain
# forward (time: the recorded forward without the time spent writing; memory: the GPU's
# peak allocation and the worker's peak resident set), and bisect of the whole trace.
# Targets on the H200: capture within 5x of the plain forward, memory within 1.5x,
# bisect under 60 s. Each capture is its own process (the plain forward and the one
# recorded pass both in it), and one process's ratio moves by a factor of two from run to
# run, so N captures run (default 5) and the verdict takes their median ratio of the
# recorded pass to the best plain forward; every capture's ratio is printed, against the
# best and against the median plain forward, and memory must be within target in every
# capture. The end runs profile_capture.py --emptying, which compares the same recorded
# pass with the plain forward like for like in one process (docs/capture.md).
# usage: tests/bench/bench_capture.sh [-n N] GPUVET [PYTHON] [DEVICE]   (default cuda:0)
set -u
N=5
if [[ ${1:-} == -n ]]; then N=${2:-}; shift 2; fi
[[ $N =~ ^[1-9][0-9]*$ ]] || { echo "bench_capture: -n takes a count of captures" >&2; exit 2; }
G=${1:?usage: bench_capture.sh [-n N] GPUVET [PYTHON] [DEVICE]}
PY=${2:-$(command -v python3)}
DEV=${3:-cuda:0}
SRC=$(cd "$(dirname "$0")/../.." && pwd)
. "$(dirname "$0")/../cli/lib.sh"
gv_tmpdir W
export XDG_CACHE_HOME=$W/cache
status=0
for ((i = 1; i <= N; i++)); do
    "$G" torch capture --model "$SRC/tests/cli/models/resnet18_224.py:make" --python "$PY" \
        --device "$DEV" -o "$W/r.gvcap" --json >"$W/h$i.json" 2>"$W/err" ||
        { echo "capture failed: $(tail -3 "$W/err")"; exit 1; }
    python3 - "$W/h$i.json" "$W/ratios" <<'PY' || status=1
import json, sys
h = json.load(open(sys.argv[1]))
t, m = h["timing"], h["memory"]
plain = t["plain_forward_seconds"]
rec = t["capture_seconds"] - t["capture_writing_seconds"]
ratio = rec / plain
median = t["plain_forward_median_seconds"]
line = ("capture of ResNet-18 b8: %d ops; plain forward %.2f ms (median %.2f ms); recorded "
        "forward %.2f ms without writing (%.2fx the best plain, %.2fx the median; writing "
        "%.1f ms for %.0f MB device-to-host)" % (
            h["ops"], plain * 1e3, median * 1e3, rec * 1e3, ratio, rec / median,
            t["capture_writing_seconds"] * 1e3, t["device_to_host_bytes"] / 1e6))
with open(sys.argv[2], "a") as f:
    f.write("%.6f %.6f\n" % (ratio, rec / median))
ok = True  # (the speed is judged on the median of the captures, below)
if "plain_gpu_peak_bytes" in m:
    gr = m["capture_gpu_peak_bytes"] / m["plain_gpu_peak_bytes"]
    line += "; GPU peak %.0f MB plain, %.0f MB capturing (%.2fx)" % (
        m["plain_gpu_peak_bytes"] / 1e6, m["capture_gpu_peak_bytes"] / 1e6, gr)
    ok = ok and gr <= 1.5
if m.get("plain_rss_peak_bytes", -1) > 0:
    rr = m["capture_rss_peak_bytes"] / m["plain_rss_peak_bytes"]
    line += "; worker RSS peak %.0f MB plain, %.0f MB capturing (%.2fx)" % (
        m["plain_rss_peak_bytes"] / 1e6, m["capture_rss_peak_bytes"] / 1e6, rr)
    ok = ok and rr <= 1.5
ov = t.get("capture_overhead_seconds") or {}
line += "; where the time went: " + ", ".join("%s %.1f ms" % (k, v * 1e3) for k, v in ov.items())
line += "; op time on the device %.2f ms" % (t.get("capture_ops_seconds", 0) * 1e3)
if "queue_flushes" in t:
    line += "; queue %.0f MB, emptied %d times, %d values copied on the device" % (
        t["queue_bytes"] / 1e6, t["queue_flushes"], t["queue_device_copies"])
if "warmup_passes" in t:
    line += "; %d warm-up pass(es) %.0f ms" % (t["warmup_passes"], t["warmup_seconds"] * 1e3)
if "capture_new_gpu_segments" in m:
    line += "; cudaMalloc segments: %d in the warm-up, %d in the recorded pass (%d retries)" % (
        m["warmup_new_gpu_segments"], m["capture_new_gpu_segments"], m["capture_alloc_retries"])
print(line + ("" if ok else "  MISSES THE MEMORY TARGET"))
sys.exit(0 if ok else 1)
PY
done
python3 - "$W/ratios" <<'PY' || status=1
import statistics, sys
rows = [tuple(map(float, line.split())) for line in open(sys.argv[1])]
best, med = [r[0] for r in rows], [r[1] for r in rows]
m = statistics.median(best)
print("capture speed over %d captures: the recorded forward is %.2fx the best plain forward "
      "at the median (range %.2f-%.2fx; %d of %d within 5x), %.2fx the median plain forward at "
      "the median; target 5x%s" % (len(rows), m, min(best), max(best),
                                    sum(1 for r in best if r <= 5), len(rows),
                                    statistics.median(med), "" if m <= 5 else "  MISSES A TARGET"))
sys.exit(0 if m <= 5 else 1)
PY
s=$(date +%s%N)
"$G" torch bisect "$W/r.gvcap" --model "$SRC/tests/cli/models/resnet18_224.py:make" --python "$PY" --device "$DEV" --json >"$W/b.json" 2>"$W/berr"
rc=$?
ms=$(( ($(date +%s%N) - s) / 1000000 ))
python3 - "$W/b.json" "$ms" "$rc" <<'PY' || status=1
import json, sys
d = json.load(open(sys.argv[1])); ms = int(sys.argv[2])
print("bisect of the whole trace (%d ops, replay with a float64 CPU referee, and the model "
      "run here): %.1f s, exit %s; %s" % (len(d["ops"]), ms / 1e3, sys.argv[3],
      {k: v for k, v in d["summary"].items() if v}))
sys.exit(0 if ms < 60000 else 1)
PY
s=$(date +%s%N)
"$G" torch bisect "$W/r.gvcap" --model "$SRC/tests/cli/models/resnet18_224.py:make" --python "$PY" --device "$DEV" --strategy modules --json \
    >"$W/bm.json" 2>"$W/berr"
rc=$?
ms=$(( ($(date +%s%N) - s) / 1000000 ))
python3 - "$W/bm.json" "$ms" "$rc" <<'PY' || status=1
import json, sys
d = json.load(open(sys.argv[1])); ms = int(sys.argv[2])
print("bisect over the module tree (%d ops, %d replays): %.1f s, exit %s; %s" % (
    len(d["ops"]), d["replays"], ms / 1e3, sys.argv[3], {k: v for k, v in d["summary"].items() if v}))
sys.exit(0 if ms < 60000 else 1)
PY
# the recorded pass like for like: in turns with the plain forward in one process
# the recorder in C built beside GPUVET, as the capture runs it
so=$(dirname "$G")/_gpuvet_capture_record.abi3.so
[[ -f $so ]] && export GPUVET_NATIVE_SO=$so
"$PY" "$SRC/tests/bench/profile_capture.py" "$SRC/tests/cli/models/resnet18_224.py:make" "$DEV" \
    --emptying 30 >"$W/empty.log" 2>&1 || { echo "profile_capture.py --emptying failed: $(tail -3 "$W/empty.log")"; status=1; }
grep '^emptying: ' "$W/empty.log"
exit $status
