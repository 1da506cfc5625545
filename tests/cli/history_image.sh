#!/bin/bash
# Images in the history (docs/history.md, "Images"): documents made from a real snapshot
# --root of a fixture plus an image section (tests/cli/image_section.jq), recorded; the image
# columns read back with history --json against the documents as jq reads them; last good of
# an image; the matrix's image rows; and a database of schema version 1 (the tables as the
# version before the image columns made them) read as it is, then migrated in place by a
# recording.
set -u
. "$(dirname "$0")/lib.sh"
need_cmd jq
need_cmd zstd
gv_workdir T
root=$(bash "$GV_SRC/tests/fixtures/debian-rocm.sh" trixie-torch 2> "$T/fixture.log") ||
    fail "fixture trixie-torch: $(tail -5 "$T/fixture.log")"
export XDG_CACHE_HOME="$T/cache" XDG_DATA_HOME="$T/data"
unset GPUVET_RECORD GPUVET_DB
expect_rc 0 "$GPUVET" snapshot --root "$root" -o "$T/root.json"

M1=sha256:$(printf 'a%.0s' {1..64}) C1=sha256:$(printf 'c%.0s' {1..64})
M2=sha256:$(printf 'b%.0s' {1..64}) C2=sha256:$(printf 'd%.0s' {1..64})
image() { # TAG MANIFEST CONFIG OUT
    jq --arg tag "$1" --arg manifest "$2" --arg config "$3" --arg note note --arg envval 11.0.0 \
        -f "$GV_SRC/tests/cli/image_section.jq" "$T/root.json" > "$4" || fail "jq: image $1"
}
# a judged run made in a snapshot's stack: a results document embedding it
results() { # SNAPSHOT VERDICT CREATED OUT
    jq --arg v "$2" --arg c "$3" '{schema: "gpuvet.results", schema_version: 1, created: $c,
        gpuvet_version: "test", suite: "quick", device: {spec: "cpu"}, snapshot: .,
        summary: {cases: 2, pass: (if $v == "pass" then 2 else 1 end),
                  fail: (if $v == "pass" then 0 else 1 end), error: 0, skipped: 0}}' "$1" > "$4" ||
        fail "jq: results $4"
}
image 5.7 "$M1" "$C1" "$T/img1.json"
image 6.4 "$M2" "$C2" "$T/img2.json"
results "$T/img1.json" pass 2026-12-01T10:00:00Z "$T/r1.json"
results "$T/img2.json" fail 2026-12-02T10:00:00Z "$T/r2.json"
results "$T/root.json" pass 2026-12-03T10:00:00Z "$T/r0.json"

# --- a new database: the image columns of each run, as the documents hold them
export GPUVET_DB="$T/new.db"
expect_rc 0 "$GPUVET" history import "$T/img1.json" "$T/r1.json" "$T/r2.json" "$T/r0.json"
expect_rc 0 "$GPUVET" history list --json
cp "$GV_OUT" "$T/list.json"
python3 - "$T" <<'PY' || fail "image columns"
import json, sys
T = sys.argv[1]
runs = {r["source"].rsplit("/", 1)[-1]: r for r in json.load(open(T + "/list.json"))["runs"]}
assert set(runs) == {"img1.json", "r1.json", "r2.json", "r0.json"}, sorted(runs)
for name, snap in (("img1.json", "img1.json"), ("r1.json", "img1.json"), ("r2.json", "img2.json")):
    img = json.load(open(T + "/" + snap))["image"]
    r = runs[name]
    assert r["image_manifest_digest"] == img["manifest_digest"], (name, r)
    assert r["image_config_digest"] == img["config_digest"], (name, r)
    assert r["image_tag"] == img["tag"], (name, r)
    assert r["image_tags"] == img["tags"], (name, r)
