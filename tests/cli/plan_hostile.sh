#!/usr/bin/env bash
# A baseline snapshot is data, never code (issue 31). Real snapshots of a small root
# (a profile file that extends PATH, a ROCm loader file) are edited into hostile
# baselines: a loader entry aimed at /etc/profile.d or /etc/ld.so.preload, loader
# directories with a command or a second directory in them, PROMPT_COMMAND, LD_PRELOAD
# and BASH_ENV in a profile file, /root/.bashrc as a profile path (plain and through
# ".."), a Python environment whose interpreter is /tmp/evil, recorded content with
# $(touch ...), and leftovers that are no GPU library. For each, `gpuvet plan rollback`
# exits 1 in sh and json form, writes no script, names the refused field, and no step
# of the plan carries the payload. Then the PATH restore: the plan's step 5, run with
# /etc/profile.d bound to a temp directory (a private mount namespace), writes the
# recorded bytes back exactly (sha256 too), and a shell sourcing the file keeps /usr/bin.
# shellcheck disable=SC2016 # $PATH and $1 in single quotes are meant literally throughout
set -euo pipefail
. "$(dirname "$0")/lib.sh"

command -v python3 >/dev/null || fail "python3 is needed"

gv_tmpdir T
cd "$T"

# ---- two real snapshots: the baseline root and the same root after an upgrade ----
mkroot() {
    mkdir -p "$1/etc/profile.d" "$1/etc/ld.so.conf.d" "$1/var/lib/dpkg" "$1/usr/lib/x86_64-linux-gnu"
    : >"$1/var/lib/dpkg/status"
    echo 'include /etc/ld.so.conf.d/*.conf' >"$1/etc/ld.so.conf"
}
mkroot base
printf 'export PATH=/usr/local/cuda/bin:$PATH\n# CUDA 12\nexport CUDA_HOME="/usr/local/cuda" LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH}\n' \
    >base/etc/profile.d/cuda.sh
printf 'ROCM_PATH=/opt/rocm-5.7.0' >base/etc/profile.d/rocm.sh # no final newline
printf '/opt/rocm-5.7.0/lib\n' >base/etc/ld.so.conf.d/rocm.conf
cp -a base cur
printf 'export PATH=/usr/local/cuda-13/bin:$PATH\n' >cur/etc/profile.d/cuda.sh
printf 'ROCM_PATH=/opt/rocm-6.4.0\n' >cur/etc/profile.d/rocm.sh
printf '/opt/rocm-6.4.0/lib\n' >cur/etc/ld.so.conf.d/rocm.conf
"$GPUVET" snapshot --root base -o base.json 2>/dev/null || fail "snapshot of the baseline root"
"$GPUVET" snapshot --root cur -o cur.json 2>/dev/null || fail "snapshot of the current root"
python3 - base.json <<'PY' || fail "the baseline snapshot does not record the profile files' text"
import json, sys
d = json.load(open(sys.argv[1]))
files = {e["path"]: e for e in d["environment"]["profile_d"]}
assert files["/etc/profile.d/cuda.sh"]["content"].startswith("export PATH=/usr/local/cuda/bin:$PATH\n")
assert files["/etc/profile.d/rocm.sh"]["content"] == "ROCM_PATH=/opt/rocm-5.7.0"
assert any(c["path"] == "/etc/ld.so.conf.d/rocm.conf" for c in d["loader"]["conf_files"])
PY

# ---- hostile baselines ----
python3 - base.json cur.json <<'PY'
import copy, hashlib, json, sys
base = json.load(open(sys.argv[1]))
cur = json.load(open(sys.argv[2]))

def entry(path, text, sets):
    b = text.encode()
    return {"path": path, "sets": sets, "content": text,
            "sha256": hashlib.sha256(b).hexdigest(), "size": len(b)}

def write(name, doc):
    json.dump(doc, open(name + ".json", "w"))

def with_loader(name, conf):
    d = copy.deepcopy(base)
    d["loader"]["conf_files"].append(conf)
    write(name, d)

def with_profile(name, e):
    d = copy.deepcopy(base)
    d["environment"]["profile_d"].append(e)
    write(name, d)

# name -> payload that no step of the plan may hold
cases = {}
with_loader("h_loader_profiled", {"path": "/etc/profile.d/x.sh",
                                  "dirs": ["/opt/rocm/lib", "/usr/bin/touch /tmp/gv-pwned-loader"]})
