#!/usr/bin/env bash
# Hostile library directories: broken and looping symlinks, a truncated ELF, an
# empty file, a 2 GiB sparse file named like a library, a FIFO and a directory
# named like libraries, a file nobody may read, garbage torch metadata. The
# snapshot must finish (no hang, no crash) and account for every one of them:
# an item with an "error" naming the file, or a "skipped" entry with a reason.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_cmd python3 "python3 needed"
gv_tmpdir tmp bad
chmod 755 "$tmp"
at_exit 'chmod -R u+rwx "$tmp" 2>/dev/null'
r=$tmp/root
L=$r/opt/rocm-9.9.9/lib
mkdir -p "$L" "$r/opt/rocm-9.9.9/.info"
echo 9.9.9-1 >"$r/opt/rocm-9.9.9/.info/version"
printf 'int f(void) { return 1; }\n' >"$tmp/f.c"
gcc -shared -fPIC -Wl,-soname,libamdhip64.so.9 "$tmp/f.c" -o "$L/libamdhip64.so.9.9.99999"
ln -s libamdhip64.so.9.9.99999 "$L/libamdhip64.so.9"
ln -s libamdhip64.so.9.9.00000 "$L/libamdhip64.so"             # broken
ln -s librocblas.so.x "$L/librocblas.so"; ln -s librocblas.so "$L/librocblas.so.x"  # loop
ln -s /opt/rocm-9.9.9/lib/libhipblas.so.9 "$L/libhipblas.so.9"  # loops onto itself
head -c 200 "$L/libamdhip64.so.9.9.99999" >"$L/libMIOpen.so.9.0.0"  # truncated ELF
truncate -s 2G "$L/libamd_comgr.so.9"                          # sparse, 2 GiB
: >"$L/libhiprtc.so.9.9.99999"                                 # empty
mkfifo "$L/librocsolver.so.9"                                  # would block a plain open
mkdir "$L/librocfft.so.9"
ln -s librocfft.so.9 "$L/libhsa-runtime64.so.1"                # link to a directory
cp "$L/libamdhip64.so.9.9.99999" "$L/librccl.so.9.9"
chmod 000 "$L/librccl.so.9.9"
ln -s /opt/rocm "$r/opt/rocm"                                  # /opt/rocm loops
# absolute links must resolve inside the root, never to the host's files
ln -s /etc/passwd "$L/libhipfft.so.9"                          # absent in the root
mkdir -p "$r/opt/rocm-8.0.0"
ln -s /usr/lib/x86_64-linux-gnu "$r/opt/rocm-8.0.0/lib"        # absent in the root
mkdir -p "$r/opt/rocm-8.0.0/.info"
ln -s /etc/os-release "$r/opt/rocm-8.0.0/.info/version"        # the host has one, the root not
S=$r/opt/venv/lib/python3.11/site-packages
mkdir -p "$S/torch/lib" "$S/torch-2.3.0.dist-info"
head -c 4096 /dev/urandom >"$S/torch/version.py"
mkfifo "$S/torch-2.3.0.dist-info/METADATA"
head -c 300 "$L/libamdhip64.so.9.9.99999" >"$S/torch/lib/libtorch_hip.so"
mkfifo "$S/torch/lib/libamdhip64.so"

run() { # OUT [as-user...]
    local out=$1 rc=0
    shift
    timeout 120 "$@" "$GPUVET" snapshot --root "$r" -o "$out" || rc=$?
    if [[ $rc -ne 0 ]]; then echo "FAILED: snapshot exited $rc (124 = hang)"; exit 1; fi
}
run "$tmp/snap.json"

