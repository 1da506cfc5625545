# Sourced by the bisect_referee*.sh tests (bisect's float64 referee, docs/capture.md "The
# referee"): real PyTorch on the CPU, a work directory $T made the current one (bisect runs
# a capture's model from there), the model tests/cli/models/subnormal.py, captured in A
# (plain) into $T/a.gvcap.
#   fast_lib        builds $T/libfast.so, which sets MXCSR's FTZ and DAZ bits when it loads
#                   (as the start-up code of a library linked with -ffast-math does)
#   check_ftz BISECT.json HOW: B flushes subnormals: the first multiply named first, only
#                   multiplies culprits, no op more accurate in B, the referee's canary held,
#                   "B flushes subnormals to zero (FTZ/DAZ); A does not" the cause
#   referee_digests BISECT.json...: every op's referee digests and A's error against the
#                   referee, the same in every report (they depend on nothing of B)
# shellcheck source=tests/cli/torch_env.bash
source "$GV_SRC/tests/cli/torch_env.bash"
host_torch
gv_workdir T
export XDG_CACHE_HOME=$T/cache
cd "$T"
cp "$GV_SRC/tests/cli/models/subnormal.py" .
"$GPUVET" torch capture --model subnormal.py:make --device cpu --python "$HOST_PY" -o a.gvcap \
    >cap.txt 2>&1 || fail "capture: $(cat cap.txt)"
fast_lib() {
    [[ $(uname -m) == x86_64 ]] || skip "the FTZ/DAZ library sets x86's MXCSR"
    need_cmd cc "the FTZ/DAZ library is compiled here"
    cat >fast.c <<'C'
#include <xmmintrin.h>
__attribute__((constructor)) static void flush(void) { _mm_setcsr(_mm_getcsr() | 0x8040); }
C
    cc -shared -fPIC -o "$T/libfast.so" fast.c || fail "cannot build the FTZ/DAZ library"
}
referee_digests() {
    python3 - "$@" <<'PY'
import json, sys
seen = {}
for path in sys.argv[1:]:
    d = json.load(open(path))
    assert d["referee"]["trusted"], (path, d["referee"])
    got = []
    for op in d["ops"]:
        for o in op.get("outputs", []):
            got.append((op["op"], o.get("error_a"), o["referee_sha256"]))
    assert len(got) == len(d["ops"]) >= 5, (path, got)
    for k, (op, ea, sha) in enumerate(got):
        was = seen.setdefault(k, (op, ea, sha, path))
        assert was[:3] == (op, ea, sha), ("op %d: the referee differs" % op, was, path, (ea, sha))
print("referee digests identical in %d reports" % len(sys.argv[1:]))
PY
}
check_ftz() {
    python3 - "$@" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); how = sys.argv[2]
s = d["summary"]
assert s["more_accurate"] == 0, (how, "an op judged more accurate in B", s)
ref = d["referee"]
assert ref["trusted"] and "cannot_judge" not in d, (how, ref)
c = ref["canary"]
assert c["subnormal_sum"] == c["subnormal_sum_expected"] > 0, c
assert c["product_sum"] == c["product_sum_expected"] > 0, c
mode = lambda m: (m["ftz"], m["daz"], "thread pool" in m["probed"])
assert mode(c["fp_mode"]) == ("off", "off", True), c
assert c["threads"] == c["threads_asked"] > 1, c
cul = d["culprits"]
assert cul and cul[0]["op"] == 0 and cul[0]["name"] == "aten.mul.Tensor", (how, cul)
assert [o["name"] for o in cul] == ["aten.mul.Tensor"] * len(cul), (how, cul)
for op in d["ops"]:
    for o in op.get("outputs", []):
        assert len(o.get("referee_sha256", "")) == 64, (how, op)
# the second multiply reads A's subnormals: B (DAZ) reads zeros, the referee does not
second = d["ops"][1]["outputs"][0]
assert second["error_a"] == 0 and second["error_b"] > 0, (how, second)
assert mode(d["device_b"]["fp_mode"]) == ("on", "on", True), d["device_b"].get("fp_mode")
assert mode(d["device_a"]["fp_mode"]) == ("off", "off", True), d["device_a"].get("fp_mode")
texts = [x["text"] for x in d["causes"]]
assert texts == ["B flushes subnormals to zero (FTZ/DAZ); A does not"], (how, d["causes"])
assert "Intel" in d["causes"][0]["source"] and "set_flush_denormal" in d["causes"][0]["source"]
print("%s: culprits %s, no op more accurate, the referee's canary held" %
      (how, [o["op"] for o in cul]))
PY
}

