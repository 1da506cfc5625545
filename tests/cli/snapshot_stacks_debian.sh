#!/usr/bin/env bash
# gpuvet snapshot --root over the real Debian ROCm roots of debian-rocm.sh
# (trixie: HIP 5.7.1 from libamdhip64-5; sid: HIP 6.4 from libamdhip64-6), when
# they are in the fixture cache, plus a small root made of hard links into one
# of them with a leftover libamdhip64 that no package owns. Oracles:
# dpkg-query --admindir (owners, versions), readelf (SONAME, NEEDED),
# sha256sum, and the HIP->ROCm rows of rocm-facts.md section 2b.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
for t in python3 readelf dpkg-query sha256sum gcc; do
    need_cmd "$t" "$t is needed"
done
cache=${GV_FIXTURE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/gpuvet-fixtures}
roots=()
for n in trixie-rocm sid-rocm; do
    [[ -f $cache/$n.stamp && -d $cache/$n ]] && roots+=("$cache/$n")
done
if [[ ${#roots[@]} -eq 0 ]]; then
    skip "no Debian ROCm root in $cache (build with tests/fixtures/debian-rocm.sh all; needs network)"
fi
gv_tmpdir tmp debian

check_root() { # ROOT SNAPSHOT
    python3 - "$1" "$2" <<'PY'
import glob, json, os, re, subprocess, sys
root, snap = sys.argv[1], json.load(open(sys.argv[2]))
# rocm-facts.md 2b: HIP runtime build -> ROCm release
HIP_RELEASE = {"5.7.31921": "5.7", "6.0.32830": "6.0", "6.4.43484": "6.4"}
STEMS = ("libamdhip64", "libhiprtc", "libamd_comgr", "libhsa-runtime64", "libhsakmt", "librocblas",
         "libhipblas", "libhipblaslt", "libMIOpen", "librocfft", "libhipfft", "librocrand", "libhiprand",
         "librocsolver", "libhipsolver", "librocsparse", "libhipsparse", "librccl", "librocm_smi64",
         "libamd_smi", "librocm-core")
fails = []
def check(cond, what):
    if not cond:
        fails.append(what)
def host(p): return os.path.join(root, p.lstrip("/"))
def dpkg(*args):
    r = subprocess.run(["dpkg-query", "--admindir=" + host("/var/lib/dpkg")] + list(args),
                       capture_output=True, text=True)
    return r.returncode, r.stdout.strip()
def readelf(path):
    out = subprocess.run(["readelf", "-d", path], capture_output=True, text=True, check=True).stdout
    so = re.findall(r"\(SONAME\)\s+Library soname: \[(.*)\]", out)
    return (so[0] if so else None), re.findall(r"\(NEEDED\)\s+Shared library: \[(.*)\]", out)
def sha(path):
    return subprocess.run(["sha256sum", path], capture_output=True, text=True, check=True).stdout.split()[0]

libdir = "/usr/lib/x86_64-linux-gnu"
inst = {i["hip_library"]: i for i in snap["stacks"]["installs"] if i.get("layout") == "distro"}
hips = ["%s/%s" % (libdir, os.path.basename(f)) for f in glob.glob(host(libdir + "/libamdhip64.so.*"))
        if not os.path.islink(f)]
check(sorted(inst) == sorted(hips), "one distro install per HIP file: %r vs %r" % (sorted(inst), hips))
for h, i in inst.items():
    filever = h.split(".so.")[1]
    check(i.get("hip_version") == filever, "%s hip_version" % h)
    check(i.get("rocm_release") == HIP_RELEASE.get(filever, ".".join(filever.split(".")[:2])), "%s rocm_release %r" % (h, i.get("rocm_release")))
    rc, out = dpkg("-S", h)
    if rc == 0:
        pkg = out.split(":")[0]
        _, ver = dpkg("-W", "-f=${Version}", pkg)
        check(i.get("package") == pkg and i.get("package_version") == ver, "%s package %r %r" % (h, i.get("package"), i.get("package_version")))
        up = ver.split(":")[-1].rsplit("-", 1)[0]
        check(i.get("version") == up, "%s version %r != %r (from %s)" % (h, i.get("version"), up, ver))
    else:
        check("package" not in i and i.get("version") == filever, "%s: unowned HIP, version from the file name" % h)

items = {it["path"]: it for it in snap["libraries"]["items"]}
files = [f for f in glob.glob(host(libdir + "/lib*.so.*"))
         if not os.path.islink(f) and os.path.basename(f).split(".so")[0] in STEMS]
check(files, "the root has ROCm libraries")
for f in files:
    p = libdir + "/" + os.path.basename(f)
    it = items.get(p)
    check(it is not None, "item for %s" % p)
    if not it:
        continue
    so, needed = readelf(f)
    check(it.get("soname") == so and it.get("needed") == needed, "%s soname/needed" % p)
    check(it.get("size") == os.path.getsize(f), "%s size" % p)
    if os.path.getsize(f) < (64 << 20):
        check(it.get("sha256") == sha(f), "%s sha256" % p)
    rc, out = dpkg("-S", p)
    if rc == 0:
        check(it.get("package") == out.split(":")[0] and "unowned" not in it, "%s package %r vs %r" % (p, it.get("package"), out))
        _, pver = dpkg("-W", "-f=${Version}", out.split(":")[0])
        check(it.get("package_version") == pver, "%s package_version %r vs %r" % (p, it.get("package_version"), pver))
        fv = re.search(r"\.so\.([0-9.]+)$", p).group(1)
        up = pver.split(":")[-1].rsplit("-", 1)[0]
        want = fv if fv.count(".") >= 2 else up  # two parts: only the SONAME's, the package says more
        check(it.get("version") == want, "%s version %r, want %r" % (p, it.get("version"), want))
    else:
        check("package" not in it and it.get("unowned") is True, "%s unowned" % p)
    links = sorted(libdir + "/" + os.path.basename(l) for l in glob.glob(host(libdir + "/lib*.so*"))
                   if os.path.islink(l) and os.path.realpath(l) == os.path.realpath(f))
    check(it.get("links", []) == links, "%s links %r != %r" % (p, it.get("links"), links))
    check(it.get("origin_kind") == "rocm", "%s origin_kind" % p)
if fails:
    print("FAILED %s:\n  " % root + "\n  ".join(fails))
    sys.exit(1)
print("ok %s: %d HIP installs, %d libraries" % (root, len(inst), len(files)))
PY
}

for r in "${roots[@]}"; do
    "$GPUVET" snapshot --root "$r" -o "$tmp/snap.json"
    check_root "$r" "$tmp/snap.json"
done

# A small root: the dpkg database and the HIP runtime of the first root (hard
# links, or copies across file systems), plus a leftover HIP runtime of another
# release that no package owns: it must be found, flagged, and versioned by name.
src=${roots[0]}
m=$tmp/mini
lib=usr/lib/x86_64-linux-gnu
mkdir -p "$m/$lib" "$m/var/lib/dpkg"
cp -r "$src/var/lib/dpkg/info" "$src/var/lib/dpkg/status" "$m/var/lib/dpkg/"
for f in "$src/$lib"/libamdhip64.so*; do
    cp -a -l "$f" "$m/$lib/" 2>/dev/null || cp -a "$f" "$m/$lib/"
done
printf 'int gv_leftover(void) { return 1; }\n' >"$tmp/l.c"
gcc -shared -fPIC -Wl,-soname,libamdhip64.so.6 "$tmp/l.c" -o "$m/$lib/libamdhip64.so.6.0.32830"
# and an NVIDIA driver's libcuda in the same directory, installed by a .run file (no package)
gcc -shared -fPIC -Wl,-soname,libcuda.so.1 "$tmp/l.c" -o "$m/$lib/libcuda.so.580.65.06"
ln -s libcuda.so.580.65.06 "$m/$lib/libcuda.so.1"
"$GPUVET" snapshot --root "$m" -o "$tmp/mini.json"
check_root "$m" "$tmp/mini.json"
python3 - "$tmp/mini.json" <<'PY'
import json, sys
snap = json.load(open(sys.argv[1]))
it = [i for i in snap["libraries"]["items"] if i["path"].endswith("libamdhip64.so.6.0.32830")]
assert len(it) == 1 and it[0].get("unowned") is True and it[0]["rocm_release"] == "6.0", it
assert it[0]["origin_kind"] == "rocm", it
cuda = [i for i in snap["libraries"]["items"] if i["path"].endswith("/libcuda.so.580.65.06")]
assert len(cuda) == 1 and cuda[0]["origin_kind"] == "cuda" and cuda[0]["name"] == "cuda-driver", cuda
assert cuda[0]["version"] == "580.65.06" and cuda[0]["soname"] == "libcuda.so.1", cuda
assert cuda[0]["links"] == ["/usr/lib/x86_64-linux-gnu/libcuda.so.1"], cuda
drv = [i for i in snap["stacks"]["installs"] if i.get("layout") == "driver"]
assert len(drv) == 1 and drv[0]["kind"] == "cuda" and drv[0]["version"] == "580.65.06", drv
assert drv[0]["version_source"] == "file name" and "package" not in drv[0], drv
print("ok: leftover flagged unowned, release 6.0 from its name; libcuda next to the distro ROCm is the CUDA driver")
PY
