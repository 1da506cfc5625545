#!/usr/bin/env bash
# gpuvet doctor --root end to end on fixture root filesystems:
#   - AMD's layout (amd-layout.sh): the clean layout has no errors and no
#     warnings; each misconfigured variant adds exactly its intended rule:
#       --link 5.7.0  rocm-link        (issue rule 9)
#       --stray       rocm-unowned     (issue rule 8)
#       --ldpath      rocm-mixed-path  (issue rule 8)
#   - the Debian trixie (ROCm 5.7) and sid (6.4) roots of debian-rocm.sh (built
#     and cached on first use): no errors.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
need_cmd python3 "python3 is needed to read the JSON output"
need_cmd gcc "gcc is needed by amd-layout.sh"
gv_tmpdir tmp doctor-fx
fails=0

doctor_root() { # NAME ROOT : writes $tmp/NAME.json, checks the exit code matches errors
    "$GPUVET" doctor --json --root "$2" >"$tmp/$1.json" 2>"$tmp/$1.err"
    local rc=$?
    python3 - "$tmp/$1.json" "$rc" <<'PY' || { echo "FAIL: $1: exit code / JSON"; fails=$((fails + 1)); }
import json, sys
d = json.load(open(sys.argv[1]))
errors = d["summary"]["errors"]
sys.exit(0 if int(sys.argv[2]) == (1 if errors else 0) else 1)
PY
}

verdicts() { # NAME : "rule:severity" of every error and warning, sorted
    python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
print(" ".join(sorted("%s:%s" % (f["rule"], f["severity"]) for f in d["findings"]
                      if f["severity"] in ("error", "warning"))))' "$tmp/$1.json"
}

bash "$GV_SRC/tests/fixtures/amd-layout.sh" "$tmp/clean" >/dev/null || { echo "FAIL: amd-layout.sh"; exit 1; }
# this shell's environment is not the image's: it must not leak into --root
HSA_OVERRIDE_GFX_VERSION=10.3 AMD_SERIALIZE_KERNEL=3 LD_LIBRARY_PATH=/opt/rocm-5.7.0/lib \
    doctor_root clean "$tmp/clean"
clean=$(verdicts clean)
[[ -z $clean ]] || { echo "FAIL: clean AMD layout has findings: $clean"; fails=$((fails + 1)); }

variant() { # NAME EXPECTED-RULE:SEVERITY ARGS...
    local name=$1 want=$2; shift 2
    bash "$GV_SRC/tests/fixtures/amd-layout.sh" "$tmp/$name" "$@" >/dev/null ||
        { echo "FAIL: amd-layout.sh $*"; fails=$((fails + 1)); return; }
    doctor_root "$name" "$tmp/$name"
    local got
    got=$(verdicts "$name")
    [[ $got == "$want" ]] || { echo "FAIL: variant $name: got '$got', want '$want'"; fails=$((fails + 1)); }
}
variant link "rocm-link:error" --link 5.7.0
variant stray "rocm-unowned:error" --stray
variant ldpath "rocm-mixed-path:error" --ldpath

# the fixes name the right release and paths
python3 - "$tmp" <<'PY' || fails=$((fails + 1))
import json, sys
t = sys.argv[1]
def fixes(name, rule):
    d = json.load(open("%s/%s.json" % (t, name)))
    return [x for f in d["findings"] if f["rule"] == rule for x in f["fix"]]
ok = True
for name, rule, text in [("link", "rocm-link", "sudo update-alternatives --set rocm /opt/rocm-6.0.0"),
                         ("stray", "rocm-unowned", "dpkg -S /opt/rocm-5.7.0/lib/librocblas.so.4.0.0"),
                         ("ldpath", "rocm-mixed-path", "/etc/profile.d/zz-rocm-ldpath.sh")]:
    if not any(text in x for x in fixes(name, rule)):
        print("FAIL: %s: no fix with %r in %r" % (name, text, fixes(name, rule))); ok = False
sys.exit(0 if ok else 1)
PY

# the AMD layout with make-pyenv.sh's Python environments copied in: a ROCm
# 2.3.0+rocm6.0 venv (bundled runtime: no finding) and a CUDA 2.9.0+cu130 venv,
# which on a ROCm install whose GPUs were not collected is a warning with the
# matching wheel and a keep-the-line alternative
if bash "$GV_SRC/tests/fixtures/make-pyenv.sh" "$tmp/py" >/dev/null 2>&1; then
    bash "$GV_SRC/tests/fixtures/amd-layout.sh" "$tmp/combo" >/dev/null
    cp -a "$tmp/py/opt/." "$tmp/combo/opt/"
    mkdir -p "$tmp/combo/root" && cp -a "$tmp/py/root/." "$tmp/combo/root/"
    doctor_root combo "$tmp/combo"
    got=$(verdicts combo)
    [[ $got == "torch-build:warning" ]] || { echo "FAIL: combo: got '$got'"; fails=$((fails + 1)); }
    python3 - "$tmp/combo.json" <<'PY' || fails=$((fails + 1))
import json, sys
d = json.load(open(sys.argv[1]))
f = [x for x in d["findings"] if x["rule"] == "torch-build"]
want = ["/root/.venv/bin/python3 -m pip install --index-url https://download.pytorch.org/whl/rocm6.0 torch==2.4.*",
        "torch==2.9.0+rocm6.4"]
ok = len(f) == 1 and all(any(w in x for x in f[0]["fix"]) for w in want)
ok = ok and any(e["value"] == "2.9.0+cu130" for e in f[0]["evidence"])
if not ok:
    print("FAIL: combo torch-build finding: %r" % f)
sys.exit(0 if ok else 1)
PY
else
    echo "FAIL: make-pyenv.sh"; fails=$((fails + 1))
fi

# The Debian roots (built and cached by debian-rocm.sh on first use).
for r in trixie-rocm sid-rocm; do
    root=$(bash "$GV_SRC/tests/fixtures/debian-rocm.sh" "$r" 2>/dev/null | tail -1)
    [[ -n $root && -d $root ]] || { echo "FAIL: debian-rocm.sh $r gave no root"; fails=$((fails + 1)); continue; }
    doctor_root "$r" "$root"
    got=$(verdicts "$r")
    [[ $got != *":error"* ]] || { echo "FAIL: $r has errors: $got"; fails=$((fails + 1)); }
    echo "debian root $r: ${got:-no errors or warnings}"
done

[[ $fails == 0 ]] && echo "doctor fixtures: all checks passed"
exit $((fails > 0))
