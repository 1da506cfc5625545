#!/usr/bin/env bash
# Issue 31, class 6: loading a document is bounded by the memory budget for documents
# (base/json.h), not only by the file size limit. A 1 MB snapshot-looking document of
# 350000 empty objects needs about 35 MB of JSON values; with the budget lowered to
# 8 MB by the test-only GPUVET_TEST_JSON_BUDGET_MB, diff, compare and verify exit 3
# with "FILE: the document needs more than N MB of memory to load (limit 8 MB)" naming
# the file (first or second), and ASan finds nothing leaked. Ordinary documents still
# load under that budget.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_cmd python3 "python3 is needed to write the document"
gv_workdir T
cd "$T"
D=$GV_SRC/tests/data/diff
export GPUVET_TEST_JSON_BUDGET_MB=8

python3 - <<'PY'
n = 350000
for name, schema in (("big.json", "gpuvet.snapshot"), ("bigres.json", "gpuvet.results")):
    open(name, "w").write('{"schema":"%s","schema_version":1,"x":[%s]}' % (schema, ",".join(["{}"] * n)))
PY

expect_limit() { # FILE_NAMED ARGS...
    local named=$1 rc=0
    shift
    "$GPUVET" "$@" >out.txt 2>err.txt || rc=$?
    [[ $rc == 3 ]] || fail "$*: exit $rc: $(head -c 800 err.txt)"
    grep -q "^gpuvet: error: $named: the document needs more than [0-9]* MB of memory to load (limit 8 MB" err.txt ||
        fail "$*: not the memory message naming $named: $(head -c 800 err.txt)"
}
expect_limit big.json diff big.json "$D/after.json"
expect_limit big.json diff "$D/before.json" big.json
expect_limit big.json verify --baseline big.json --snapshot "$D/after.json"
expect_limit big.json verify --baseline "$D/before.json" --snapshot big.json
expect_limit bigres.json compare bigres.json bigres.json

# a document kept in the history database is loaded within the budget as well
python3 - "$D/before.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["x"] = [{}] * 350000
json.dump(d, open("bigsnap.json", "w"), separators=(",", ":"))
PY
GPUVET_TEST_JSON_BUDGET_MB= "$GPUVET" history import --db h.db bigsnap.json >out.txt 2>err.txt ||
    fail "import without the small budget: $(cat err.txt)"
expect_limit "history database h.db: run 1" history show 1 --json --db h.db

# a capture's index, a bench document and a report input go through the same parse
python3 - <<'PY'
import struct
idx = ('{"schema":"gpuvet.capture","schema_version":1,"x":[%s]}' % ",".join(["{}"] * 350000)).encode()
open("big.gvcap", "wb").write(idx + struct.pack("<QQ", 0, len(idx)) + b"GVCAPEND")
open("bigbench.json", "w").write('{"schema":"gpuvet.bench","schema_version":1,"x":[%s]}' % ",".join(["{}"] * 350000))
PY
expect_limit big.gvcap compare big.gvcap big.gvcap
expect_limit bigbench.json compare bigbench.json bigbench.json
expect_limit big.json report big.json -o big.html
[[ ! -e big.html ]] || fail "report wrote a page from a document it could not load"

# ordinary documents load under the same budget
rc=0
"$GPUVET" diff "$D/before.json" "$D/after.json" >out.txt 2>err.txt || rc=$?
[[ $rc == 1 ]] || fail "diff of the test snapshots under an 8 MB budget: exit $rc: $(cat err.txt)"
echo "the budget stops the load, names the file, frees what it built"
