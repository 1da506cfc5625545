#!/usr/bin/env bash
# Every path of this repository that the sources and documents name exists:
# a comment or a page that points at a moved or deleted file is stale.
# (Placeholders in capitals such as r_NAME.c, paths behind a variable or inside
# another project, and the facts documents and seeds in docs/facts and docs/seeds, which
# quote other projects' paths, are not pointers into this tree.)
set -euo pipefail
. "$(dirname "$0")/lib.sh"
cd "$GV_SRC"
files=$(find src python tests docs scripts README.md CMakeLists.txt -type f \
             \( -name '*.[ch]' -o -name '*.py' -o -name '*.md' -o -name '*.sh' -o -name '*.bash' \
                -o -name '*.cu' -o -name '*.txt' -o -name '*.1' \) \
             -not -path 'tests/fuzz/corpus/*' -not -path 'tests/data/*' \
             -not -path 'docs/facts/*' -not -path 'docs/seeds/*' | sort)
[[ -n $files ]] || fail "no sources found under $GV_SRC"
stale=0 named=0
while IFS=: read -r file path; do
    named=$((named + 1))
    [[ $path =~ [A-Z]{2,} ]] && continue
    [[ -e $path ]] && continue
    echo "stale: $file names $path, which does not exist" >&2
    stale=$((stale + 1))
done < <(grep -oHP '(^|[^\w$/.-])(src|python|tests|docs|scripts|cmake)/[\w./-]*\w\.(c|h|py|md|sh|bash|cu|cmake)(?![\w.-])' $files |
         sed -E 's/:[^a-z]?(src|python|tests|docs|scripts|cmake)\//:\1\//' | sort -u)
[[ $named -gt 100 ]] || fail "only $named paths found: the scan is broken"
[[ $stale -eq 0 ]] || fail "$stale stale paths"
echo "$named paths named in $(wc -w <<<"$files") files, all present"