check() { # SNAPSHOT UNREADABLE(0/1)
python3 - "$1" "$2" <<'PY'
import json, sys
snap, unreadable = json.load(open(sys.argv[1])), sys.argv[2] == "1"
L = "/opt/rocm-9.9.9/lib/"
items = {i["path"]: i for i in snap["libraries"]["items"]}
skipped = {s["path"]: s["reason"] for s in snap["libraries"]["skipped"]}
fails = []
def check(c, w):
    if not c: fails.append(w)
def err(name, *words):
    it = items.get(L + name)
    check(it is not None and "error" in it, "%s: item with an error (%r)" % (name, it))
    if it and "error" in it:
        for w in words:
            check(w.lower() in it["error"].lower(), "%s: error %r mentions %r" % (name, it["error"], w))
def skip(name, *words):
    check(L + name in skipped, "%s skipped (%r)" % (name, skipped))
    for w in words:
        check(w.lower() in skipped.get(L + name, "").lower(), "%s: reason %r mentions %r" % (name, skipped.get(L + name), w))
good = items.get(L + "libamdhip64.so.9.9.99999", {})
check(good.get("soname") == "libamdhip64.so.9" and "error" not in good, "the good file is intact: %r" % good)
check(good.get("links") == [L + "libamdhip64.so.9"], "good file links %r" % good.get("links"))
skip("libamdhip64.so", "broken")
skip("librocblas.so", "symbolic links")
skip("librocblas.so.x", "symbolic links")
skip("libhipblas.so.9", "symbolic links")
skip("librocsolver.so.9", "not a regular file")
skip("librocfft.so.9", "not a regular file")
skip("libhsa-runtime64.so.1", "regular file")
err("libMIOpen.so.9.0.0", "libMIOpen.so.9.0.0")
err("libhiprtc.so.9.9.99999", "libhiprtc.so.9.9.99999")
err("libamd_comgr.so.9", "libamd_comgr.so.9")
sparse = items.get(L + "libamd_comgr.so.9", {})
check(sparse.get("size") == 2 << 30 and "sparse" in sparse.get("sha256_skipped", ""), "sparse file not hashed: %r" % sparse)
if unreadable:
    err("librccl.so.9.9", "librccl.so.9.9", "permission denied")
    check("sha256" not in items.get(L + "librccl.so.9.9", {}), "no hash for an unreadable file")
else:
    check(L + "librccl.so.9.9" in items, "mode 000 file listed (root reads it)")
env = [e for e in snap["python"]["environments"] if e["prefix"] == "/opt/venv"]
check(len(env) == 1, "venv found")
if env:
    t = env[0].get("torch", {})
    check("error" in t, "garbage version.py: torch has an error: %r" % t)
    check(t.get("gpu_targets", {}).get("collected") is False and t["gpu_targets"].get("reason"), "truncated libtorch_hip.so: not collected with a reason")
    b = {x["file"]: x for x in t.get("bundled_libraries", [])}
    check("error" in b.get("libamdhip64.so", {}), "FIFO in torch/lib: error")
    check("error" in env[0]["packages"].get("torch", {}), "FIFO METADATA: error")
check(snap["stacks"].get("rocm_link", {}).get("error"), "looping /opt/rocm: link with an error")
skip("libhipfft.so.9", "broken")
check(not any(p.startswith("/usr/lib/x86_64-linux-gnu") for p in items),
      "no host file through /opt/rocm-8.0.0/lib -> /usr/lib/x86_64-linux-gnu: %r" % sorted(items))
check("/usr/lib/x86_64-linux-gnu" not in snap["libraries"]["scanned_dirs"], "host multiarch dir not scanned")
r8 = [i for i in snap["stacks"]["installs"] if i.get("prefix") == "/opt/rocm-8.0.0"]
check(len(r8) == 1 and r8[0].get("version") == "8.0.0" and r8[0].get("version_source") == "directory name",
      "a version file linking out of the root is not read on the host: %r" % r8)
if fails:
    print("FAILED:\n  " + "\n  ".join(fails)); sys.exit(1)
print("ok: %d items, %d skipped" % (len(items), len(skipped)))
PY
}
check "$tmp/snap.json" 0

# As root every file is readable. Run once more as an unprivileged user when
# the binary can be reached by one, so that mode 000 really means unreadable.
if command -v setpriv >/dev/null && [[ $(id -u) == 0 ]] &&
    setpriv --reuid=65534 --regid=65534 --clear-groups test -x "$GPUVET" 2>/dev/null; then
    chmod -R a+rX "$tmp" 2>/dev/null || true
    chmod 000 "$L/librccl.so.9.9"
    chmod 777 "$tmp"
    run "$tmp/snap-nobody.json" setpriv --reuid=65534 --regid=65534 --clear-groups env HOME="$tmp"
    check "$tmp/snap-nobody.json" 1
else
    echo "note: could not run as an unprivileged user; the mode-000 case was checked as root only"
fi
