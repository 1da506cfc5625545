#!/usr/bin/env bash
# `gpuvet compare` of two documents of different kinds it takes (check results, a bench
# document; either order, and a bench document whose "schema" key comes last) is refused with
# exit 3 and a message that names both files and both schemas, blaming neither alone; a
# document of a kind compare does not take (a snapshot) is named as the culprit, in either
# place, never the good file beside it.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
gv_tmpdir T compare_kinds
export XDG_CACHE_HOME="$T/cache"

expect_rc 0 "$GPUVET" check --device cpu --only 'sum.f32.*' -o "$T/A.json"
expect_rc 0 "$GPUVET" bench --device cpu --quick --only 'gemm.*.f32.*' --no-snapshot \
    -o "$T/bench.json"
mkdir -p "$T/root/etc" "$T/root/var/lib/dpkg/info" "$T/root/var/lib/dpkg/updates"
touch "$T/root/var/lib/dpkg/status" "$T/root/var/lib/dpkg/available" # an empty dpkg database
expect_rc 0 "$GPUVET" snapshot --no-hash --root "$T/root" -o "$T/snap.json"
python3 - "$T/bench.json" "$T/late.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
schema = d.pop("schema")
d["schema"] = schema  # the key last: not among the first bytes
json.dump(d, open(sys.argv[2], "w"))
PY

differ() { # X Y SCHEMA_X SCHEMA_Y
    expect_rc 3 "$GPUVET" compare "$T/$1" "$T/$2"
    local want="$T/$1 (schema $3) and $T/$2 (schema $4) are different kinds of document"
    grep -qF -- "$want" "$GV_ERR" || fail "compare $1 $2: message lacks '$want': $(cat "$GV_ERR")"
    [[ ! -s $GV_OUT ]] || fail "compare $1 $2: something on stdout"
}
differ A.json bench.json gpuvet.results gpuvet.bench
differ bench.json A.json gpuvet.bench gpuvet.results
differ A.json late.json gpuvet.results gpuvet.bench
differ late.json A.json gpuvet.bench gpuvet.results
blames() { # X Y CULPRIT
    expect_rc 3 "$GPUVET" compare "$T/$1" "$T/$2"
    grep -q "^gpuvet: error: $T/$3: .*gpuvet.snapshot" "$GV_ERR" ||
        fail "compare $1 $2: the message does not blame $3: $(cat "$GV_ERR")"
}
blames A.json snap.json snap.json
blames snap.json A.json snap.json
blames bench.json snap.json snap.json
blames snap.json bench.json snap.json

# same kinds still compare
expect_rc 0 "$GPUVET" compare "$T/A.json" "$T/A.json"
expect_rc 0,1 "$GPUVET" compare "$T/bench.json" "$T/late.json"
echo "ok: compare names both documents of different kinds"
