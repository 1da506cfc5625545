#!/bin/bash
# --record on ab (both sides recorded once, also with GPUVET_RECORD=1, which the
# sides' own check processes must not act on as well) and on torch capture (the
# capture's index, with the PyTorch that ran it), and import of a .gvcap; the
# columns checked against the files as python3 reads them.
set -u
. "$(dirname "$0")/lib.sh"
gv_workdir T
export XDG_CACHE_HOME="$T/cache" XDG_DATA_HOME="$T/data"
unset GPUVET_RECORD
export GPUVET_DB="$T/h.db"
# shellcheck source=tests/cli/torch_env.bash
source "$GV_SRC/tests/cli/torch_env.bash"
runs() { "$GPUVET" history list --limit 1000 --json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["runs"]))'; }

# --- ab: the two sides' results, each recorded once
"$GPUVET" ab --a system --b env=GPUVET_UNUSED=1 --device cpu --only 'softmax.f16.*' --keep "$T/ab" --record \
    > /dev/null 2> "$T/err" || fail "ab --record: $(cat "$T/err")"
[ "$(grep -c 'recorded as run' "$T/err")" = 2 ] || fail "ab should record two runs: $(cat "$T/err")"
[ "$(runs)" = 2 ] || fail "expected 2 runs after ab, got $(runs)"
"$GPUVET" history import "$T/ab/a.json" "$T/ab/b.json" 2> "$T/err" || fail "import of ab's files"
[ "$(grep -c 'already recorded' "$T/err")" = 2 ] || fail "ab's files were not the recorded runs"
GPUVET_RECORD=1 "$GPUVET" ab --a system --b system --device cpu --only 'softmax.f16.*' > /dev/null 2> "$T/err" ||
    fail "ab with GPUVET_RECORD=1: $(cat "$T/err")"
[ "$(grep -c 'recorded as run' "$T/err")" = 2 ] || fail "GPUVET_RECORD=1 ab: expected 2 recordings: $(cat "$T/err")"
[ "$(runs)" = 4 ] || fail "expected 4 runs, got $(runs)"

# --- torch capture --record: the capture's index, with the PyTorch that ran it
host_torch
"$GPUVET" torch capture --model "$GV_SRC/tests/cli/models/mlp.py:make" --python "$HOST_PY" --device cpu \
    -o "$T/m.gvcap" --record > /dev/null 2> "$T/err" || fail "torch capture --record: $(cat "$T/err")"
grep -q "recorded as run 5" "$T/err" || fail "the capture was not recorded: $(cat "$T/err")"
"$GPUVET" history import "$T/m.gvcap" 2> "$T/err" || fail "import of a .gvcap"
grep -q "already recorded as run 5" "$T/err" || fail "the imported capture is not the recorded one: $(cat "$T/err")"
"$GPUVET" history show 5 --json > "$T/show.json" || fail "show 5"
"$GPUVET" history show 5 --document -o "$T/index.json" || fail "show --document of a capture"
python3 - "$T" <<'PY' || fail "capture columns"
import json, struct, sys
T = sys.argv[1]
raw = open(T + "/m.gvcap", "rb").read()
off, ln = struct.unpack("<QQ", raw[-24:-8])
index = json.loads(raw[off:off + ln])
r = json.load(open(T + "/show.json"))["run"]
h = index["header"]
assert r["kind"] == "capture" and r["schema"] == index["schema"], r
assert r["created"] == h["created"], (r["created"], h["created"])
assert r["torch"] == h["device"]["torch"]["version"], (r["torch"], h["device"]["torch"]["version"])
assert r["gpu_model"] == h["device"]["name"], r["gpu_model"]
assert r["verdict"] is None
assert r["kernel"] == h["snapshot"]["host"]["kernel"]["release"]
assert json.load(open(T + "/index.json")) == index, "the recorded index differs from the file's"
PY
# the matrix holds the four judged ab sides, not the capture
"$GPUVET" matrix --json | python3 -c 'import json,sys; m=json.load(sys.stdin); sys.exit(sum(r["runs"] for r in m["rows"]) != 4)' ||
    fail "the matrix should count the 4 ab sides only"
# --- --db URL on a recording command: records there (implying --record), not in $GPUVET_DB
before=$(runs)
"$GPUVET" check --suite quick --device cpu --only 'softmax.f16.*' --db "$T/other.db" -o "$T/c.json" \
    > /dev/null 2> "$T/err" || fail "check --db: $(cat "$T/err")"
"$GPUVET" snapshot --no-hash --db "$T/other.db" -o "$T/s.json" 2> "$T/err" || fail "snapshot --db: $(cat "$T/err")"
"$GPUVET" ab --a system --b system --device cpu --only 'softmax.f16.*' --db "$T/other.db" > /dev/null 2> "$T/err" ||
    fail "ab --db: $(cat "$T/err")"
[ "$(runs)" = "$before" ] || fail "--db recorded into \$GPUVET_DB as well"
n=$("$GPUVET" history list --db "$T/other.db" --json | python3 -c 'import json,sys; r=json.load(sys.stdin)["runs"]; print(",".join(sorted(x["kind"] for x in r)))')
[ "$n" = "check,check,check,snapshot" ] || fail "--db should hold check, snapshot and ab's two sides: $n"
echo "ok: ab --record, GPUVET_RECORD=1 ab, torch capture --record, import of a capture, --db on check, snapshot and ab"
