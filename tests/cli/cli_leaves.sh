#!/usr/bin/env bash
# Every src/cli/cmd_NAME.c is a leaf: it defines no function but cmd_NAME (the
# rest is static), and no file but main.c calls a cmd_* function. Pieces two
# commands share live in cli/ helper files (explain_out.c, diff_out.c, ...).
set -euo pipefail
: "${GV_SRC:?}"
. "$(dirname "$0")/lib.sh"
cd "$GV_SRC/src/cli"
n=0
for f in cmd_*.c; do
    name=${f#cmd_}; name=${name%.c}
    # external definitions: a line at column 0 that opens a function and is not static
    extra=$(grep -nE '^[A-Za-z_][A-Za-z0-9_ *]*[ *]([A-Za-z_][A-Za-z0-9_]*)\(' "$f" |
            grep -vE '^[0-9]+:(static|typedef|struct [a-z_]+ \{)' |
            grep -vE "^[0-9]+:int cmd_${name}\(int argc, char \*\*argv\)$" || true)
    [[ -z $extra ]] || fail "$f defines more than cmd_$name (make it static or move it to a helper file): $extra"
    n=$((n + 1))
done
(( n >= 10 )) || fail "found only $n cmd_*.c files"
callers=$(grep -nE '\bcmd_[a-z]+\(' ./*.c | grep -vE '^\./(main\.c|cmd_([a-z]+)\.c:[0-9]+:int cmd_\2\()' || true)
[[ -z $callers ]] || fail "cmd_* called outside main.c: $callers"
echo "cli_leaves: ok ($n commands)"
