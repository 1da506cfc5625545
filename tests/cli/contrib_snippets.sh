#!/usr/bin/env bash
# The scheduler snippets in contrib/ (issue 34): every script parses (bash -n, sh -n) and
# passes shellcheck, the NPD plugin config is JSON with the fields NPD reads, the Kubernetes
# YAML has what a DaemonSet and a Job need (a line check: no PyYAML here), the NPD script and
# the NHC check map the gate's exit status as contrib/README.md says (with a stub gate, a
# test input), and every option the snippets pass to `gpuvet fleet gate` is one that
# `gpuvet fleet gate --help` documents (skipped until `gpuvet fleet` exists).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_cmd shellcheck
gv_tmpdir tmp contrib_snippets
C=$GV_SRC/contrib

echo "== scripts parse"
scripts=("$C"/slurm/prolog.sh "$C"/slurm/healthcheck.sh "$C"/npd/gpuvet-npd.sh "$C"/nhc/gpuvet.nhc)
for f in "${scripts[@]}"; do
    [[ -f $f ]] || fail "missing $f"
    case $(head -n 1 "$f") in
    '#!/bin/sh'*) sh -n "$f" || fail "sh -n $f" ;;
    *) bash -n "$f" || fail "bash -n $f" ;;
    esac
    shellcheck -s "$([[ $(head -n 1 "$f") == '#!/bin/sh'* ]] && echo sh || echo bash)" "$f" ||
        fail "shellcheck $f"
done
for f in "$C"/slurm/prolog.sh "$C"/slurm/healthcheck.sh "$C"/npd/gpuvet-npd.sh; do
    [[ -x $f ]] || fail "$f is not executable (Slurm and NPD run it directly)"
done

echo "== the NPD plugin config"
python3 - "$C/npd/gpuvet-plugin.json" <<'PY' || fail "gpuvet-plugin.json"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["plugin"] == "custom", d["plugin"]
pc = d["pluginConfig"]
for k in ("invoke_interval", "timeout", "max_output_length", "concurrency"):
    assert k in pc, k
assert pc["max_output_length"] >= 200, "the gate's reason is up to 200 bytes"
cond = {c["type"] for c in d["conditions"]}
assert d["rules"], "no rules"
for r in d["rules"]:
    assert r["type"] in ("temporary", "permanent"), r
    assert r["path"].endswith("/gpuvet-npd.sh"), r["path"]
    if r["type"] == "permanent":
        assert r["condition"] in cond, r
    t = int(r.get("timeout", pc["timeout"]).rstrip("s"))
    assert t > 80, "the rule's timeout must exceed the script's GPUVET_TIMEOUT (80 s)"
PY

echo "== the Kubernetes YAML"
python3 - "$C/k8s/gpuvet-daemonset.yaml" "$C/k8s/gpuvet-job.yaml" <<'PY' || fail "k8s YAML"
import re, sys
def docs(path):
    text = open(path).read()
    assert "\t" not in text, path + ": a tab"
    return [d for d in re.split(r"(?m)^---$", text) if d.strip()]
def top(doc, key):
    m = re.search(r'(?m)^%s: "([^"]*)"$' % key, doc)
    return m.group(1) if m else None
def need(doc, what, pattern):
    assert re.search(pattern, doc, re.M), what
kinds = {}
for path in sys.argv[1:]:
    for doc in docs(path):
        assert top(doc, "apiVersion"), path + ": a document without apiVersion"
        kinds[top(doc, "kind")] = (top(doc, "apiVersion"), doc)
api, ds = kinds["DaemonSet"]
assert api == "apps/v1", api
need(ds, "metadata.name", r'^metadata:\n  name: "[a-z0-9-]+"')
sel = re.search(r'^  selector:\n    matchLabels:\n      (\S+): "([^"]+)"', ds, re.M)
assert sel, "spec.selector.matchLabels"
need(ds, "template labels matching the selector",
     r'^  template:\n    metadata:\n      labels:\n        %s: "%s"' % (re.escape(sel.group(1)), re.escape(sel.group(2))))