cases["h_loader_profiled"] = "gv-pwned-loader"
with_loader("h_preload", {"path": "/etc/ld.so.preload", "dirs": ["/opt/rocm/lib/libgvevil.so"]})
cases["h_preload"] = "ld.so.preload"
d = copy.deepcopy(base)
for c in d["loader"]["conf_files"]:
    if c["path"] == "/etc/ld.so.conf.d/rocm.conf":
        c["dirs"] = ["/opt/rocm-5.7.0/lib /tmp/gvevil"]
write("h_loader_dirs", d)
cases["h_loader_dirs"] = "gvevil"
for var, val in [("PROMPT_COMMAND", "touch /tmp/gv-pwned-prompt"),
                 ("LD_PRELOAD", "/tmp/gv-pwned-preload.so"),
                 ("BASH_ENV", "/tmp/gv-pwned-bashenv")]:
    name = "h_var_" + var.lower()
    with_profile(name, entry("/etc/profile.d/gv.sh", "export %s=%s\n" % (var, val), {var: val}))
    cases[name] = "gv-pwned"
with_profile("h_bashrc", entry("/root/.bashrc", "export ROCM_PATH=/opt/rocm\n",
                               {"ROCM_PATH": "/opt/rocm"}))
cases["h_bashrc"] = ".bashrc"
with_profile("h_bashrc_dotdot", entry("/etc/profile.d/../../root/.bashrc",
                                      "export ROCM_PATH=/opt/rocm\n", {"ROCM_PATH": "/opt/rocm"}))
cases["h_bashrc_dotdot"] = ".bashrc"
d = copy.deepcopy(base)
d["python"]["environments"] = [{"prefix": "/opt/gvvenv", "interpreter": "/tmp/evil",
                                "packages": {"torch": {"version": "2.2.2+rocm5.7"}}}]
write("h_interp", d)
cases["h_interp"] = "/tmp/evil"
d = copy.deepcopy(base)
for i, e in enumerate(d["environment"]["profile_d"]):
    if e["path"] == "/etc/profile.d/cuda.sh":
        d["environment"]["profile_d"][i] = entry(e["path"],
            "export PATH=$(touch /tmp/gv-pwned-content)/usr/local/cuda/bin:$PATH\n", e["sets"])
write("h_content", d)
cases["h_content"] = "gv-pwned-content"
# leftovers come from the current side (a saved --from snapshot is a document too)
for name, item in [("h_leftover", {"name": "hip-runtime", "path": "/usr/lib/x86_64-linux-gnu/libc.so.6",
                                    "unowned": True}),
                   ("h_leftover_link", {"name": "hip-runtime",
                                        "path": "/usr/lib/x86_64-linux-gnu/libamdhip64.so.6.4.0",
                                        "links": ["/etc/shadow"], "unowned": True})]:
    c = copy.deepcopy(cur)
    c["libraries"]["items"].append(item)
    json.dump(c, open(name + "-cur.json", "w"))
    write(name, base)
    cases[name] = "libc.so.6" if name == "h_leftover" else "/etc/shadow"
json.dump(cases, open("cases.json", "w"))

# the benign twin of h_interp: this machine has that environment, with its own python
c = copy.deepcopy(cur)
c["python"]["environments"] = [{"prefix": "/opt/gvvenv", "interpreter": "/opt/gvvenv/bin/python3",
                                "site_packages": "/opt/gvvenv/lib/python3.11/site-packages",
                                "packages": {"torch": {"version": "2.3.0+rocm6.0"}}}]
json.dump(c, open("venv-cur.json", "w"))
PY

python3 -c 'import json; print("\n".join("%s\t%s" % kv for kv in json.load(open("cases.json")).items()))' \
    >cases.txt
n=0
while IFS=$'\t' read -r name payload; do
    from=cur.json
    [[ -e $name-cur.json ]] && from=$name-cur.json
    rc=0
    "$GPUVET" plan rollback --to "$name.json" --from "$from" --no-check -o "$name.sh" 2>"$name.err" || rc=$?
    [[ $rc == 1 ]] || fail "$name: plan (sh) exited $rc, expected 1: $(cat "$name.err")"
    [[ ! -e $name.sh ]] || fail "$name: a script was written"
    grep -q 'cannot plan' "$name.err" || fail "$name: no 'cannot plan': $(cat "$name.err")"
    rc=0
    "$GPUVET" plan rollback --to "$name.json" --from "$from" --no-check --format json \
        >"$name.plan.json" 2>"$name.jerr" || rc=$?
    [[ $rc == 1 ]] || fail "$name: plan (json) exited $rc, expected 1: $(cat "$name.jerr")"
    python3 - "$name.plan.json" "$payload" "$name" <<'PY' || fail "$name: see above"
