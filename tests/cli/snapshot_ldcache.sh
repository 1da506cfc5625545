#!/usr/bin/env bash
# The loader as it really resolves: LD_LIBRARY_PATH, /etc/ld.so.cache, the
# default directories. In a scratch root whose cache the real ldconfig writes
# (ldconfig -r), an upgrade done by hand without running ldconfig (the conf
# file now names ROCm 6.0's directory, a second release's rocBLAS put first)
# must show in `snapshot` as stale_cache answers with what ldconfig would give,
# and in `doctor` as ldcache-stale errors whose fix is ldconfig; after the real
# ldconfig -r, neither. A corrupt cache is reported (loader.cache not
# collected, with the reason) and the directories' order is used.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
need_cmd python3 "python3 is needed to read the JSON"
need_cmd ldconfig "ldconfig is not installed"
need_cmd cc "cc is needed to build the libraries"
need_root "ldconfig -r needs root"
gv_tmpdir T ldcache
R=$T/root
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
mklib() { # DIR SONAME FILE
    mkdir -p "$R$1"
    printf 'int f(void){return 1;}\n' >"$T/f.c"
    cc -shared -fPIC -Wl,-soname,"$2" -o "$R$1/$3" "$T/f.c" || fail "cc $3"
    ln -sf "$3" "$R$1/$2"
}
q() { # SNAPSHOT PYTHON-EXPR : print the value
    python3 -c "import json,sys; d=json.load(open(sys.argv[1]))['loader']; r=d['resolved']; print($2)" "$1"
}
expect() { # SNAPSHOT EXPR WANT
    local got
    got=$(q "$1" "$2" 2>&1)
    [[ $got == "$3" ]] || fail "$2: got '$got', want '$3'"
}

mkdir -p "$R/etc/ld.so.conf.d" "$R/lib/x86_64-linux-gnu" "$R/usr/lib/x86_64-linux-gnu"
echo 'include /etc/ld.so.conf.d/*.conf' >"$R/etc/ld.so.conf"
mklib /opt/rocm-5.7.0/lib libamdhip64.so.5 libamdhip64.so.5.7.31921
mklib /opt/rocm-5.7.0/lib librocblas.so.3 librocblas.so.3.1.0
mklib /opt/rocm-6.0.0/lib libamdhip64.so.6 libamdhip64.so.6.0.32830
mklib /opt/rocm-6.0.0/lib librocblas.so.4 librocblas.so.4.0.0
mklib /opt/rocm-6.1.0/lib librocblas.so.4 librocblas.so.4.1.0
printf '/opt/rocm-5.7.0/lib\n/opt/rocm-6.0.0/lib\n' >"$R/etc/ld.so.conf.d/rocm.conf"
ldconfig -r "$R" || fail "ldconfig -r"

# 1. cache written by ldconfig: every answer agrees with the directories
"$GPUVET" snapshot --root "$R" -o "$T/s1.json" || fail "snapshot 1 exited $?"
expect "$T/s1.json" "d['cache']['collected'], d['cache']['entries'] >= 4" "True True"
expect "$T/s1.json" "[k for k, v in r.items() if v.get('stale_cache')]" "[]"
expect "$T/s1.json" "r['librocblas.so.4']['path']" "/opt/rocm-6.0.0/lib/librocblas.so.4.0.0"
"$GPUVET" doctor --root "$R" >"$T/d1.txt" 2>&1
grep -q "ldcache-stale" "$T/d1.txt" && fail "doctor reports ldcache-stale on a fresh cache"

# 2. by hand, no ldconfig: 5.7 dropped from the conf file, 6.1 put first
printf '/opt/rocm-6.1.0/lib\n/opt/rocm-6.0.0/lib\n' >"$R/etc/ld.so.conf.d/rocm.conf"
"$GPUVET" snapshot --root "$R" -o "$T/s2.json" || fail "snapshot 2 exited $?"
# the cache still hands out 5.7's runtime, which the directories no longer offer
expect "$T/s2.json" "r['libamdhip64.so.5']['found'], r['libamdhip64.so.5']['via'], r['libamdhip64.so.5']['path']" \
    "True ld.so.cache /opt/rocm-5.7.0/lib/libamdhip64.so.5.7.31921"
