#!/usr/bin/env bash
# gpuvet snapshot --pid: a real process that dlopen()s real shared objects
# built here with gcc (two HIP runtimes with different SONAMEs, two copies of
# one rocBLAS SONAME, one of them deleted after loading) is inspected through
# /proc/PID/maps. The expected paths are the ones this script loaded.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_cmd gcc "gcc not installed"
need_cmd python3 "python3 not installed"
[[ -r /proc/self/maps ]] || skip "no /proc"
gv_tmpdir T snapshot_pid
mkdir -p "$T/a" "$T/b"
pid=""
at_exit '[[ -n "$pid" ]] && kill "$pid" 2>/dev/null'

echo 'int gv_test_symbol(void) { return 1; }' >"$T/lib.c"
gcc -shared -fPIC -Wl,-soname,libamdhip64.so.5 -o "$T/a/libamdhip64.so.5" "$T/lib.c"
gcc -shared -fPIC -Wl,-soname,libamdhip64.so.6 -o "$T/b/libamdhip64.so.6" "$T/lib.c"
gcc -shared -fPIC -Wl,-soname,librocblas.so.4 -o "$T/a/librocblas.so.4" "$T/lib.c"
gcc -shared -fPIC -Wl,-soname,librocblas.so.4 -o "$T/b/librocblas.so.4" "$T/lib.c"
cat >"$T/prog.c" <<'C'
#include <dlfcn.h>
#include <stdio.h>
#include <unistd.h>
int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (!dlopen(argv[i], RTLD_NOW | RTLD_LOCAL)) {
            fprintf(stderr, "%s\n", dlerror());
            return 1;
        }
    printf("ready\n");
    fflush(stdout);
    sleep(120);
    return 0;
}
C
gcc -o "$T/prog" "$T/prog.c" -ldl
"$T/prog" "$T/a/libamdhip64.so.5" "$T/b/libamdhip64.so.6" "$T/a/librocblas.so.4" \
    "$T/b/librocblas.so.4" >"$T/prog.out" 2>&1 &
pid=$!
for _ in $(seq 100); do grep -q ready "$T/prog.out" 2>/dev/null && break; sleep 0.1; done
grep -q ready "$T/prog.out" || fail "test program did not start: $(cat "$T/prog.out")"
rm "$T/b/librocblas.so.4"   # still mapped: maps says "(deleted)"

timeout 60 "$GPUVET" snapshot --no-hash --pid "$pid" -o "$T/s.json" || fail "snapshot --pid failed"
S="$T/s.json"
expect_json "$S" "d['process']['collected']" True
expect_json "$S" "d['process']['pid']" "$pid"
expect_json "$S" "d['process']['exe']" "$T/prog"
expect_json "$S" "sorted((m['name'], m['path'], m.get('deleted', False)) for m in d['process']['mapped'])" \
    "[('hip-runtime', '$T/a/libamdhip64.so.5', False), ('hip-runtime', '$T/b/libamdhip64.so.6', False), ('rocblas', '$T/a/librocblas.so.4', False), ('rocblas', '$T/b/librocblas.so.4', True)]"
expect_json "$S" "sorted((c['name'], len(c['paths'])) for c in d['process']['conflicts'])" \
    "[('hip-runtime', 2), ('rocblas', 2)]"
echo "ok: mapped GPU libraries and conflicts of pid $pid"

# a process that does not exist is "not collected", not an error or an empty list
kill "$pid"; wait "$pid" 2>/dev/null || true
timeout 60 "$GPUVET" snapshot --no-hash --pid "$pid" -o "$T/gone.json" || fail "snapshot of a gone pid failed"
expect_json "$T/gone.json" "d['process']['collected']" False
expect_json "$T/gone.json" "d['process']['reason']" "no such process"
pid=""
# --pid cannot inspect a --root image
set +e
"$GPUVET" snapshot --pid 1 --root "$T" >/dev/null 2>&1
rc=$?
set -e
[[ $rc -eq 2 ]] || fail "--pid with --root should be a usage error (2), got $rc"
echo "ok: gone process and --root combination"