need(ds, "containers with a name", r'^      containers:\n        - name: "[a-z0-9-]+"')
need(ds, "an image", r'^          image: "[^"]+"')
need(ds, "the plugin config", r'custom-plugin-monitor=/etc/gpuvet/npd/gpuvet-plugin.json')
assert "ServiceAccount" in kinds and "ClusterRole" in kinds and "ClusterRoleBinding" in kinds
api, job = kinds["Job"]
assert api == "batch/v1", api
need(job, "metadata.name", r'^metadata:\n  name: "[a-z0-9-]+"')
need(job, "restartPolicy Never or OnFailure", r'^      restartPolicy: "(Never|OnFailure)"')
need(job, "containers with a name", r'^      containers:\n        - name: "[a-z0-9-]+"')
need(job, "an image", r'^          image: "[^"]+"')
need(job, "the gate", r'^            - "fleet"\n            - "gate"')
PY

echo "== the NPD script and the NHC check map the gate's exit"
cat >"$tmp/gate" <<'STUB'
#!/bin/bash
echo "$*" >>"$(dirname "$0")/argv"
echo "${XDG_CACHE_HOME:-unset}" >"$(dirname "$0")/cache"
case ${STUB_RC:-0} in
hang) exec sleep 600 ;;
1) printf 'progress\ngpuvet: drain: gemm.f32 "x" $(id) →\n' >&2; exit 1 ;;
*) echo "gpuvet: stub exit $STUB_RC" >&2; exit "$STUB_RC" ;;
esac
STUB
chmod +x "$tmp/gate"
npd() { # WANT STUB_RC
    local rc=0
    GPUVET=$tmp/gate GPUVET_DEVICE=cpu GPUVET_REFERENCE=/r.json GPUVET_TIMEOUT=2 STUB_RC=$2 \
        "$C/npd/gpuvet-npd.sh" >"$tmp/npd.out" || rc=$?
    [[ $rc == "$1" ]] || fail "gpuvet-npd.sh with a gate exiting $2: $rc, not $1 ($(cat "$tmp/npd.out"))"
    [[ $(grep -c . "$tmp/npd.out") == 1 ]] || fail "gpuvet-npd.sh printed not one line: $(cat "$tmp/npd.out")"
}
npd 0 0
npd 1 1
[[ $(cat "$tmp/npd.out") == 'gpuvet: drain: gemm.f32 _x_ _(id) ->' ]] || fail "NPD message: $(cat "$tmp/npd.out")"
npd 3 2
npd 3 7
npd 3 hang
grep -q 'cannot assess: the gate ran past 2 s' "$tmp/npd.out" || fail "NPD after a hang: $(cat "$tmp/npd.out")"
GPUVET=/nonexistent "$C/npd/gpuvet-npd.sh" >/dev/null && fail "gpuvet-npd.sh without gpuvet said no problem"

