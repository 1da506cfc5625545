#!/usr/bin/env bash
# The digest cache of big library files: a second snapshot reuses digests, a
# file rewritten in place with the same size and mtime is hashed again (its
# ctime changed), and GPUVET_HASH_CACHE=0 writes no cache. Digests are checked
# against sha256sum.
set -euo pipefail
: "${GPUVET:?}" "${GV_TEST_TMP:?}"
command -v python3 >/dev/null || { echo "skip: python3 needed"; exit 77; }
mkdir -p "$GV_TEST_TMP"
tmp=$(mktemp -d "$GV_TEST_TMP/hcache.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
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
echo "ok: cache reused, invalidated by an in-place rewrite, and off with GPUVET_HASH_CACHE=0"