r = runs["r0.json"]
assert r["image_manifest_digest"] is None and r["image_config_digest"] is None, r
assert r["image_tag"] is None and r["image_tags"] == [], r
PY
# the text of show names them
id=$(json_get "$T/list.json" '[r["id"] for r in d["runs"] if r["source"].endswith("r2.json")][0]')
expect_rc 0 "$GPUVET" history show "$id"
grep -q "image_manifest_digest $M2" "$GV_OUT" || fail "show: no manifest digest: $(cat "$GV_OUT")"
grep -q "image_tags .*6.4, localhost/app:6.4" "$GV_OUT" || fail "show: no tags: $(cat "$GV_OUT")"

# the text of list has an image column: the tag and the digest's first 12 hex digits
expect_rc 0 "$GPUVET" history list
grep -E "^ *$id .* 6\.4@${M2:0:19} " "$GV_OUT" >/dev/null || fail "list: no image column for run $id: $(cat "$GV_OUT")"

# --- list --image and last good of an image
expect_rc 0 "$GPUVET" history list --json --image 6.4
expect_json "$GV_OUT" '[r["source"].rsplit("/",1)[-1] for r in d["runs"]]' "['r2.json']"
expect_rc 0 "$GPUVET" history list --json --image "${M1#sha256:}" # a bare hex digest
expect_json "$GV_OUT" 'sorted(r["source"].rsplit("/",1)[-1] for r in d["runs"])' "['img1.json', 'r1.json']"
expect_rc 0 "$GPUVET" history good --json --image "${C1:0:19}" # sha256: and 12 digits
expect_json "$GV_OUT" 'd["run"]["source"].rsplit("/",1)[-1]' "r1.json"
expect_rc 1 "$GPUVET" history good --image 6.4 # its only judged run failed
grep -q "image 6.4 has no run that passed" "$GV_ERR" || fail "good --image 6.4: $(cat "$GV_ERR")"
expect_rc 2 "$GPUVET" history good --image 6.4 --machine x

# --- the matrix: each image its own row, a host's stack without one
expect_rc 0 "$GPUVET" matrix --json
cp "$GV_OUT" "$T/matrix.json"
python3 - "$T" "$M1" "$M2" <<'PY' || fail "matrix image rows"
import json, sys
T, m1, m2 = sys.argv[1:4]
rows = json.load(open(T + "/matrix.json"))["rows"]
assert len(rows) == 3, rows
by = {r.get("image", {}).get("manifest_digest"): r for r in rows}
assert set(by) == {m1, m2, None}, list(by)
assert by[m1]["image"] == {"manifest_digest": m1, "config_digest": "sha256:" + "c" * 64,
                          "tag": "5.7"}, by[m1]["image"]
assert (by[m1]["passes"], by[m1]["failures"]) == (1, 0), by[m1]
assert (by[m2]["passes"], by[m2]["failures"]) == (0, 1), by[m2]
assert "image" not in by[None] and by[None]["passes"] == 1, by[None]
# the versions of the stack are those of the same root in all three
assert by[m1]["torch"] == by[None]["torch"] == by[m2]["torch"], [r["torch"] for r in rows]
PY
expect_rc 0 "$GPUVET" matrix --format csv
grep -q ",5.7@${M1:0:19}," "$GV_OUT" || fail "matrix csv: no image cell: $(cat "$GV_OUT")"
expect_rc 0 "$GPUVET" matrix --json --image 5.7
expect_json "$GV_OUT" 'len(d["rows"])' 1

