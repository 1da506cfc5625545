#!/bin/bash
# `gpuvet check -o F` killed with SIGKILL at many points of its run leaves the
# previous F intact and readable (or, after the final rename, the new one):
# never a truncated or half-written file.
set -u
T="$GV_TEST_TMP/check_killed"
rm -rf "$T" && mkdir -p "$T"
export XDG_CACHE_HOME="$GV_TEST_TMP/cache"
fail() { echo "FAIL: $*" >&2; exit 1; }
ONLY='gemm.f32.127x253x511.*,softmax.f16.*,convert.*'

"$GPUVET" check --device cpu --only "$ONLY" -o "$T/F.json" > /dev/null || fail "first run"
cp "$T/F.json" "$T/prev.json"
# the fastest of three runs (other tests may load the machine): the kill points
# below are fractions of it
total_ms=
for _ in 1 2 3; do
    start=$(date +%s%N)
    "$GPUVET" check --device cpu --only "$ONLY" -o "$T/timing.json" > /dev/null || fail "timed run"
    ms=$(( ($(date +%s%N) - start) / 1000000 ))
    if [ -z "$total_ms" ] || [ "$ms" -lt "$total_ms" ]; then total_ms=$ms; fi
done

kills=0 replaced=0
for pct in 10 40 70 85 92 96 98 99 100 102 105; do
    delay_ms=$(( total_ms * pct / 100 ))
    "$GPUVET" check --device cpu --only "$ONLY" -o "$T/F.json" > /dev/null 2>&1 &
    pid=$!
    sleep "$(printf '%d.%03d' $((delay_ms / 1000)) $((delay_ms % 1000)))"
    kill -9 "$pid" 2> /dev/null && kills=$((kills + 1))
    wait "$pid" 2> /dev/null
    # F must be a complete result file: the old one, or a complete new one
    "$GPUVET" compare "$T/prev.json" "$T/F.json" > "$T/out" 2> "$T/err"
    rc=$?
    [ $rc -eq 0 ] || fail "after a kill at ${pct}% the file is not intact (exit $rc): $(cat "$T/err")"
    if ! cmp -s "$T/F.json" "$T/prev.json"; then
        replaced=$((replaced + 1))
        cp "$T/F.json" "$T/prev.json"
    fi
done
[ "$kills" -ge 6 ] || fail "only $kills runs were killed while running; timing too coarse"
echo "ok: $kills killed mid-run, $replaced completed before the kill"