nhc() { # WANT-RC WANT-DIED STUB_RC [ARGS...]
    local want=$1 died=$2 rc=0
    shift 2
    STUB_RC=$1 bash -c '
        die() { echo "DIE $*"; return 1; }
        log() { echo "LOG $*"; }
        . "$1"; shift 2
        check_gpuvet "$@"' nhc "$C/nhc/gpuvet.nhc" "$@" >"$tmp/nhc.out" 2>&1 || rc=$?
    [[ $rc == "$want" ]] || fail "check_gpuvet, gate exiting $1: $rc, not $want ($(cat "$tmp/nhc.out"))"
    if ((died)); then
        grep -q '^DIE 1 gpuvet: ' "$tmp/nhc.out" || fail "check_gpuvet did not die: $(cat "$tmp/nhc.out")"
    else
        grep -q '^DIE' "$tmp/nhc.out" && fail "check_gpuvet died: $(cat "$tmp/nhc.out")"
    fi
    return 0
}
nhc 0 0 0 -g "$tmp/gate" -d cpu -r /r-%n.json
nhc 1 1 1 -g "$tmp/gate"
grep -qxF 'DIE 1 gpuvet: drain: gemm.f32 _x_ _(id) ->' "$tmp/nhc.out" || fail "NHC message: $(cat "$tmp/nhc.out")"
nhc 0 0 2 -g "$tmp/gate"
grep -q '^LOG check_gpuvet: gpuvet: stub exit 2 (not marked offline)' "$tmp/nhc.out" || fail "NHC log: $(cat "$tmp/nhc.out")"
nhc 1 1 2 -g "$tmp/gate" -a
nhc 0 0 hang -g "$tmp/gate" -T 2
grep -q 'ran past 2 s' "$tmp/nhc.out" || fail "NHC after a hang: $(cat "$tmp/nhc.out")"

echo "== the options passed to gpuvet fleet gate"
# What each snippet called the stub with, plus the Job's command.
mkdir -p "$tmp/conf"
printf 'GPUVET=%s\nGPUVET_REFERENCE=/ref-%%n.json\nGPUVET_DEVICE=cpu\nGPUVET_CACHE=/var/tmp/c\n' "$tmp/gate" >"$tmp/conf/gpuvet.conf"
chmod 644 "$tmp/conf/gpuvet.conf" # prolog.sh ignores a config others may write
env -i SLURMD_NODENAME=n1 SLURM_CONF="$tmp/conf/slurm.conf" STUB_RC=0 "$C/slurm/prolog.sh" ||
    fail "prolog.sh with a gate that keeps exited $?"
env -i SLURMD_NODENAME=n1 SLURM_CONF="$tmp/conf/slurm.conf" STUB_RC=0 "$C/slurm/healthcheck.sh" ||
    fail "healthcheck.sh with a gate that keeps exited $?"
grep -qxF 'fleet gate --tier prolog --reference /ref-n1.json --device cpu' "$tmp/argv" ||
    fail "prolog.sh called: $(cat "$tmp/argv")"
[[ $(cat "$tmp/cache") == /var/tmp/c ]] || fail "prolog.sh gave the gate XDG_CACHE_HOME=$(cat "$tmp/cache")"
# A config file others may write is not trusted to name the program run as root.
cp "$tmp/argv" "$tmp/argv.before"
chmod 666 "$tmp/conf/gpuvet.conf"
env -i SLURMD_NODENAME=n1 SLURM_CONF="$tmp/conf/slurm.conf" STUB_RC=1 "$C/slurm/prolog.sh" 2>"$tmp/prolog.err" ||
    fail "prolog.sh with a world-writable gpuvet.conf exited $? (cannot assess: keep)"
cmp -s "$tmp/argv" "$tmp/argv.before" || fail "prolog.sh ran the GPUVET of a world-writable gpuvet.conf"
grep -q "ignoring $tmp/conf/gpuvet.conf" "$tmp/prolog.err" || fail "no word of the ignored config: $(cat "$tmp/prolog.err")"
chmod 644 "$tmp/conf/gpuvet.conf"
sed -n '/^          command:/,/^          [a-z]/s/^            - "\(.*\)"$/\1/p' "$C/k8s/gpuvet-job.yaml" |
    tail -n +2 | tr '\n' ' ' >>"$tmp/argv"
used=$(grep -o -- '--[a-z][a-z-]*' "$tmp/argv" | sort -u)
[[ -n $used ]] || fail "no options recorded"
"$GPUVET" fleet gate --help >"$tmp/help" 2>&1 || fail "gpuvet fleet gate --help failed"
for o in $used; do
    grep -qE -- "(^|[[ ,])$o([] =,]|$)" "$tmp/help" || fail "$o is not in gpuvet fleet gate --help"
done
