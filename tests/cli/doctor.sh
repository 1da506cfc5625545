#!/usr/bin/env bash
# gpuvet doctor on saved snapshots: exit codes (0 clean, 1 error or --strict
# warning, 2 usage, 3 unreadable input), the gpuvet.doctor JSON document, the
# terminal report, and bad input (missing, corrupt, truncated, wrong schema,
# directory, looping symlink). Snapshots are the hand-written ones in
# tests/data/doctor; expectations follow from the rule definitions.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
need_cmd python3 "python3 is needed to read the JSON output"
gv_tmpdir tmp doctor
data=$GV_SRC/tests/data/doctor
fails=0
check_rc() { # WANT DESCRIPTION CMD... (counts a failure and goes on)
    local want=$1 what=$2; shift 2
    "$@" >"$tmp/out" 2>"$tmp/err"
    local rc=$?
    if [[ $rc != "$want" ]]; then
        echo "FAIL: $what: exit $rc, want $want"; sed 's/^/  | /' "$tmp/err" | head -5; fails=$((fails + 1))
    fi
}
expect_grep() { # FILE PATTERN DESCRIPTION
    grep -qE -- "$2" "$1" || { echo "FAIL: $3: no /$2/ in $1"; sed 's/^/  | /' "$1" | head -5; fails=$((fails + 1)); }
}

check_rc 0 "healthy snapshot" "$GPUVET" doctor --snapshot "$data/healthy-amd.json"
expect_grep "$tmp/out" "^0 errors, 0 warnings, 0 info; [0-9]+ rules, 0 not checked" "healthy summary"
check_rc 1 "broken snapshot" "$GPUVET" doctor --snapshot "$data/broken-amd.json"
for rule in gpu-access nouveau torch-companions hsa-override rocm-mixed-path rocm-unowned \
            visible-devices cuda-stub cuda-driver process-libs ld-preload numerics-env debug-env \
            unheld-packages; do
    expect_grep "$tmp/out" "\[$rule\]" "broken snapshot reports $rule"
done
expect_grep "$tmp/out" "^Errors \(11\)" "error heading"
expect_grep "$tmp/out" "fix +sudo usermod -a -G render,video alice" "fix line"
# piped output has no colour escapes
if grep -q $'\033' "$tmp/out"; then echo "FAIL: colour codes in piped output"; fails=$((fails + 1)); fi

# JSON document
check_rc 1 "broken --json" "$GPUVET" doctor --json --snapshot "$data/broken-amd.json"
python3 - "$tmp/out" <<'PY' || fails=$((fails + 1))
import json, sys
d = json.load(open(sys.argv[1]))
ok = True
def check(c, what):
    global ok
    if not c:
        print("FAIL: json:", what); ok = False
check(d["schema"] == "gpuvet.doctor" and d["schema_version"] == 1, "schema")
f = d["findings"]
sev = [x["severity"] for x in f]
check(sev == sorted(sev, key=["error", "warning", "info"].index), "sorted by severity")
check(d["summary"]["errors"] == sev.count("error") == 11, "error count %d" % sev.count("error"))
check(d["summary"]["warnings"] == sev.count("warning") == 4, "warning count")
for x in f:
    check(set(x) >= {"rule", "severity", "title", "evidence", "fix", "reference"}, "fields of %s" % x["rule"])
    check(all("path" in e and "value" in e for e in x["evidence"]), "evidence of %s" % x["rule"])
    if x["severity"] != "info":
        check(len(x["fix"]) > 0 and len(x["evidence"]) > 0, "fix and evidence of %s" % x["rule"])
hsa = [x for x in f if x["rule"] == "hsa-override"][0]
check(any(e["path"] == "environment.variables.HSA_OVERRIDE_GFX_VERSION" and e["value"] == "11.0.0"
          for e in hsa["evidence"]), "hsa evidence value")
sys.exit(0 if ok else 1)
PY

# --strict: warnings alone fail
python3 - "$data/healthy-amd.json" "$tmp/warn.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1])); s["environment"]["variables"]["AMD_SERIALIZE_KERNEL"] = "3"
json.dump(s, open(sys.argv[2], "w"))
PY
check_rc 0 "warning only" "$GPUVET" doctor --snapshot "$tmp/warn.json"
expect_grep "$tmp/out" "\[debug-env\]" "warning reported"
check_rc 1 "warning with --strict" "$GPUVET" doctor --strict --snapshot "$tmp/warn.json"

