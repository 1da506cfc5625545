#!/usr/bin/env bash
# Every #include between rooms of src/ is one docs/architecture.md allows
# (its list between <!-- rooms --> and <!-- /rooms -->): no arrow runs back up,
# and every folder of src/ is a room the list places.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
doc=$GV_SRC/docs/architecture.md
declare -A allowed
while read -r room deps; do
    allowed[${room%:}]=" ${room%:} $deps "
done < <(sed -n '/<!-- rooms -->/,/<!-- \/rooms -->/p' "$doc" | grep -E '^ +[a-z]+:')
[[ ${#allowed[@]} -ge 10 ]] || fail "no room list found in $doc"
bad=0 edges=0
for dir in "$GV_SRC"/src/*/; do
    room=$(basename "$dir")
    [[ -n ${allowed[$room]:-} ]] || { echo "src/$room is not in the room list of docs/architecture.md" >&2; bad=$((bad + 1)); continue; }
    while IFS=: read -r file line target; do
        edges=$((edges + 1))
        [[ ${allowed[$room]} == *" $target "* ]] && continue
        echo "${file#"$GV_SRC"/}:$line includes a header of src/$target, which src/$room may not use" >&2
        bad=$((bad + 1))
    done < <(grep -rnoE '^#include "[a-z_]+/' "$dir" --include='*.c' --include='*.h' |
             sed -E 's/#include "([a-z_]+)\//\1/')
done
[[ $edges -gt 300 ]] || fail "only $edges includes found under $GV_SRC/src: the scan is broken"
[[ $bad -eq 0 ]] || fail "$bad includes against the room list"
echo "$edges includes between rooms, all as docs/architecture.md allows"
