#!/usr/bin/env bash
# The bash completion offers the commands and each command's options, taken
# from the real binary's --help.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
# shellcheck source=/dev/null
source "$GV_SRC/contrib/gpuvet.bash-completion"
complete_words() { # WORDS... : what completion offers for the last word
    COMP_WORDS=("$@")
    COMP_CWORD=$(($# - 1))
    COMP_WORDS[0]=$GPUVET
    _gpuvet
    printf '%s\n' "${COMPREPLY[@]}"
}
[[ $(complete_words gpuvet sn) == snapshot ]] || fail "'gpuvet sn' does not complete to snapshot"
cmds=$(complete_words gpuvet '')
for c in snapshot diff doctor check compare ab plan verify; do
    grep -qx "$c" <<<"$cmds" || fail "command $c is not offered"
done
[[ $(complete_words gpuvet snapshot --ro) == --root ]] || fail "snapshot --ro does not complete to --root"
grep -qx -- --baseline <<<"$(complete_words gpuvet verify --)" || fail "verify options not offered"
[[ $(complete_words gpuvet plan ro) == rollback ]] || fail "plan does not offer rollback"
[[ $(complete_words gpuvet fleet ga) == gate ]] || fail "fleet does not offer gate"
echo "completion: commands, options and plan kinds offered from --help"
