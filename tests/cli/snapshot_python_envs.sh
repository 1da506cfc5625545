#!/usr/bin/env bash
# gpuvet snapshot --root over the Python environments of make-pyenv.sh (a ROCm
# torch venv, a CUDA torch venv with NVIDIA wheels, a conda env), with the real
# device code of make-devcode.sh in torch/lib. Expected values come from the
# fixture's own record (.fixture/expect.json), from readelf and from hashlib,
# never from gpuvet.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_cmd python3 "python3 is needed to check the JSON"
need_cmd readelf "readelf (binutils) is needed as the ELF oracle"
mkdir -p "$GV_TEST_TMP"
dev="$GV_TEST_TMP/devcode"
bash "$GV_SRC/tests/fixtures/make-devcode.sh" "$dev"
gv_tmpdir root pyenv
bash "$GV_SRC/tests/fixtures/make-pyenv.sh" "$root/r" "$dev"
"$GPUVET" snapshot --root "$root/r" -o "$root/snap.json"

python3 - "$root/r" "$root/snap.json" <<'PY'
import hashlib, json, os, re, subprocess, sys
root, snap = sys.argv[1], json.load(open(sys.argv[2]))
expect = json.load(open(os.path.join(root, ".fixture/expect.json")))
fails = []
def check(cond, what):
    if not cond:
        fails.append(what)

def readelf(path):
    out = subprocess.run(["readelf", "-d", path], capture_output=True, text=True, check=True).stdout
    so = re.findall(r"\(SONAME\)\s+Library soname: \[(.*)\]", out)
    return (so[0] if so else None), re.findall(r"\(NEEDED\)\s+Shared library: \[(.*)\]", out)

def sha(path):
    return hashlib.sha256(open(path, "rb").read()).hexdigest()

py = snap["python"]
check(py["collected"] is True, "python section collected")
envs = {e["site_packages"]: e for e in py["environments"]}
items = {i["path"]: i for i in snap["libraries"]["items"]}
check(snap["libraries"]["skipped"] == [], "nothing skipped: %s" % snap["libraries"]["skipped"])
interps = [i["path"] for i in py["interpreters"]]
for p in expect["interpreters"]:
    check(p in interps, "interpreter %s listed (%s)" % (p, interps))

for ex in expect["environments"]:
    sp = ex["site_packages"]
    env = envs.get(sp)
    check(env is not None, "environment %s found" % sp)
    if env is None:
        continue
    for k in ("prefix", "kind", "python_version"):
        check(env.get(k) == ex[k], "%s %s: %r != %r" % (sp, k, env.get(k), ex[k]))
    for name, ver in ex["packages"].items():
        got = env["packages"].get(name, {}).get("version")
        check(got == ver, "%s package %s: %r != %r" % (sp, name, got, ver))
    for name in ex["not_packages"]:
        check(name not in env["packages"], "%s: %s is not a GPU package" % (sp, name))
    if ex["torch"] is None:
        check("torch" not in env, "%s has no torch" % sp)
        continue
    t = env.get("torch", {})
    for k, v in ex["torch"].items():
        check(t.get(k) == v, "%s torch.%s: %r != %r" % (sp, k, t.get(k), v))
    bundled = {b["file"]: b for b in t.get("bundled_libraries", [])}
    for lib in ex["libs"]:
        path = os.path.join(root, sp.lstrip("/"), "torch/lib", lib["file"])
        so, needed = readelf(path)
        check(so == lib["soname"], "fixture sanity: readelf SONAME of %s" % lib["file"])
        b = bundled.get(lib["file"], {})
        check(b.get("soname") == so, "bundled %s soname %r != %r" % (lib["file"], b.get("soname"), so))
        it = items.get("%s/torch/lib/%s" % (sp, lib["file"]))
        check(it is not None, "libraries item for torch/lib/%s" % lib["file"])
        if it:
            check(it["soname"] == so, "item soname %s" % lib["file"])
            check(it["needed"] == needed, "item needed %s: %r != %r" % (lib["file"], it["needed"], needed))
            check(set(lib["needed"]) <= set(it["needed"]), "stripped DT_NEEDED names kept for %s" % lib["file"])
            check(it["origin"] == sp and it["origin_kind"] == "python", "origin of %s" % lib["file"])
            check(it.get("sha256") == sha(path), "sha256 of %s" % lib["file"])
            check(it["size"] == os.path.getsize(path), "size of %s" % lib["file"])
            if ex["torch"].get("rocm_release"):
                check(it.get("rocm_release") == ex["torch"]["rocm_release"], "rocm_release of %s" % lib["file"])
    hip = items.get("%s/torch/lib/libamdhip64.so" % sp)
    if hip and ex["torch"]["hip"]:
        check(hip.get("version") == ex["torch"]["hip"].split("-")[0], "torch/lib HIP version from torch.version.hip")
    gt = t.get("gpu_targets", {})
    if ex.get("gpu_targets"):
        check(gt.get("collected") is True, "%s gpu_targets collected: %r" % (sp, gt))
        procs = {x.split(":")[0] for x in gt.get("targets", [])}
        check(procs == set(ex["gpu_targets"]["targets"]), "%s targets %r != %r" % (sp, procs, ex["gpu_targets"]["targets"]))
        check(ex["gpu_targets"]["file"] in gt.get("source", ""), "gpu_targets source names the file")
    else:
        check(gt.get("collected") is False and gt.get("reason"), "no device code: not collected with a reason")
    for w in ex.get("wheel_libs", []):
        it = items.get(w["path"])
        check(it is not None, "wheel library %s listed" % w["path"])
        if not it:
            continue
        so, needed = readelf(os.path.join(root, w["path"].lstrip("/")))
        check(it["soname"] == so == w["soname"], "wheel lib soname %s" % w["path"])
        check(it["needed"] == needed, "wheel lib needed %s" % w["path"])
        check(it.get("version") == w["version"] and it.get("version_source") == "wheel", "wheel lib version %s: %r" % (w["path"], it.get("version")))
        check(it["origin_kind"] == "python" and it["origin"] == sp, "wheel lib origin %s" % w["path"])

inst = [i for i in snap["stacks"]["installs"] if i["kind"] == "cuda" and i["layout"] == "python"]
check(len(inst) == 1 and inst[0]["prefix"].endswith("/site-packages/nvidia"), "one pip CUDA stack: %r" % inst)
if fails:
    print("FAILED:\n  " + "\n  ".join(fails))
    sys.exit(1)
print("ok: %d environments, %d libraries" % (len(envs), len(items)))
PY
