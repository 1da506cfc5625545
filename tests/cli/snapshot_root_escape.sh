#!/usr/bin/env bash
# Issue 31, class 4: `snapshot --root DIR` reads the image as a chroot would.
# Links in the root that point out of it (absolute, or through ../../..), an
# ld.so.conf include that climbs out or goes through a directory link, a
# library, torch/version.py, a profile.d file and the dpkg status file linked
# to host files: the host files' text (a unique marker) must appear nowhere,
# the snapshot must complete, and each entry must be what the root sees (the
# root's own file of that name, or missing). And under --root the recorded
# variables are the image's (/etc/environment), not this process's.
set -euo pipefail
: "${GPUVET:?}" "${GV_TEST_TMP:?}"
command -v python3 >/dev/null || { echo "skipped: python3 needed"; exit 77; }
mkdir -p "$GV_TEST_TMP"
tmp=$(mktemp -d "$GV_TEST_TMP/escape.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
MARK="GVSECRET$RANDOM$RANDOM$$"
H=$(mktemp -d /tmp/gv-host-secret-XXXXXX)   # the "host" files, outside the root
trap 'rm -rf "$tmp" "$H"' EXIT
up=$(printf '../%.0s' $(seq 1 40))            # more ../ than the root is deep

# host files, each in the format its reader parses, each carrying MARK
printf 'ID=%s\nVERSION_ID="%s"\nPRETTY_NAME="%s"\n' "$MARK" "$MARK" "$MARK" >"$H/secret-osrel"
printf '/%s/lib\n' "$MARK" >"$H/secret-ldconf"
printf '__version__ = "%s"\nhip = "%s"\n' "$MARK" "$MARK" >"$H/secret-py"
printf 'export ROCM_PATH=/%s\nHIP_VISIBLE_DEVICES=%s\n' "$MARK" "$MARK" >"$H/secret-sh"
printf 'Package: pkg-%s\nStatus: install ok installed\nVersion: 1.0-%s\nArchitecture: amd64\n\n' \
    "$MARK" "$MARK" >"$H/secret-dpkg"
printf '/%s/inc\n' "$MARK" >"$H/gv.conf"
have_cc=0
if command -v gcc >/dev/null; then
    printf 'int f(void) { return 1; }\n' >"$tmp/f.c"
    gcc -shared -fPIC -Wl,-soname,"lib$MARK.so" "$tmp/f.c" -o "$H/libsecret.so" && have_cc=1
fi

# root A: single files linked out
A=$tmp/a
mkdir -p "$A/etc/profile.d" "$A/var/lib/dpkg" "$A/usr/lib/x86_64-linux-gnu" \
    "$A/usr/lib/python3.11/dist-packages/torch" "$A/$H"
ln -s "$up$H/secret-osrel" "$A/etc/os-release"                       # relative, climbs out
ln -s "$H/secret-ldconf" "$A/etc/ld.so.conf"                         # absolute
ln -s "$H/secret-sh" "$A/etc/profile.d/rocm.sh"
ln -s "$H/secret-dpkg" "$A/var/lib/dpkg/status"
ln -s "$H/secret-py" "$A/usr/lib/python3.11/dist-packages/torch/version.py"
ln -s "$H/libsecret.so" "$A/usr/lib/x86_64-linux-gnu/libamdhip64.so.6"
# what a chroot sees at the links' targets: the root's own files of those names
printf 'ID=inroot\nVERSION_ID="1.0"\n' >"$A/$H/secret-osrel"
printf '__version__ = "2.9.9+inroot"\nhip = None\ncuda = None\n' >"$A/$H/secret-py"
printf 'ROCR_VISIBLE_DEVICES=3\n' >"$A/etc/environment"

# root B: ld.so.conf includes that leave the root
B=$tmp/b
mkdir -p "$B/etc/ld.so.conf.d"
printf 'include /etc/ld.so.conf.d/*.conf\ninclude /etc/linkdir/*.conf\n' >"$B/etc/ld.so.conf"
printf 'include %s%s/*.conf\ninclude %s/*.conf\n/usr/local/lib\n' "$up" "$H" "$H" \
    >"$B/etc/ld.so.conf.d/x.conf"
ln -s "$H" "$B/etc/linkdir"

for r in a b; do
    rc=0
    HSA_OVERRIDE_GFX_VERSION=9.9.9 timeout 120 "$GPUVET" snapshot --root "$tmp/$r" \
        -o "$tmp/$r.json" >"$tmp/$r.out" 2>&1 || rc=$?
    if [[ $rc -ne 0 ]]; then
        echo "FAILED: snapshot --root $r exited $rc"; cat "$tmp/$r.out"; exit 1
    fi
    if grep -qi "$MARK" "$tmp/$r.json" "$tmp/$r.out"; then
        echo "FAILED: a host file's text reached the snapshot of root $r:"
        grep -i -o ".\{0,80\}$MARK.\{0,40\}" "$tmp/$r.json" "$tmp/$r.out" | head
        exit 1
    fi
done

python3 - "$tmp/a.json" "$tmp/b.json" "$have_cc" <<'PY'
import json, sys
a, b = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
have_cc = sys.argv[3] == "1"
bad = []
def check(cond, what):
    if not cond:
        bad.append(what)

os_ = a["host"]["os"]
check(os_.get("id") == "inroot", "os-release: the root's file, got %r" % os_)
lo = a["loader"]
check([c["path"] for c in lo.get("conf_files", [])] == [],
      "ld.so.conf -> host file: missing in the root, got %r" % lo.get("conf_files"))
envs = a["python"].get("environments", [])
torch = [e.get("torch") for e in envs if e.get("torch")]
check(len(torch) == 1 and torch[0].get("version") == "2.9.9+inroot",
      "torch/version.py: the root's file, got %r" % torch)
pk = a["packages"]
check(pk.get("collected") is False, "dpkg status -> host file: missing, got %r" % pk)
libs = a["libraries"]
check(not any(i["path"].endswith("libamdhip64.so.6") or "libsecret" in i["path"]
              for i in libs.get("items", [])),
      "library linked out is not an item: %r" % libs.get("items"))
if have_cc:
    check(any(s["path"] == "/usr/lib/x86_64-linux-gnu/libamdhip64.so.6"
              and "broken symlink" in s["reason"] for s in libs.get("skipped", [])),
          "library linked out: a broken link in the root, got %r" % libs.get("skipped"))
env = a["environment"]
prof = {p["path"]: p.get("sets", {}) for p in env.get("profile_d", [])}
check("/etc/profile.d/rocm.sh" not in prof, "profile.d link out: not read, got %r" % prof)
check(prof.get("/etc/environment", {}).get("ROCR_VISIBLE_DEVICES") == "3",
      "the root's /etc/environment is recorded, got %r" % prof)
check("HSA_OVERRIDE_GFX_VERSION" not in json.dumps(env),
      "this process's variable is not the image's: %r" % env.get("variables"))
check(not env.get("variables"), "no process variables under --root: %r" % env.get("variables"))
check("no process environment" in env.get("source", ""),
      "the source says so: %r" % env.get("source"))

blo = b["loader"]
files = [c["path"] for c in blo.get("conf_files", [])]
check(files == ["/etc/ld.so.conf", "/etc/ld.so.conf.d/x.conf"],
      "includes out of the root find nothing: %r" % files)
check("/usr/local/lib" in blo.get("search_dirs", []), "x.conf was read: %r" % blo.get("search_dirs"))
if bad:
    print("FAILED:\n  " + "\n  ".join(bad))
    sys.exit(1)
print("ok: nothing of the host's files in either snapshot; each entry is the root's")
PY
