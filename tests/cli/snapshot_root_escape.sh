#!/usr/bin/env bash
# Issue 31, class 4: `snapshot --root DIR` reads the image as a chroot would.
# Links in the root that point out of it (absolute, or through ../../..), an
# ld.so.conf include that climbs out or goes through a directory link, a
# library, torch/version.py, a profile.d file and the dpkg status file linked
# to host files: the host files' text (a unique marker) must appear nowhere,
# the snapshot must complete, and each entry must be what the root sees (the
# root's own file of that name, or missing). And under --root the recorded
# variables, and the LD_LIBRARY_PATH the loader resolves with, are the image's
# (its /etc/environment, itself read inside the root when it is a link), never
# those of the process running gpuvet.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_cmd python3 "python3 needed"
gv_tmpdir tmp escape
MARK="GVSECRET$RANDOM$RANDOM$$"
H=$(mktemp -d /tmp/gv-host-secret-XXXXXX)   # the "host" files, outside the root
at_exit 'rm -rf "$H"'
up=$(printf '../%.0s' $(seq 1 40))            # more ../ than the root is deep

# host files, each in the format its reader parses, each carrying MARK
printf 'ID=%s\nVERSION_ID="%s"\nPRETTY_NAME="%s"\n' "$MARK" "$MARK" "$MARK" >"$H/secret-osrel"
printf '/%s/lib\n' "$MARK" >"$H/secret-ldconf"
printf '__version__ = "%s"\nhip = "%s"\n' "$MARK" "$MARK" >"$H/secret-py"
printf 'export ROCM_PATH=/%s\nHIP_VISIBLE_DEVICES=%s\n' "$MARK" "$MARK" >"$H/secret-sh"
printf 'Package: pkg-%s\nStatus: install ok installed\nVersion: 1.0-%s\nArchitecture: amd64\n\n' \
    "$MARK" "$MARK" >"$H/secret-dpkg"
printf '/%s/inc\n' "$MARK" >"$H/gv.conf"
printf 'LD_LIBRARY_PATH=/%s/lib\nHIP_VISIBLE_DEVICES=%s\n' "$MARK" "$MARK" >"$H/secret-env"
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

# root C: /etc/environment linked to a host file; the root's own file at that
# path sets LD_LIBRARY_PATH, which must steer the loader to a library there
C=$tmp/c
mkdir -p "$C/etc" "$C/$H" "$C/opt/envlib" "$C/usr/lib/x86_64-linux-gnu" "$C/var/lib/dpkg"
ln -s "$H/secret-env" "$C/etc/environment"
cat >"$C/$H/secret-env" <<'EOF'
# the image's login environment
export LD_LIBRARY_PATH="/opt/envlib"
HIP_VISIBLE_DEVICES=1
AMD_SERIALIZE_KERNEL=3
EOF
printf 'Package: base-files\nStatus: install ok installed\nVersion: 12\nArchitecture: amd64\n\n' \
    >"$C/var/lib/dpkg/status"
if [[ $have_cc == 1 ]]; then
    gcc -shared -fPIC -Wl,-soname,librocblas.so.4 "$tmp/f.c" -o "$C/usr/lib/x86_64-linux-gnu/librocblas.so.4"
    cp "$C/usr/lib/x86_64-linux-gnu/librocblas.so.4" "$C/opt/envlib/librocblas.so.4"
fi

# allowlisted variables set only in this process (ROCR_VISIBLE_DEVICES and
# LD_LIBRARY_PATH carry the marker) must not reach any --root snapshot
for r in a b c; do
    rc=0
    HSA_OVERRIDE_GFX_VERSION=9.9.9 ROCR_VISIBLE_DEVICES="$MARK" LD_LIBRARY_PATH="/opt/$MARK:/usr/lib" \
        timeout 120 "$GPUVET" snapshot --root "$tmp/$r" \
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

