#!/usr/bin/env bash
# gpuvet snapshot --root over AMD's own layout (amd-layout.sh): /opt/rocm-5.7.0
# and /opt/rocm-6.0.0, the /opt/rocm -> /etc/alternatives/rocm link, the dpkg
# alternatives database, package ownership from dpkg's .list files, and a stray
# 6.0 librocblas left in the 5.7 tree that no package owns. Expected values come
# from the fixture files, dpkg-query --admindir, readelf and hashlib.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
for t in python3 readelf dpkg-query; do
    need_cmd "$t" "$t is needed as an oracle"
done
gv_tmpdir tmp amd

run_case() { # NAME LINK-ARGS...
    local name=$1
    shift
    bash "$GV_SRC/tests/fixtures/amd-layout.sh" "$tmp/$name" "$@" >/dev/null
    "$GPUVET" snapshot --root "$tmp/$name" -o "$tmp/$name.json"
    python3 - "$tmp/$name" "$tmp/$name.json" <<'PY'
import glob, hashlib, json, os, re, subprocess, sys
root, snap = sys.argv[1], json.load(open(sys.argv[2]))
fails = []
def check(cond, what):
    if not cond:
        fails.append(what)
def host(p): return os.path.join(root, p.lstrip("/"))
def rooted_realpath(p, depth=0):
    """Resolve p inside root the way a chroot would (absolute targets stay inside)."""
    parts, cur = [x for x in p.split("/") if x], ""
    for i, c in enumerate(parts):
        nxt = cur + "/" + c
        if os.path.islink(host(nxt)):
            t = os.readlink(host(nxt))
            base = "" if t.startswith("/") else cur
            return rooted_realpath(base + "/" + t + "/" + "/".join(parts[i + 1:]), depth + 1)
        cur = os.path.normpath(nxt)
    return cur or "/"
def dpkg(*args):
    r = subprocess.run(["dpkg-query", "--admindir=" + host("/var/lib/dpkg")] + list(args),
                       capture_output=True, text=True)
    return r.returncode, r.stdout.strip()
def readelf(path):
    out = subprocess.run(["readelf", "-d", path], capture_output=True, text=True, check=True).stdout
    so = re.findall(r"\(SONAME\)\s+Library soname: \[(.*)\]", out)
    return (so[0] if so else None), re.findall(r"\(NEEDED\)\s+Shared library: \[(.*)\]", out)

st = snap["stacks"]
check(st["collected"], "stacks collected")
amd = {i["prefix"]: i for i in st["installs"] if i["kind"] == "rocm" and i["layout"] == "amd"}
prefixes = sorted("/opt/" + os.path.basename(d) for d in glob.glob(host("/opt/rocm-*")))
check(sorted(amd) == prefixes, "amd installs %r == %r" % (sorted(amd), prefixes))
default = rooted_realpath("/opt/rocm")
for pre, inst in amd.items():
    raw = open(host(pre + "/.info/version")).read().strip()
    check(inst["version"] == raw.split("-")[0], "%s version %r vs .info/version %r" % (pre, inst["version"], raw))
    check(inst.get("build") == raw.split("-")[1], "%s build" % pre)
    check(inst["version_source"] == pre + "/.info/version", "%s version_source" % pre)
    check(inst["is_default"] == (pre == default), "%s is_default (default %s)" % (pre, default))
link = st.get("rocm_link", {})
check(link.get("target") == os.readlink(host("/opt/rocm")), "rocm_link target")
check(link.get("resolved") == default, "rocm_link resolved %r != %r" % (link.get("resolved"), default))
alt = st.get("alternatives", {}).get("rocm", {})
check(alt.get("target") == os.readlink(host("/etc/alternatives/rocm")), "alternatives target")
lines = open(host("/var/lib/dpkg/alternatives/rocm")).read().split("\n")
for c in alt.get("choices", []):
    check(lines[lines.index(c["path"]) + 1] == c["priority"], "priority of %s" % c["path"])
check(sorted(c["path"] for c in alt.get("choices", [])) == prefixes, "alternatives choices")
rc, ver = dpkg("-W", "-f=${Version}", "rocm-core")
check(rc == 0 and st.get("rocm_core", {}).get("version") == ver, "rocm_core %r vs dpkg %r" % (st.get("rocm_core"), ver))

items = {i["path"]: i for i in snap["libraries"]["items"]}
files = [f for d in prefixes for f in glob.glob(host(d + "/lib/lib*.so*"))
         if not os.path.islink(f)]
check(len(files) > 10, "fixture has libraries")
for f in files:
    p = "/" + os.path.relpath(f, root)
    it = items.get(p)
    check(it is not None, "item for %s" % p)
    if not it:
        continue
    so, needed = readelf(f)
    check(it.get("soname") == so and it.get("needed") == needed, "%s soname/needed" % p)
    check(it.get("sha256") == hashlib.sha256(open(f, "rb").read()).hexdigest(), "%s sha256" % p)
    m = re.search(r"\.so\.([0-9.]+)$", p)
    check(it.get("version") == m.group(1) and it.get("version_source") == "file name", "%s version" % p)
    rc, out = dpkg("-S", p)
    if rc == 0:
        check(it.get("package") == out.split(":")[0], "%s package %r vs dpkg -S %r" % (p, it.get("package"), out))
        check("unowned" not in it, "%s is owned" % p)
        rel = amd[os.path.dirname(os.path.dirname(p))]["version"].rsplit(".", 1)[0]
        check(it.get("rocm_release") == rel, "%s rocm_release %r" % (p, it.get("rocm_release")))
    else:
        check("package" not in it and it.get("unowned") is True, "%s: no package owns it -> unowned" % p)
        check("rocm_release" not in it, "%s: unowned file gets no release of its tree" % p)
    links = sorted("/" + os.path.relpath(l, root) for l in glob.glob(os.path.join(os.path.dirname(f), "lib*.so*"))
                   if os.path.islink(l) and os.path.realpath(l) == os.path.realpath(f))
    check(it.get("links", []) == links, "%s links %r != %r" % (p, it.get("links"), links))
if fails:
    print("FAILED:\n  " + "\n  ".join(fails))
    sys.exit(1)
print("ok: %d installs, %d files" % (len(amd), len(files)))
PY
}

run_case default --stray
run_case link57 --link 5.7.0
# the stray file must have been seen as unowned by the first case: make sure the fixture has one
test -f "$tmp/default/opt/rocm-5.7.0/lib/librocblas.so.4.0.0"