import json, sys
plan = json.load(open(sys.argv[1]))
payload, name = sys.argv[2], sys.argv[3]
assert plan["complete"] is False, "the plan is complete"
steps = json.dumps(plan["steps"])
assert payload not in steps, "a step carries the payload %r: %s" % (payload, steps)
subjects = " ".join(p["subject"] for p in plan["problems"])
want = {"h_loader_profiled": "loader.conf_files[", "h_preload": "loader.conf_files[",
        "h_loader_dirs": "].dirs[0]", "h_bashrc": "environment.profile_d[",
        "h_bashrc_dotdot": "environment.profile_d[", "h_interp": "python.environments[0]",
        "h_content": "].content", "h_leftover": "libraries.items[",
        "h_leftover_link": "libraries.items["}.get(name, "environment.profile_d[")
assert want in subjects, "no problem names %r: %s" % (want, plan["problems"])
if name.startswith("h_var_"):
    var = name[len("h_var_"):].upper()
    assert any(var in p["message"] and "loads code" in p["message"] for p in plan["problems"]), \
        plan["problems"]
PY
    grep -qF "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["problems"][0]["subject"])' \
        "$name.plan.json")" "$name.err" || fail "$name: the sh form does not name the refused field"
    n=$((n + 1))
done <cases.txt
[[ $n == 12 ]] || fail "ran $n hostile cases, expected 12"

# the interpreter is the one this machine has for the environment, never the baseline's
"$GPUVET" plan rollback --to h_interp.json --from venv-cur.json --no-check -o venv.sh 2>venv.err ||
    fail "plan with a matching environment: $(cat venv.err)"
grep -q "'/opt/gvvenv/bin/python3' '-m' 'pip' 'install'" venv.sh || fail "pip does not use this machine's python"
! grep -q '/tmp/evil' venv.sh || fail "the baseline's interpreter reached the script"

# ---- the PATH restore, run for real ----
"$GPUVET" plan rollback --to base.json --from cur.json --no-check -o plan.sh 2>plan.err ||
    fail "plan rollback: $(cat plan.err)"
if command -v shellcheck >/dev/null; then
    shellcheck -s bash plan.sh || fail "the generated script does not pass shellcheck"
fi
{
    echo 'set -euo pipefail'
    sed -n '/^# step 5:/,/^# step [67]:/p' plan.sh | sed '/^# step [67]:/d'
} >step5.sh
grep -q 'sha256sum' step5.sh || fail "step 5 checks no digest"
mkdir -p pd
cp -a cur/etc/profile.d/. pd/
run_step5() {
    if [[ $(id -u) == 0 ]] && unshare --mount true 2>/dev/null; then
        unshare --mount bash -c 'mount --bind "$1" /etc/profile.d && bash "$2"' _ "$T/pd" "$T/$1"
    else # no mount namespace here: the same commands with /etc/profile.d renamed
        sed "s#'/etc/profile.d/#'$T/pd/#g" "$1" >"$1.local"
        bash "$1.local"
    fi
}
run_step5 step5.sh >step5.log 2>&1 || fail "step 5 failed: $(cat step5.log)"
for f in cuda.sh rocm.sh; do
    cmp "base/etc/profile.d/$f" "pd/$f" || fail "$f: not restored byte for byte"
    [[ $(sha256sum <"pd/$f") == $(sha256sum <"base/etc/profile.d/$f") ]] || fail "$f: sha256 differs"
done
[[ ! -e pd/cuda.sh.gpuvet-new ]] || fail "the temporary file was left behind"
got=$(env -i PATH=/usr/bin:/bin sh -c '. "$1"; printf %s "$PATH"' _ "$T/pd/cuda.sh")
[[ $got == /usr/local/cuda/bin:/usr/bin:/bin ]] || fail "a shell sourcing the restored file has PATH=$got"

# a tampered file stops the script before it replaces anything
sed 's#/usr/local/cuda/bin#/usr/local/cuda/bim#' step5.sh >tampered.sh
cp -a cur/etc/profile.d/. pd/
rc=0
run_step5 tampered.sh >tampered.log 2>&1 || rc=$?
[[ $rc != 0 ]] || fail "a script whose text no longer matches the digest ran through"
grep -q 'not the recorded text' tampered.log || fail "no digest message: $(cat tampered.log)"
cmp -s cur/etc/profile.d/cuda.sh pd/cuda.sh || fail "the tampered text replaced the file"
echo "plan_hostile: $n hostile baselines refused; PATH restored exactly"