# --- a database of schema version 1, as the version before the image columns made it
python3 - "$T/old.db" "$T/root.json" <<'PY' || fail "making the version-1 database"
import hashlib, json, sqlite3, subprocess, sys
db, snap = sys.argv[1:3]
c = sqlite3.connect(db)
c.executescript("""
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE runs (id INTEGER PRIMARY KEY AUTOINCREMENT, run_key TEXT NOT NULL UNIQUE,
 kind TEXT NOT NULL, schema TEXT NOT NULL, schema_version INTEGER, gpuvet_version TEXT,
 created TEXT NOT NULL, recorded TEXT NOT NULL, source TEXT, hostname TEXT, machine_id TEXT,
 machine_key TEXT NOT NULL, gpu_ids TEXT, gpu_model TEXT, gpu_arch TEXT, gpu_count INTEGER,
 kernel TEXT, driver TEXT, rocm TEXT, cuda TEXT, torch TEXT, torch_build TEXT, device TEXT,
 suite TEXT, verdict TEXT, cases INTEGER, passed INTEGER, failed INTEGER, errors INTEGER,
 skipped INTEGER, worst_case TEXT, worst_bits_lost REAL, stack_key TEXT NOT NULL);
CREATE TABLE documents (run_id INTEGER PRIMARY KEY REFERENCES runs(id) ON DELETE CASCADE,
 encoding TEXT NOT NULL, bytes INTEGER NOT NULL, sha256 TEXT NOT NULL, data BLOB NOT NULL);
CREATE INDEX runs_machine ON runs(machine_key, created);
CREATE INDEX runs_stack ON runs(stack_key, created, verdict, machine_key) WHERE verdict IS NOT NULL;
INSERT INTO meta VALUES ('schema_version', '1'), ('created_by', 'old');
""")
doc = json.dumps({"schema": "gpuvet.results", "schema_version": 1, "created": "2026-10-01T00:00:00Z",
                  "snapshot": json.load(open(snap)), "summary": {"cases": 1, "pass": 1}},
                 separators=(",", ":")).encode()
open(db + ".doc", "wb").write(doc)
z = subprocess.run(["zstd", "-q", "-c", db + ".doc"], check=True, capture_output=True).stdout
sha = hashlib.sha256(doc).hexdigest()
c.execute("INSERT INTO runs (run_key, kind, schema, schema_version, created, recorded, source,"
          " hostname, machine_key, torch, verdict, cases, passed, stack_key) VALUES"
          " (?, 'check', 'gpuvet.results', 1, '2026-10-01T00:00:00Z', '2026-10-01T00:00:00Z',"
          " 'old.json', 'oldhost', 'host:oldhost', '2.6.0', 'pass', 1, 1, 'k')", (sha,))
c.execute("INSERT INTO documents VALUES (1, 'zstd+json', ?, ?, ?)", (len(doc), sha, z))
c.commit()
PY
version() { python3 -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute("SELECT value FROM meta WHERE key=?", ("schema_version",)).fetchone()[0])' "$1"; }
export GPUVET_DB="$T/old.db"
# read as it is, and left as it is
expect_rc 0 "$GPUVET" history list --json
expect_json "$GV_OUT" '[(r["hostname"], r["image_manifest_digest"], r["image_tags"]) for r in d["runs"]]' \
    "[('oldhost', None, [])]"
expect_rc 0 "$GPUVET" history show 1 --document -o "$T/old-doc.json"
expect_json "$T/old-doc.json" 'd["created"]' 2026-10-01T00:00:00Z
expect_rc 0 "$GPUVET" matrix --json
expect_json "$GV_OUT" '[(r["torch"], r.get("image")) for r in d["rows"]]' "[('2.6.0', None)]"
expect_rc 1 "$GPUVET" history good --image 5.7
expect_rc 0 "$GPUVET" history good --machine oldhost
[ "$(version "$T/old.db")" = 1 ] || fail "a reading command changed the schema version"
# a recording migrates it in place: the old run kept, the new one with its image
expect_rc 0 "$GPUVET" history import "$T/r1.json"
[ "$(version "$T/old.db")" = 4 ] || fail "recording did not migrate to version 4: $(version "$T/old.db")"
expect_rc 0 "$GPUVET" history list --json
expect_json "$GV_OUT" 'sorted((r["source"].rsplit("/",1)[-1], r["image_tag"]) for r in d["runs"])' \
    "[('old.json', None), ('r1.json', '5.7')]"
expect_rc 0 "$GPUVET" history good --json --image 5.7
expect_json "$GV_OUT" 'd["run"]["image_manifest_digest"]' "$M1"
expect_rc 0 "$GPUVET" history check
echo "ok"
