#!/usr/bin/env bash
# The digest cache of big library files: a second snapshot reuses digests, a
# file rewritten in place with the same size and mtime is hashed again (its
# ctime changed), and GPUVET_HASH_CACHE=0 writes no cache. Digests are checked
# against sha256sum.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_cmd python3 "python3 needed"
gv_tmpdir tmp hcache
L=$tmp/root/opt/rocm-6.0.0/lib
mkdir -p "$L"
f=$L/librocblas.so.4.0.0
head -c $((3 << 20)) /dev/urandom >"$f"
digest() { # SNAPSHOT
    python3 -c 'import json,sys; print([i.get("sha256") for i in json.load(open(sys.argv[1]))["libraries"]["items"] if i["path"].endswith("librocblas.so.4.0.0")][0])' "$1"
}
export XDG_CACHE_HOME=$tmp/cache
"$GPUVET" snapshot --root "$tmp/root" -o "$tmp/a.json"
want=$(sha256sum "$f" | cut -d' ' -f1)
[[ $(digest "$tmp/a.json") == "$want" ]] || { echo "FAILED: first digest"; exit 1; }
c=$XDG_CACHE_HOME/gpuvet/sha256-cache.json
[[ -f $c && $(stat -c %a "$c") == 600 ]] || { echo "FAILED: cache file $c missing or not mode 600"; exit 1; }
grep -q "$want" "$c" || { echo "FAILED: digest not cached"; exit 1; }
"$GPUVET" snapshot --root "$tmp/root" -o "$tmp/b.json"
[[ $(digest "$tmp/b.json") == "$want" ]] || { echo "FAILED: cached digest"; exit 1; }
# same size, same mtime, other content
touch -r "$f" "$tmp/stamp"
printf 'X' | dd of="$f" bs=1 seek=1000 conv=notrunc status=none
touch -r "$tmp/stamp" "$f"
want2=$(sha256sum "$f" | cut -d' ' -f1)
[[ $want2 != "$want" ]]
"$GPUVET" snapshot --root "$tmp/root" -o "$tmp/c.json"
[[ $(digest "$tmp/c.json") == "$want2" ]] || { echo "FAILED: stale digest served after an in-place change"; exit 1; }
XDG_CACHE_HOME=$tmp/cache2 GPUVET_HASH_CACHE=0 "$GPUVET" snapshot --root "$tmp/root" -o "$tmp/d.json"
[[ $(digest "$tmp/d.json") == "$want2" ]] || { echo "FAILED: digest without cache"; exit 1; }
[[ ! -e $tmp/cache2/gpuvet/sha256-cache.json ]] || { echo "FAILED: GPUVET_HASH_CACHE=0 wrote a cache"; exit 1; }

# Two gpuvet processes at once: A reads the cache, hashes its file and stops
# (GPUVET_TEST_STOP_AT, at the point it would store) while B runs from start to end;
# then A goes on. Both digests must be in the cache: A merges into what B wrote.
for x in A B; do
    mkdir -p "$tmp/$x/opt/rocm-6.0.0/lib"
    head -c $((2 << 20)) /dev/urandom >"$tmp/$x/opt/rocm-6.0.0/lib/librocblas.so.4.0.0"
done
export XDG_CACHE_HOME=$tmp/cache3
GPUVET_TEST_STOP_AT=hashcache-store "$GPUVET" snapshot --root "$tmp/A" -o "$tmp/A.json" &
pa=$!
for _ in $(seq 6000); do # until A is stopped (a limit, not a timing assumption)
    st=$(awk '{print $3}' "/proc/$pa/stat" 2>/dev/null || echo gone)
    [[ $st == T || $st == gone ]] && break
    sleep 0.1
done
[[ $st == T ]] || { echo "FAILED: A never reached the store"; exit 1; }
"$GPUVET" snapshot --root "$tmp/B" -o "$tmp/B.json"
kill -CONT "$pa"
wait "$pa" || { echo "FAILED: A failed after it went on"; exit 1; }
c=$XDG_CACHE_HOME/gpuvet/sha256-cache.json
for x in A B; do
    want=$(sha256sum "$tmp/$x/opt/rocm-6.0.0/lib/librocblas.so.4.0.0" | cut -d' ' -f1)
    grep -q "$want" "$c" || { echo "FAILED: the digest of $x was lost from the cache"; exit 1; }
done
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert len(d["entries"]) == 2, d' "$c" ||
    { echo "FAILED: the cache does not hold exactly A's and B's entries"; exit 1; }
echo "ok: cache reused, invalidated by an in-place rewrite, off with GPUVET_HASH_CACHE=0, and two concurrent processes both keep their digests"
