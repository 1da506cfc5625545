#!/usr/bin/env bash
# The man page is valid roff and names every command the binary has.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
page=$GV_SRC/docs/gpuvet.1
cmds=$("$GPUVET" --help | awk '/^Commands:/ {f = 1; next} f && /^  [a-z]/ {print $1}')
[[ -n $cmds ]] || fail "no commands in gpuvet --help"
for c in $cmds; do
    grep -q "^\.B[IR]* \"\?$c" "$page" || grep -q "^\.BI \"$c " "$page" || fail "man page lacks command $c"
done
command -v groff >/dev/null || fail "groff is not installed (scripts/install-deps.sh --test)"
out=$(groff -man -Tutf8 -ww "$page" 2>&1 >/dev/null) || fail "groff failed"
[[ -z $out ]] || fail "groff warnings: $out"
echo "man page covers: $(tr '\n' ' ' <<<"$cmds")"
