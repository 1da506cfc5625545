#!/bin/bash
# Runs the same commands with two gpuvet binaries and shows what differs in
# their outputs apart from timings: the proof that a restructuring changed no
# behaviour. Usage: scripts/same-output.sh OLD_GPUVET NEW_GPUVET [DEVICE] [OUTDIR]
# DEVICE: a --device value (default cpu); "auto" runs without --device.
# Exit status: 0 when every output matches, 1 when one differs, 2 usage.
set -u
[ $# -ge 2 ] || { echo "usage: $0 OLD_GPUVET NEW_GPUVET [DEVICE] [OUTDIR]" >&2; exit 2; }
old=$1 new=$2 dev=${3:-cpu} out=${4:-$(mktemp -d)}
command -v jq >/dev/null || { echo "$0: needs jq" >&2; exit 2; }
mkdir -p "$out" || exit 2
devopt=(--device "$dev"); [ "$dev" = auto ] && devopt=()

# What changes from run to run: clocks, measured speeds, the process (its pid) and the
# machine's moment (snapshot), digests of timing-bearing documents.
volatile='walk(if type == "object" then
  del(.created, .seconds, .timing, .snapshot, .wall_s, .elapsed, .duration_s, .pid)
  else . end)'
# bench measures: keep every name, unit and shape, drop the measured numbers
measured='walk(if type == "number" then 0 elif type == "string" and test("^[0-9.]+ ?(TFLOP/s|GB/s|us|ms|s)$") then "N" else . end)'
# text: a duration "(3.5 s)" becomes "(N s)"; bench text: every number
unclock() { sed -E 's/\([0-9]+(\.[0-9]+)? s\)/(N s)/g'; }
mask_text() { sed -E 's/ *[0-9]+(\.[0-9]+)?/ N/g' | tr -s ' '; }

run() { # NAME FILTER CMD...
    local name=$1 filter=$2; shift 2
    for side in old new; do
        local bin=$old; [ $side = new ] && bin=$new
        "$bin" "$@" > "$out/$name.$side.raw" 2> "$out/$name.$side.err"
        echo "exit $?" >> "$out/$name.$side.err"
        case $filter in
            json) jq -S "$volatile" "$out/$name.$side.raw" > "$out/$name.$side" 2>/dev/null ||
                      cp "$out/$name.$side.raw" "$out/$name.$side" ;;
            measured) jq -S "$volatile | $measured" "$out/$name.$side.raw" > "$out/$name.$side" 2>/dev/null ||
                      cp "$out/$name.$side.raw" "$out/$name.$side" ;;
            masked) mask_text < "$out/$name.$side.raw" > "$out/$name.$side" ;;
            *) unclock < "$out/$name.$side.raw" > "$out/$name.$side" ;;
        esac
    done
    if cmp -s "$out/$name.old" "$out/$name.new" && cmp -s "$out/$name.old.err" "$out/$name.new.err"; then
        echo "same     $name"
    else
        echo "DIFFERS  $name"; diff "$out/$name.old" "$out/$name.new" | head -20
        diff "$out/$name.old.err" "$out/$name.new.err" | head -5
        status=1
    fi
}
status=0
run check          text     check "${devopt[@]}"
run check.json     json     check "${devopt[@]}" --json
run check.standard json     check "${devopt[@]}" --suite standard --json
run probe          text     probe "${devopt[@]}"
run probe.json     json     probe "${devopt[@]}" --json
run bench          masked   bench "${devopt[@]}" --quick
run bench.json     measured bench "${devopt[@]}" --quick --json
echo "outputs in $out"
exit $status
