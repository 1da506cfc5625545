#!/usr/bin/env bash
# A coverage-guided fuzzing campaign over every parser (tests/fuzz/fuzz_*.c), with
# libFuzzer, AddressSanitizer and UBSan (clang 19; scripts/install-deps.sh --test
# installs it and its runtime, libclang-rt-19-dev).
#
# Usage: scripts/fuzz-campaign.sh [--runs N] [--seconds S] [--jobs J] [--merge] [TARGET...]
#   each target runs until N executions (default 10,000,000) or S seconds (default
#   1800), whichever comes first, J targets at a time (default: the number of cores),
#   starting from its committed corpus (tests/fuzz/corpus/NAME) plus what earlier
#   campaigns found (build-fuzz/campaign/corpus/NAME, kept between campaigns);
#   --merge adds the inputs that reach new coverage to the committed corpus (libFuzzer
#   -merge=1), so that CI replays them.
# Findings (crash-*, leak-*, timeout-*, oom-*) are kept in build-fuzz/campaign/findings/NAME;
# reproduce one with build-fuzz/tests/fuzz_NAME FILE. Prints a table (also
# build-fuzz/campaign/summary.md): executions, speed, time, corpus growth, findings.
# Exit 1 when anything was found.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
runs=10000000 seconds=1800 jobs=$(nproc) merge=0 targets=()
while [[ $# -gt 0 ]]; do
    case $1 in
        --runs) runs=$2; shift 2 ;;
        --seconds) seconds=$2; shift 2 ;;
        --jobs) jobs=$2; shift 2 ;;
        --merge) merge=1; shift ;;
        -h|--help) sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        -*) echo "fuzz-campaign: unknown option $1" >&2; exit 2 ;;
        *) targets+=("$1"); shift ;;
    esac
done
[[ $runs =~ ^[0-9]+$ && $seconds =~ ^[0-9]+$ && $jobs =~ ^[1-9][0-9]*$ ]] ||
    { echo "fuzz-campaign: --runs, --seconds and --jobs take whole numbers" >&2; exit 2; }
command -v clang-19 >/dev/null || { echo "fuzz-campaign: clang-19 is missing (scripts/install-deps.sh --test)" >&2; exit 1; }
B=$src/build-fuzz
CC=clang-19 cmake -S "$src" -B "$B" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGPUVET_FUZZ=ON \
    -DGPUVET_SANITIZE=ON -DBUILD_TESTING=ON >/dev/null
cmake --build "$B" -j "$jobs" >/dev/null
if [[ ${#targets[@]} -eq 0 ]]; then
    for f in "$src"/tests/fuzz/fuzz_*.c; do targets+=("$(basename "$f" .c | sed 's/^fuzz_//')"); done
fi
C=$B/campaign
mkdir -p "$C/logs"
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export GV_TEST_TMP=$C/tmp
mkdir -p "$GV_TEST_TMP"

# shellcheck disable=SC2317 # one() runs through xargs
one() { # NAME: fuzz one target, leave its log
    local t=$1 bin=$B/tests/fuzz_$1
    [[ -x $bin ]] || { echo "no fuzz target $t" >"$C/logs/$t.log"; return 0; }
    mkdir -p "$C/corpus/$t" "$C/findings/$t"
    local before
    before=$(find "$C/corpus/$t" -type f | wc -l)
    echo "corpus_before $before" >"$C/logs/$t.log"
    "$bin" -runs="$runs" -max_total_time="$seconds" -print_final_stats=1 -timeout=30 \
        -rss_limit_mb=4096 -artifact_prefix="$C/findings/$t/" "$C/corpus/$t" \
        "$src/tests/fuzz/corpus/$t" >>"$C/logs/$t.log" 2>&1 || true
    if [[ $merge == 1 ]]; then
        "$bin" -merge=1 "$src/tests/fuzz/corpus/$t" "$C/corpus/$t" >>"$C/logs/$t.merge.log" 2>&1 || true
    fi
}
export -f one
export B C src runs seconds merge
printf '%s\n' "${targets[@]}" | xargs -P "$jobs" -I{} bash -c 'one "$@"' _ {}

found=0
{
    echo "| target | executions | exec/s | seconds | corpus (added) | findings |"
    echo "|---|---:|---:|---:|---:|---|"
    for t in "${targets[@]}"; do
        log=$C/logs/$t.log
        execs=$(awk '/stat::number_of_executed_units:/ {print $2}' "$log" | tail -1)
        secs=$(awk '/^Done [0-9]+ runs in [0-9]+ second/ {print $5}' "$log" | tail -1)
        [[ -n $secs ]] || secs=$(awk '/^#[0-9]+/ && / secs: / {for (i = 1; i < NF; i++) if ($i == "secs:") s = $(i + 1)} END {print s}' "$log")
        speed=$(( ${execs:-0} / (${secs:-0} > 0 ? ${secs:-0} : 1) ))
        before=$(awk '/^corpus_before/ {print $2}' "$log")
        after=$(find "$C/corpus/$t" -type f 2>/dev/null | wc -l)
        findings=$(find "$C/findings/$t" -type f -printf '%f ' 2>/dev/null)
        [[ -z $findings ]] || found=1
        printf '| %s | %s | %s | %s | %s (+%s) | %s |\n' "$t" "${execs:-?}" "${speed:-?}" "$secs" \
            "$after" "$(( after - ${before:-0} ))" "${findings:-none}"
    done
} >"$C/summary.md"
cat "$C/summary.md"
exit $found