expect "$T/s2.json" "r['libamdhip64.so.5']['stale_cache'], r['libamdhip64.so.5']['ldconfig_would']['found']" "True False"
# rocBLAS: the cache keeps 6.0's, ldconfig would now take 6.1's
expect "$T/s2.json" "r['librocblas.so.4']['path'], r['librocblas.so.4']['ldconfig_would']['path']" \
    "/opt/rocm-6.0.0/lib/librocblas.so.4.0.0 /opt/rocm-6.1.0/lib/librocblas.so.4.1.0"
# 6.0's runtime was found before and still is (same directory, same cache entry)
expect "$T/s2.json" "r['libamdhip64.so.6'].get('stale_cache')" "None"
"$GPUVET" doctor --root "$R" >"$T/d2.txt" 2>&1
rc=$?
[[ $rc == 1 ]] || fail "doctor on the stale root exited $rc, want 1"
n=$(grep -c "\[ldcache-stale\]" "$T/d2.txt")
[[ $n == 3 ]] || fail "doctor: $n ldcache-stale findings, want 3 (libamdhip64.so.5 and librocblas.so.3 of 5.7, librocblas.so.4): $(grep ldcache "$T/d2.txt")"
grep -q "librocblas.so.4 loads /opt/rocm-6.0.0/lib/librocblas.so.4.0.0 through /etc/ld.so.cache, but the configured directories now give /opt/rocm-6.1.0/lib/librocblas.so.4.1.0" "$T/d2.txt" ||
    fail "doctor does not name both rocBLAS files: $(grep -A1 'librocblas' "$T/d2.txt" | head -3)"
grep -q "sudo ldconfig" "$T/d2.txt" || fail "doctor's fix is not ldconfig"

# 3. a library whose directory is configured but which the cache has never seen
mklib /opt/rocm-6.1.0/lib libhipblaslt.so.0 libhipblaslt.so.0.7.0
"$GPUVET" snapshot --root "$R" -o "$T/s3.json" || fail "snapshot 3 exited $?"
expect "$T/s3.json" "r['libhipblaslt.so.0']['found'], r['libhipblaslt.so.0']['ldconfig_would']['path']" \
    "False /opt/rocm-6.1.0/lib/libhipblaslt.so.0.7.0"
"$GPUVET" doctor --root "$R" >"$T/d3.txt" 2>&1
grep -q "libhipblaslt.so.0 is in /opt/rocm-6.1.0/lib/libhipblaslt.so.0.7.0 but not in /etc/ld.so.cache" "$T/d3.txt" ||
    fail "doctor does not report the library missing from the cache"

# 4. the real ldconfig: everything agrees again
ldconfig -r "$R" || fail "ldconfig -r (2)"
"$GPUVET" snapshot --root "$R" -o "$T/s4.json" || fail "snapshot 4 exited $?"
expect "$T/s4.json" "[k for k, v in r.items() if v.get('stale_cache')]" "[]"
expect "$T/s4.json" "r['librocblas.so.4']['path'], r['libamdhip64.so.5']['found']" \
    "/opt/rocm-6.1.0/lib/librocblas.so.4.1.0 False"
"$GPUVET" doctor --root "$R" >"$T/d4.txt" 2>&1
grep -q "ldcache-stale" "$T/d4.txt" && fail "doctor still reports ldcache-stale after ldconfig"

# 5. a corrupt cache: named, and the directories' order is used
head -c 100 /dev/urandom >"$R/etc/ld.so.cache"
"$GPUVET" snapshot --root "$R" -o "$T/s5.json" || fail "snapshot with a corrupt cache exited $?"
expect "$T/s5.json" "d['cache']['collected'], 'glibc-ld.so.cache' in d['cache']['reason']" "False True"
expect "$T/s5.json" "r['librocblas.so.4']['path'], r['librocblas.so.4']['via']" \
    "/opt/rocm-6.1.0/lib/librocblas.so.4.1.0 ld.so.conf"

[[ $fails == 0 ]] && echo "ok: stale ld.so.cache found and explained; fresh and corrupt caches handled"
exit $((fails > 0))
