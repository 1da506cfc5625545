#!/usr/bin/env bash
# gpuvet snapshot on the live machine finds the CUDA toolkit in
# /usr/local/cuda-13.0 and its cuBLAS, cuBLASLt, cuDNN, NVRTC and NCCL
# libraries. What must be found is listed here independently (ls, readelf).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
tk=/usr/local/cuda-13.0
[[ -d $tk ]] || skip "no CUDA toolkit at $tk on this machine"
for t in python3 readelf; do command -v $t >/dev/null || skip "$t needed"; done
mkdir -p "$GV_TEST_TMP"
out=$(mktemp "$GV_TEST_TMP/live.XXXXXX.json")
at_exit 'rm -f "$out"'
"$GPUVET" snapshot --no-hash -o "$out"
python3 - "$tk" "$out" <<'PY'
import glob, json, os, re, subprocess, sys
tk, snap = sys.argv[1], json.load(open(sys.argv[2]))
fails = []
def check(c, w):
    if not c: fails.append(w)
inst = [i for i in snap["stacks"]["installs"] if i.get("prefix") == tk]
check(len(inst) == 1 and inst[0]["kind"] == "cuda" and inst[0]["layout"] == "toolkit", "toolkit install %r" % inst)
if os.path.islink("/usr/local/cuda"):
    check(inst and inst[0]["is_default"] == (os.path.realpath("/usr/local/cuda") == tk), "is_default")
    check(snap["stacks"].get("cuda_link", {}).get("target") == os.readlink("/usr/local/cuda"), "cuda_link")
want = {"cublas": "libcublas.so.", "cublaslt": "libcublasLt.so.", "cudnn": "libcudnn.so.",
        "nvrtc": "libnvrtc.so.", "nccl": "libnccl.so."}
wheels = {"cublas": "nvidia_cublas-*.dist-info", "cublaslt": "nvidia_cublas-*.dist-info",
          "cudnn": "nvidia_cudnn*-*.dist-info", "nvrtc": "nvidia_cuda_nvrtc-*.dist-info",
          "nccl": "nvidia_nccl*-*.dist-info"}
items = {i["path"]: i for i in snap["libraries"]["items"]}
real_tk = os.path.realpath(tk)
for name, pfx in want.items():
    files = [f for d in ("lib", "lib64") for f in glob.glob(os.path.join(tk, d, pfx + "*"))
             if not os.path.islink(f)]
    check(files, "fixture: %s present in %s" % (pfx, tk))
    for f in set(os.path.realpath(x) for x in files):
        it = items.get(f)
        check(it is not None, "library %s listed" % f)
        if it:
            so = re.findall(r"\(SONAME\)\s+Library soname: \[(.*)\]",
                            subprocess.run(["readelf", "-d", f], capture_output=True, text=True).stdout)
            check(it["name"] == name and it["soname"] == (so[0] if so else None), "%s name/soname" % f)
            check(it["origin"] == tk and it["origin_kind"] == "cuda", "%s origin %r" % (f, it["origin"]))
            check("sha256" not in it, "--no-hash: no hash for %s" % f)
            # a toolkit assembled from NVIDIA wheels: the version is the wheel's
            wheel = glob.glob(os.path.join(tk, "dist-info", wheels[name]))
            if wheel:
                v = os.path.basename(wheel[0])[:-len(".dist-info")].split("-", 1)[1]
                check(it.get("version") == v and it.get("version_source") == "wheel",
                      "%s version %r != wheel %r" % (f, it.get("version"), v))
if fails:
    print("FAILED:\n  " + "\n  ".join(fails)); sys.exit(1)
print("ok: CUDA toolkit %s with %s" % (tk, ", ".join(want)))
PY
