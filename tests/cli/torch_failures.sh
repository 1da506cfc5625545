#!/usr/bin/env bash
# The PyTorch device when things go wrong, with real interpreters:
#   - an interpreter without torch (a venv of /usr/bin/python3 without system packages),
#     one that is not Python at all, one that does not exist: a clear error, exit 3;
#   - the real torch whose import fails because LD_LIBRARY_PATH puts a wrong
#     libtorch_cpu first (the seed's undefined-symbol case): the error names the symbol,
#     the library that needs it and the one LD_LIBRARY_PATH supplied;
#   - a CPU-only build asked for a GPU: names the build and the doctor rule;
#   - mid-run: the worker killed, a case that hangs, a Python exception, an allocation
#     that cannot succeed: only that case fails, the next one passes (in a new worker
#     where the old one is gone), and the result file says how many workers there were.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/cli/torch_env.bash
source "$GV_SRC/tests/cli/torch_env.bash"
host_torch
gv_workdir T
export XDG_CACHE_HOME=$T/cache

expect_error() { # NAME PATTERN ARGS... : check must exit 3 and say PATTERN
    local name=$1 pattern=$2 rc=0
    shift 2
    "$GPUVET" check --only 'gemm.f32.256*' "$@" >"$T/$name.out" 2>"$T/$name.err" || rc=$?
    [[ $rc == 3 ]] || fail "$name: exit $rc, expected 3: $(cat "$T/$name.err")"
    grep -Eq "$pattern" "$T/$name.err" || fail "$name: the error does not say /$pattern/: $(cat "$T/$name.err")"
    echo "$name: $(head -c 300 "$T/$name.err")"
}

"$HOST_PY" -m venv --without-pip "$T/venv-notorch" || fail "python3 -m venv"
expect_error no-torch "venv-notorch/bin/python3 \(Python 3\.[0-9]+\) has no torch: No module named 'torch'" \
    --device torch:cpu --python "$T/venv-notorch/bin/python3"
expect_error not-python "the PyTorch worker \(/bin/false\) exited with status 1 before answering" \
    --device torch:cpu --python /bin/false
expect_error missing "interpreter /nonexistent/python3: No such file or directory" \
    --device torch:cpu --python /nonexistent/python3
expect_error cpu-build "torch [0-9.a-z+]+ \(/usr/lib/python3/dist-packages/torch\) is a CPU-only build.*rule torch-build" \
    --device torch:cuda:0 --python "$HOST_PY"

# a real wrong library first on LD_LIBRARY_PATH: a libtorch_cpu with the right SONAME and
# none of the symbols
soname=$(objdump -p "$("$HOST_PY" -c 'import glob; print(sorted(glob.glob("/usr/lib/x86_64-linux-gnu/libtorch_cpu.so.*"))[0])')" |
    awk '/SONAME/ {print $2}')
[[ -n $soname ]] || fail "cannot read libtorch_cpu's SONAME"
mkdir -p "$T/stub"
echo 'int gv_stub(void) { return 0; }' >"$T/stub/s.c"
gcc -shared -fPIC -Wl,-soname,"$soname" -o "$T/stub/$soname" "$T/stub/s.c"
LD_LIBRARY_PATH=$T/stub expect_error undefined-symbol \
    "import torch failed: /[^ ]+ needs the symbol [^ ]+, which no loaded library defines; the library that should define it comes from LD_LIBRARY_PATH: $T/stub/$soname" \
    --device torch:cpu --python "$HOST_PY"

# mid-run faults: every softmax case fails, the others pass
ONLY='softmax.*,sum.*,layernorm.*,mean.*'
fault() { # FAULT [env...]: run with the fault injected into the softmax cases
    local f=$1 rc=0
    shift
    env GPUVET_TEST_FAULT="$f" GPUVET_TEST_FAULT_CASE=softmax "$@" "$GPUVET" check --device torch:cpu \
        --python "$HOST_PY" --only "$ONLY" --json >"$T/fault-$f.json" 2>"$T/fault-$f.err" || rc=$?
    [[ $rc == 1 ]] || fail "fault $f: exit $rc, expected 1: $(cat "$T/fault-$f.err")"
    python3 - "$T/fault-$f.json" "$f" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); f = sys.argv[2]
want = {"kill": "died of signal 9", "hang": "did not answer within",
        "raise": "ValueError: gpuvet test fault in", "oom": "can't allocate memory"}[f]
soft = [c for c in d["cases"] if c["id"].startswith("softmax.")]
rest = [c for c in d["cases"] if not c["id"].startswith("softmax.")]
assert soft and rest, d["cases"]
for c in soft:
    assert c["verdict"] == "error" and want in c["error"], (f, c["id"], c["error"])
for c in rest:  # 1.13 has no fp16 CPU kernels for some: skipped, never an error
    assert c["verdict"] in ("pass", "skipped"), (f, c["id"], c["verdict"], c["error"])
assert any(c["verdict"] == "pass" for c in rest)
w = d["device"]["description"]["worker"]
# a dead or hung worker is replaced for the next case; an exception leaves it serving
if f in ("kill", "hang"):
    assert w["restarts"] == len(soft) and "after softmax." in w["last_restart_reason"], w
else:
    assert w["restarts"] == 0, w
print("fault %s: %d softmax cases failed (%s), %d others ran, %d worker restarts"
      % (f, len(soft), want, len(rest), w["restarts"]))
PY
}
fault kill
fault raise
fault oom
fault hang GPUVET_CASE_TIMEOUT=2
echo "torch failure paths: clear errors, and one bad case never takes the run down"
