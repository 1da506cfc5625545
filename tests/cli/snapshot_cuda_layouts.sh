#!/usr/bin/env bash
# CUDA layouts under --root: toolkits versioned by version.json, version.txt and
# by directory name only, the real toolkit's lib64 -> targets/x86_64-linux/lib
# link, the /usr/local/cuda link, and an NVIDIA driver's libcuda/libnvidia-ml in
# the multiarch directory owned by a dpkg package. The expected values are the
# ones this script writes (and readelf for SONAMEs).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
for t in python3 gcc readelf; do command -v $t >/dev/null || skip "$t needed"; done
gv_tmpdir tmp cuda
r=$tmp/root
printf 'int f(void) { return 1; }\n' >"$tmp/f.c"
so() { gcc -shared -fPIC -Wl,-soname,"$2" "$tmp/f.c" -o "$1"; }

T=$r/usr/local/cuda-12.4
mkdir -p "$T/targets/x86_64-linux/lib"
printf '{\n   "cuda" : {\n      "name" : "CUDA SDK",\n      "version" : "12.4.1"\n   },\n   "cuda_cudart" : {"version" : "12.4.127"}\n}\n' >"$T/version.json"
ln -s targets/x86_64-linux/lib "$T/lib64"
so "$T/targets/x86_64-linux/lib/libcudart.so.12.4.127" libcudart.so.12
ln -s libcudart.so.12.4.127 "$T/targets/x86_64-linux/lib/libcudart.so.12"
ln -s libcudart.so.12 "$T/targets/x86_64-linux/lib/libcudart.so"
mkdir -p "$r/usr/local/cuda-11.8/lib64"
echo "CUDA Version 11.8.0" >"$r/usr/local/cuda-11.8/version.txt"
so "$r/usr/local/cuda-11.8/lib64/libcublas.so.11.11.3.6" libcublas.so.11
mkdir -p "$r/usr/local/cuda-13.1/lib64"
ln -s cuda-12.4 "$r/usr/local/cuda"

D=$r/usr/lib/x86_64-linux-gnu
mkdir -p "$D" "$r/var/lib/dpkg/info"
so "$D/libcuda.so.550.54.15" libcuda.so.1
ln -s libcuda.so.550.54.15 "$D/libcuda.so.1"
ln -s libcuda.so.1 "$D/libcuda.so"
so "$D/libnvidia-ml.so.550.54.15" libnvidia-ml.so.1
ln -s libnvidia-ml.so.550.54.15 "$D/libnvidia-ml.so.1"
printf '/.\n/usr\n/usr/lib\n/usr/lib/x86_64-linux-gnu\n/usr/lib/x86_64-linux-gnu/libcuda.so.550.54.15\n/usr/lib/x86_64-linux-gnu/libcuda.so.1\n' \
    >"$r/var/lib/dpkg/info/libcuda1:amd64.list"
printf 'Package: libcuda1\nStatus: install ok installed\nArchitecture: amd64\nVersion: 550.54.15-1\n\n' \
    >"$r/var/lib/dpkg/status"

"$GPUVET" snapshot --root "$r" -o "$tmp/s.json"
python3 - "$r" "$tmp/s.json" <<'PY'
import json, re, subprocess, sys
root, snap = sys.argv[1], json.load(open(sys.argv[2]))
fails = []
def check(c, w):
    if not c: fails.append(w)
inst = {i.get("prefix") or i.get("driver_library"): i for i in snap["stacks"]["installs"]}
want = {"/usr/local/cuda-12.4": ("12.4.1", "/usr/local/cuda-12.4/version.json", True),
        "/usr/local/cuda-11.8": ("11.8.0", "/usr/local/cuda-11.8/version.txt", False),
        "/usr/local/cuda-13.1": ("13.1", "directory name", False)}
for pre, (v, src, default) in want.items():
    i = inst.get(pre, {})
    check(i.get("kind") == "cuda" and i.get("layout") == "toolkit", "%s toolkit" % pre)
    check(i.get("version") == v and i.get("version_source") == src, "%s version %r %r" % (pre, i.get("version"), i.get("version_source")))
    check(i.get("is_default") is default, "%s is_default" % pre)
check(snap["stacks"]["cuda_link"] == {"path": "/usr/local/cuda", "target": "cuda-12.4", "resolved": "/usr/local/cuda-12.4"}, "cuda_link %r" % snap["stacks"].get("cuda_link"))
drv = inst.get("/usr/lib/x86_64-linux-gnu/libcuda.so.550.54.15", {})
check(drv.get("layout") == "driver" and drv.get("version") == "550.54.15" and drv.get("package") == "libcuda1"
      and drv.get("package_version") == "550.54.15-1", "driver install %r" % drv)
items = {i["path"]: i for i in snap["libraries"]["items"]}
def soname(p):
    out = subprocess.run(["readelf", "-d", root + p], capture_output=True, text=True).stdout
    return re.findall(r"\(SONAME\)\s+Library soname: \[(.*)\]", out)[0]
cudart = "/usr/local/cuda-12.4/targets/x86_64-linux/lib/libcudart.so.12.4.127"
i = items.get(cudart, {})
check(i.get("version") == "12.4.127" and i.get("origin") == "/usr/local/cuda-12.4" and i.get("origin_kind") == "cuda"
      and i.get("soname") == soname(cudart), "cudart %r" % i)
check(i.get("links") == [cudart.rsplit("/", 1)[0] + "/libcudart.so", cudart.rsplit("/", 1)[0] + "/libcudart.so.12"], "cudart links %r" % i.get("links"))
cub = items.get("/usr/local/cuda-11.8/lib64/libcublas.so.11.11.3.6", {})
check(cub.get("version") == "11.11.3.6" and cub.get("name") == "cublas", "cublas %r" % cub)
cu = items.get("/usr/lib/x86_64-linux-gnu/libcuda.so.550.54.15", {})
check(cu.get("package") == "libcuda1" and cu.get("origin_kind") == "cuda" and "unowned" not in cu
      and cu.get("links") == ["/usr/lib/x86_64-linux-gnu/libcuda.so", "/usr/lib/x86_64-linux-gnu/libcuda.so.1"], "libcuda %r" % cu)
ml = items.get("/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.550.54.15", {})
check(ml.get("name") == "nvml" and ml.get("origin_kind") == "cuda" and ml.get("unowned") is True and "package" not in ml,
      "nvml (no package owns it in a dpkg-managed dir) %r" % ml)
if fails:
    print("FAILED:\n  " + "\n  ".join(fails)); sys.exit(1)
print("ok: 3 toolkits, driver, %d libraries" % len(items))
PY
