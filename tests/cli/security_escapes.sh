#!/usr/bin/env bash
# Issue 31, class 8: text from a document never reaches the terminal raw. Snapshots
# whose strings hold an OSC "set the window title" sequence (ESC ]0;pwned BEL), a C1
# CSI (U+009B) and a bidirectional override (U+202E) are fed to diff, doctor
# --snapshot and plan rollback --to (its messages go through cli.c's printer); no byte
# of what they write (stdout and stderr) is ESC, BEL, or those code points, and the
# sequence shows escaped ("\x1b]0;pwned\x07").
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_cmd python3 "python3 is needed to edit the JSON"
gv_workdir T
cd "$T"

python3 - "$GV_SRC/tests/data" <<'PY'
import json, sys
d = sys.argv[1]
E = "\x1b]0;pwned\x07\u009b2J\u202e"
for n in ("before", "after"):
    s = json.load(open("%s/diff/%s.json" % (d, n)))
    s["python"]["environments"][0]["prefix"] = "/home/u/venv" + E + n
    json.dump(s, open(n + ".json", "w"))
s = json.load(open("%s/doctor/broken-amd.json" % d))
s["python"]["environments"][0]["prefix"] = "/home/alice/venv" + E
s["loader"]["ld_library_path"][0] = "/opt/rocm-5.7.0/lib" + E
json.dump(s, open("doctor.json", "w"))
PY

run() { # NAME ARGS...: the command's stdout and stderr in NAME.out; exit 0 or 1 expected
    local name=$1 rc=0
    shift
    "$GPUVET" "$@" >"$name.out" 2>&1 || rc=$?
    [[ $rc == 0 || $rc == 1 ]] || fail "$name: exit $rc: $(head -c 600 "$name.out")"
}
run diff diff before.json after.json
run doctor doctor --snapshot doctor.json
run plan plan rollback --to before.json --from after.json
rc=0
"$GPUVET" diff $'bad\x1b]0;pwned\x07' after.json >usage.out 2>&1 || rc=$?
[[ $rc == 3 ]] || fail "diff of a missing file exited $rc"

python3 - diff.out doctor.out plan.out <<'PY'
import sys
for f in sys.argv[1:]:
    b = open(f, "rb").read()
    for bad in (b"\x1b", b"\x07", b"\x9b", "\u009b".encode(), "\u202e".encode()):
        assert bad not in b, "%s: raw %r in the output" % (f, bad)
    assert b"\\x1b]0;pwned\\x07\\u009b2J\\u202e" in b, "%s: the document's string is not shown escaped:\n%s" % (f, b[:3000])
PY
grep -q 'x1b' usage.out && ! grep -q $'\x1b' usage.out || fail "a file name in an error message is not escaped: $(cat usage.out)"
echo "escaped in diff, doctor, plan and error messages"