# sections not collected: notes only, never an error
python3 - "$data/healthy-amd.json" "$tmp/bare.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
for k in ["gpus", "permissions", "environment", "python", "loader", "libraries", "packages", "drivers", "stacks", "host"]:
    s[k] = {"collected": False, "reason": "no /sys under --root"}
json.dump(s, open(sys.argv[2], "w"))
PY
check_rc 0 "nothing collected" "$GPUVET" doctor --strict --snapshot "$tmp/bare.json"
expect_grep "$tmp/out" "^Not checked" "not-checked block"
expect_grep "$tmp/out" "^0 errors, 0 warnings, 0 info" "no verdicts"

# bad input: exit 3 and a message naming the file
check_rc 3 "missing file" "$GPUVET" doctor --snapshot "$tmp/nope.json"
expect_grep "$tmp/err" "nope.json" "missing file named"
head -c 300 "$data/healthy-amd.json" >"$tmp/trunc.json"
check_rc 3 "truncated file" "$GPUVET" doctor --snapshot "$tmp/trunc.json"
expect_grep "$tmp/err" "trunc.json" "truncated file named"
printf '\x00\xff\xfe garbage' >"$tmp/bin.json"
check_rc 3 "binary file" "$GPUVET" doctor --snapshot "$tmp/bin.json"
printf '{"schema": "gpuvet.results", "schema_version": 1}' >"$tmp/other.json"
check_rc 3 "other schema" "$GPUVET" doctor --snapshot "$tmp/other.json"
expect_grep "$tmp/err" "gpuvet.results|schema" "schema named"
printf '{"schema": "gpuvet.snapshot", "schema_version": 99}' >"$tmp/future.json"
check_rc 3 "newer schema version" "$GPUVET" doctor --snapshot "$tmp/future.json"
check_rc 3 "directory" "$GPUVET" doctor --snapshot "$tmp"
ln -s "$tmp/loop2" "$tmp/loop1"; ln -s "$tmp/loop1" "$tmp/loop2"
check_rc 3 "looping symlink" "$GPUVET" doctor --snapshot "$tmp/loop1"
check_rc 3 "--root not a directory" "$GPUVET" doctor --root "$tmp/nope"

# usage
check_rc 2 "both --snapshot and --root" "$GPUVET" doctor --snapshot "$data/healthy-amd.json" --root /
check_rc 2 "unknown option" "$GPUVET" doctor --bogus
check_rc 2 "stray argument" "$GPUVET" doctor extra
check_rc 0 "--help" "$GPUVET" doctor --help
expect_grep "$tmp/out" "--strict" "help text"
check_rc 0 "--list-rules" "$GPUVET" doctor --list-rules
[[ $(wc -l <"$tmp/out") -ge 20 ]] || { echo "FAIL: rule list too short"; fails=$((fails + 1)); }
check_rc 0 "--explain known" "$GPUVET" doctor --explain "RuntimeError: HIP error: invalid device function"
expect_grep "$tmp/out" "^meaning: " "explain output"
check_rc 1 "--explain unknown" "$GPUVET" doctor --explain "all is well"

# the live machine: a report, whatever it says, and valid JSON
"$GPUVET" doctor --json >"$tmp/live.json" 2>"$tmp/err"
rc=$?
if [[ $rc != 0 && $rc != 1 ]]; then echo "FAIL: live doctor exit $rc"; cat "$tmp/err"; fails=$((fails + 1)); fi
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["schema"]=="gpuvet.doctor"' "$tmp/live.json" ||
    { echo "FAIL: live JSON"; fails=$((fails + 1)); }

# the live environment is read (allowlisted names only) and secrets never reach the output
AMD_SERIALIZE_KERNEL=3 HF_TOKEN=sekrit-hf-4711 HIP_SECRET_KEY=sekrit-hip-4712 \
    "$GPUVET" doctor --json >"$tmp/live2.json" 2>"$tmp/err"
python3 - "$tmp/live2.json" <<'PY' || fails=$((fails + 1))
import json, sys
raw = open(sys.argv[1]).read()
d = json.loads(raw)
ok = any(f["rule"] == "debug-env" and "AMD_SERIALIZE_KERNEL=3" in f["title"] for f in d["findings"])
if not ok:
    print("FAIL: live AMD_SERIALIZE_KERNEL=3 not reported")
if "sekrit" in raw:
    print("FAIL: a secret value reached the doctor output"); ok = False
sys.exit(0 if ok else 1)
PY

[[ $fails == 0 ]] && echo "doctor cli: all checks passed"
exit $((fails > 0))
