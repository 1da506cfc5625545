#!/bin/bash
# `gpuvet check -o F` killed with SIGKILL at every point of its run leaves the previous F
# intact and readable, or, once the new file has been renamed into place, the complete
# new one: never a truncated or half-written file.
#
# No timing: gpuvet stops itself (SIGSTOP) at a named point it reaches
# (GPUVET_TEST_STOP_AT: case-N as case N starts, and each step of the atomic write, see
# src/base/fs.h), the test waits until the kernel reports it stopped, then kills it
# with kill -9. So every point is hit exactly, on an idle or a loaded machine.
set -u
. "$(dirname "$0")/lib.sh"
gv_workdir T
export XDG_CACHE_HOME="$T/cache"
ONLY='gemm.f32.127x253x511.*,softmax.f16.*,convert.*'

"$GPUVET" check --device cpu --only "$ONLY" -o "$T/F.json" > /dev/null || fail "first run"
ncases=$("$GPUVET" check --device cpu --only "$ONLY" --list | wc -l)
[ "$ncases" -ge 5 ] || fail "expected at least 5 cases, got $ncases"
cp "$T/F.json" "$T/prev.json"


kills=0
points="case-0 case-$((ncases / 2)) case-$((ncases - 1)) atomic-start atomic-created atomic-half"
points="$points atomic-written atomic-synced atomic-renamed"
for point in $points; do
    GPUVET_TEST_STOP_AT=$point GPUVET_TEST_STOP_FILE=F.json \
        "$GPUVET" check --device cpu --only "$ONLY" -o "$T/F.json" > /dev/null 2>&1 &
    pid=$!
    wait_stopped "$pid" || fail "gpuvet never reached $point"
    kill -9 "$pid"
    wait "$pid" 2> /dev/null
    rc=$?
    [ "$rc" -eq 137 ] || fail "at $point: expected death by SIGKILL (137), got $rc"
    kills=$((kills + 1))
    tmps=$(find "$T" -maxdepth 1 -name 'F.json.tmp.*' | wc -l)
    # F must be a complete result file: the old one, or a complete new one
    "$GPUVET" compare "$T/prev.json" "$T/F.json" > "$T/out" 2> "$T/err"
    rc=$?
    [ $rc -eq 0 ] || fail "after a kill at $point the file is not intact (exit $rc): $(cat "$T/err")"
    case $point in
        atomic-renamed)
            ! cmp -s "$T/F.json" "$T/prev.json" || fail "at $point the new file should be in place"
            cp "$T/F.json" "$T/prev.json" ;;
        *)
            cmp -s "$T/F.json" "$T/prev.json" || fail "a kill at $point replaced the previous file" ;;
    esac
    # the kill really happened in the middle of writing: the temporary file is there,
    # holding exactly what had been written at that point
    case $point in
        atomic-created | atomic-half | atomic-written | atomic-synced)
            [ "$tmps" -eq 1 ] || fail "at $point: expected one temporary file, found $tmps"
            tmp=$(find "$T" -maxdepth 1 -name 'F.json.tmp.*')
            size=$(stat -c %s "$tmp")
            case $point in
                atomic-created) [ "$size" -eq 0 ] || fail "at $point the temporary file has $size bytes" ;;
                atomic-half)
                    if [ "$size" -eq 0 ] || [ "$size" -ge "$(stat -c %s "$T/prev.json")" ]; then
                        fail "at $point the temporary file has $size bytes"
                    fi ;;
            esac
            rm -f "$tmp" ;;
        *) [ "$tmps" -eq 0 ] || fail "at $point: a temporary file was left" ;;
    esac
done
echo "ok: killed with SIGKILL at $kills points ($points): the result file was always complete"
