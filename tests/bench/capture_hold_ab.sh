#!/bin/bash
# A/B benchmark of where the capture's copied values wait: sent to gpuvet mid-pass
# ("send", GPUVET_TEST_CAPTURE_HOLD=0) or held in the worker until the pass is over
# ("hold", the default). ResNet-18 b8 224x224, one process per capture, N pairs in ABBA
# order; prints each capture's recorded forward (writing excluded) against its best and
# median plain forward, the bytes held, and the worker's RSS ratio (docs/capture.md).
# usage: tests/bench/capture_hold_ab.sh GPUVET PYTHON [N] [DEVICE]   (default 6, cuda:0)
set -u
G=${1:?usage: capture_hold_ab.sh GPUVET PYTHON [N] [DEVICE]}
PY=${2:?usage: capture_hold_ab.sh GPUVET PYTHON [N] [DEVICE]}
N=${3:-6} DEV=${4:-cuda:0}
SRC=$(cd "$(dirname "$0")/../.." && pwd)
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
export XDG_CACHE_HOME=$W/cache
status=0
for i in $(seq 1 "$N"); do
    if ((i % 2)); then order="send hold"; else order="hold send"; fi
    for v in $order; do
        if [[ $v == send ]]; then export GPUVET_TEST_CAPTURE_HOLD=0; else unset GPUVET_TEST_CAPTURE_HOLD; fi
        "$G" torch capture --model "$SRC/tests/cli/models/resnet18_224.py:make" --python "$PY" \
            --device "$DEV" -o "$W/r.gvcap" --json >"$W/h.json" 2>"$W/err" ||
            { echo "$v: capture failed: $(tail -3 "$W/err")"; status=1; continue; }
        python3 - "$W/h.json" "$v" <<'PY' || status=1
import json, sys
h = json.load(open(sys.argv[1]))
t, m = h["timing"], h["memory"]
rec = t["capture_seconds"] - t["capture_writing_seconds"]
print("%s: %.2fx the best plain, %.2fx the median; recorded %.2f ms, plain %.2f ms; held %.0f MB "
      "at most, sent early %d times; worker RSS %.2fx; writing %.0f ms" % (
          sys.argv[2], rec / t["plain_forward_seconds"], rec / t["plain_forward_median_seconds"],
          rec * 1e3, t["plain_forward_seconds"] * 1e3, t["held_peak_bytes"] / 1e6, t["hold_drains"],
          m["capture_rss_peak_bytes"] / m["plain_rss_peak_bytes"], t["capture_writing_seconds"] * 1e3))
PY
    done
done
exit $status
