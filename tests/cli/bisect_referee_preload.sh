#!/usr/bin/env bash
# bisect's float64 referee against a library that sets MXCSR's FTZ and DAZ bits when it
# loads (as the start-up code of a library linked with -ffast-math does), issue 35:
#   - B = LD_PRELOAD of it: the referee starts without LD_PRELOAD; the first multiply of
#     tests/cli/models/subnormal.py is named first, no op more accurate in B, the cause
#     named (gpuvet, loaded with it too, puts its own floating-point mode back);
#   - the interpreter itself loads a library that sets FTZ/DAZ in every thread it starts (a
#     wrapper given as --python, which the referee starts too): flush-denormal forced off on
#     the referee's main thread does not reach its thread pool, the canary fails, bisect says
#     "no trustworthy referee: ..." and judges no op more or less accurate.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/cli/bisect_referee_lib.bash
source "$GV_SRC/tests/cli/bisect_referee_lib.bash"
fast_lib
rc=0
ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0 \
    LD_PRELOAD=$T/libfast.so "$GPUVET" torch bisect a.gvcap --python "$HOST_PY" --device cpu \
    -o pre.json >pre.txt 2>&1 || rc=$?
[[ $rc == 1 ]] || fail "bisect under a preloaded FTZ/DAZ library exited $rc: $(cat pre.txt)"
check_ftz pre.json LD_PRELOAD
python3 - pre.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert "LD_PRELOAD" in d["referee"]["dropped_variables"], d["referee"]
PY

cat >threads.c <<'C'
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <xmmintrin.h>
struct start { void *(*fn)(void *); void *arg; };
static void *flushing(void *p)
{
    struct start s = *(struct start *)p;
    free(p);
    _mm_setcsr(_mm_getcsr() | 0x8040);
    return s.fn(s.arg);
}
int pthread_create(pthread_t *t, const pthread_attr_t *a, void *(*fn)(void *), void *arg)
{
    int (*real)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *) =
        (int (*)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *))dlsym(
            RTLD_NEXT, "pthread_create");
    struct start *s = malloc(sizeof *s);
    if (!s || !real)
        abort();
    s->fn = fn;
    s->arg = arg;
    return real(t, a, flushing, s);
}
C
cc -shared -fPIC -o "$T/libthreads.so" threads.c -ldl -pthread || fail "cannot build the thread library"
printf '#!/bin/sh\nLD_PRELOAD=%s exec %s "$@"\n' "$T/libthreads.so" "$HOST_PY" >fastpy
chmod +x fastpy
rc=0
"$GPUVET" torch bisect a.gvcap --python "$T/fastpy" --device cpu -o bad.json >bad.txt 2>&1 || rc=$?
[[ $rc == 3 ]] || fail "bisect with a flushing interpreter exited $rc, not 3 (cannot judge): $(cat bad.txt)"
grep -q "^cannot judge (the command exits 3): no trustworthy referee: " bad.txt ||
    fail "bisect's text does not say it cannot judge: $(tail -3 bad.txt)"
python3 - bad.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
ref, s = d["referee"], d["summary"]
assert ref["trusted"] is False, ref
assert d["cannot_judge"].startswith("no trustworthy referee: "), d.get("cannot_judge")
assert "(DAZ)" in d["cannot_judge"] or "(FTZ)" in d["cannot_judge"], d["cannot_judge"]
assert ref["canary"]["subnormal_sum"] != ref["canary"]["subnormal_sum_expected"], ref["canary"]
assert ref["canary"]["fp_mode"]["daz"] == "some threads", ref["canary"]
assert s["more_accurate"] == s["less_accurate"] == s["equally_accurate"] == 0, s
assert not d["culprits"], s
print("untrusted referee:", d["cannot_judge"])
PY
echo "the referee dropped a preloaded FTZ/DAZ library and refused a flushing interpreter"