# verify and doctor snapshot a --root the same way: with this process's own
# variables set, root C still matches its snapshot, and doctor judges C's
for cmd in verify doctor; do
    rc=0
    args=(doctor --root "$C" --json)
    [[ $cmd == verify ]] && args=(verify --baseline "$tmp/c.json" --root "$C" --json)
    HSA_OVERRIDE_GFX_VERSION=9.9.9 AMD_LOG_LEVEL=4 LD_LIBRARY_PATH="/opt/$MARK:/usr/lib" \
        timeout 120 "$GPUVET" "${args[@]}" >"$tmp/$cmd.json" 2>"$tmp/$cmd.err" || rc=$?
    if [[ $cmd == verify && $rc -ne 0 ]] || [[ $rc -gt 1 ]]; then
        echo "FAILED: $cmd --root exited $rc"; cat "$tmp/$cmd.json" "$tmp/$cmd.err"; exit 1
    fi
    if grep -qi "$MARK" "$tmp/$cmd.json" "$tmp/$cmd.err"; then
        echo "FAILED: the marker (host files, this process's variables) reached $cmd --root"
        exit 1
    fi
done

python3 - "$tmp/a.json" "$tmp/b.json" "$tmp/c.json" "$have_cc" "$tmp/verify.json" \
    "$tmp/doctor.json" <<'PY'
import json, sys
a, b, c = (json.load(open(p)) for p in sys.argv[1:4])
have_cc = sys.argv[4] == "1"
verify, doctor = (json.load(open(p)) for p in sys.argv[5:7])
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
check("HSA_OVERRIDE_GFX_VERSION" not in json.dumps(a),
      "this process's variable is not the image's: %r" % env.get("variables"))
check(env.get("variables") == {"ROCR_VISIBLE_DEVICES": "3"},
      "variables under --root: the root's /etc/environment only, got %r" % env.get("variables"))
check("/etc/environment of the root" in env.get("source", ""),
      "the source says so: %r" % env.get("source"))
for name, doc in (("a", a), ("b", b)):
    check("ld_library_path" not in doc["loader"],
          "root %s: this process's LD_LIBRARY_PATH does not steer the loader, got %r" %
          (name, doc["loader"].get("ld_library_path")))
    check("variables" in doc["environment"],
          "root %s: variables present (the root's, maybe none), got %r" % (name, doc["environment"]))

cenv, clo = c["environment"], c["loader"]
check(cenv.get("variables") == {"LD_LIBRARY_PATH": "/opt/envlib", "HIP_VISIBLE_DEVICES": "1",
                                "AMD_SERIALIZE_KERNEL": "3"},
      "/etc/environment -> host file: the root's file at that path, got %r" % cenv.get("variables"))
check(clo.get("ld_library_path") == ["/opt/envlib"],
      "the loader takes the root's LD_LIBRARY_PATH, got %r" % clo.get("ld_library_path"))
check(clo["search_dirs"][0] == "/opt/envlib", "it is searched first: %r" % clo["search_dirs"])
if have_cc:
    got = clo["resolved"].get("librocblas.so.4", {})
    check(got.get("via") == "LD_LIBRARY_PATH" and got.get("path") == "/opt/envlib/librocblas.so.4",
          "librocblas.so.4 resolves through the root's LD_LIBRARY_PATH, got %r" % got)
check(verify.get("stack_matches") is True and not verify.get("differences"),
      "verify --root: the root matches its own snapshot whatever this process sets, got %r"
      % verify)
ev = [e for f in doctor["findings"] for e in f["evidence"]]
check({"path": "environment.variables.AMD_SERIALIZE_KERNEL", "value": "3"} in ev,
      "doctor --root judges the root's /etc/environment variables, got %r" % ev)
check(not any(k in json.dumps(doctor) for k in ("AMD_LOG_LEVEL", "HSA_OVERRIDE_GFX_VERSION")),
      "doctor --root: this process's variables are not the image's: %r" % doctor["findings"])

blo = b["loader"]
files = [c["path"] for c in blo.get("conf_files", [])]
check(files == ["/etc/ld.so.conf", "/etc/ld.so.conf.d/x.conf"],
      "includes out of the root find nothing: %r" % files)
check("/usr/local/lib" in blo.get("search_dirs", []), "x.conf was read: %r" % blo.get("search_dirs"))
if bad:
    print("FAILED:\n  " + "\n  ".join(bad))
    sys.exit(1)
print("ok: nothing of the host's files or this process's variables in the snapshots; "
      "each entry, and the loader's LD_LIBRARY_PATH, is the root's")
PY
