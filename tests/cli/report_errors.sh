#!/usr/bin/env bash
# gpuvet report refuses what it cannot render, with a message naming the file: no
# input, a missing file, not JSON, a JSON document of no or an unknown schema, a known
# schema of another version, a truncated capture; a SQLite history database is handed to
# `gpuvet matrix --db FILE --json` (this same binary): for a database gpuvet wrote, the
# matrix page is made and checked against the command's own document in Chromium; for one
# it did not, the command's refusal is passed on. Documents of a known schema with fields of the wrong types give a
# page or a clear error, never a crash. An existing output is never touched by a
# failure.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
gv_workdir T
cd "$T"
export XDG_CACHE_HOME=$T/cache
expect() { # RC PATTERN ARGS... : gpuvet report ARGS exits RC and stderr matches PATTERN
    local want=$1 pat=$2 rc=0
    shift 2
    "$GPUVET" report "$@" >out.txt 2>err.txt || rc=$?
    [[ $rc == "$want" ]] || fail "report $* exited $rc, not $want: $(cat err.txt)"
    grep -Eq -- "$pat" err.txt || fail "report $*: no /$pat/ in: $(cat err.txt)"
}
echo "keep me" >keep.html
before=$(sha256sum keep.html)
"$GPUVET" snapshot -o s.json
expect 2 "give at least one gpuvet document" -o keep.html
expect 3 "nothere.json: no such file" nothere.json -o keep.html
printf '{"schema": "gpuvet.snapshot", ' >trunc.json
expect 3 "trunc.json" trunc.json -o keep.html
echo '[1, 2]' >array.json
expect 3 "array.json: not a (JSON object|gpuvet document)" array.json -o keep.html
echo '{"rows": []}' >noschema.json
expect 3 "noschema.json: not a gpuvet document \(no \"schema\" string\)" noschema.json -o keep.html
python3 - s.json <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
json.dump(dict(s, schema="gpuvet.telemetry"), open("unknown.json", "w"))
json.dump(dict(s, schema_version=2), open("newer.json", "w"))
json.dump(dict(s, schema_version=0), open("older.json", "w"))
PY
expect 3 "unknown.json: schema \"gpuvet.telemetry\" is not one gpuvet report renders \(.*gpuvet.matrix v1" unknown.json -o keep.html
expect 3 "newer.json.*(newer|version 2)" newer.json -o keep.html
expect 3 "older.json.*(older|version 0)" older.json -o keep.html
# one bad input among good ones: nothing is written
expect 3 "unknown.json" s.json unknown.json -o keep.html
# a capture cut short
python3 - <<'PY'
import json, struct
idx = json.dumps({"schema": "gpuvet.capture", "schema_version": 1, "header": {}, "budget": {},
                  "tensors": [], "ops": []}).encode()
body = b"GVCAP01\n" + idx + struct.pack("<QQ", 8, len(idx)) + b"GVCAPEND"
open("cut.gvcap", "wb").write(body[:-30])
PY
expect 3 "cut.gvcap" cut.gvcap -o keep.html
[[ $(sha256sum keep.html) == "$before" ]] || fail "a failed report touched the existing output"
[[ -z $(find . -name 'keep.html.*') ]] || fail "a failed report left a temporary file"

"$GPUVET" check --device cpu --only 'gemm.f32*' -o r.json >/dev/null
# a SQLite history database (made with python3's sqlite3)
python3 -c 'import sqlite3; c = sqlite3.connect("history.db"); c.execute("create table runs (id integer)"); c.commit()'
[[ $(head -c 15 history.db) == "SQLite format 3" ]] || fail "python3 did not make a SQLite file"
# a database gpuvet did not write: the matrix command's refusal is passed on, naming the file
rc=0
"$GPUVET" matrix --db history.db --json >matrix.json 2>matrix.err || rc=$?
[[ $rc == 3 ]] || fail "matrix of a foreign SQLite file: exit $rc, not 3: $(cat matrix.err)"
expect 3 "history.db: a SQLite history database, but 'gpuvet matrix --db history.db --json' exited 3" \
    history.db -o keep.html
# a real history database: the page is made from the matrix document and checked against
# what the matrix command itself prints, in Chromium
"$GPUVET" history import --db real.db r.json 2>err.txt || fail "history import: $(cat err.txt)"
"$GPUVET" matrix --db real.db --json >real-matrix.json || fail "matrix of the real database"
python3 -c 'import json,sys; m=json.load(open("real-matrix.json")); sys.exit(len(m["rows"]) != 1 or m["rows"][0]["runs"] != 1)' ||
    fail "the real database's matrix should hold the one imported run"
"$GPUVET" report real.db -o db.html 2>err.txt || fail "report of a history database: $(cat err.txt)"
python3 "$GV_SRC/tests/report/check_page.py" matrix db.html "$T/shots" real-matrix.json || fail "the history page"

# wrong field types in documents of every known schema: a page or a clear error, no crash
"$GPUVET" compare --json r.json r.json >c.json
"$GPUVET" doctor --snapshot s.json --json >d.json || true
python3 "$GV_SRC/tests/report/make_matrix.py" m.json
python3 - s.json r.json c.json d.json m.json <<'PY'
import copy, json, random, sys
rng = random.Random(15)
others = [None, True, 7, -1.5, "x", "inf", [], {}, [1, "a", None], {"a": {"b": []}}]
n = 0
for path in sys.argv[1:]:
    doc = json.load(open(path))
    def nodes(v, out):
        if isinstance(v, dict):
            for k in v:
                out.append((v, k)); nodes(v[k], out)
        elif isinstance(v, list):
            for i in range(len(v)):
                out.append((v, i)); nodes(v[i], out)
        return out
    for trial in range(12):
        d = copy.deepcopy(doc)
        spots = [s for s in nodes(d, []) if s[1] not in ("schema", "schema_version")]
        for parent, key in rng.sample(spots, min(len(spots), 40 if trial else len(spots))):
            try:
                parent[key] = rng.choice(others)
            except (KeyError, IndexError):
                pass
        json.dump(d, open("typed-%d.json" % n, "w"))
        n += 1
print(n)
PY
for f in typed-*.json; do
    rc=0
    "$GPUVET" report "$f" -o "$f.html" 2>"$f.err" || rc=$?
    [[ $rc == 0 || ($rc == 3 && -s $f.err) ]] || fail "$f: exit $rc: $(cat "$f.err")"
    [[ $rc != 0 ]] || grep -q '</html>' "$f.html" || fail "$f: an incomplete page"
done
echo "report errors: all checks passed"
