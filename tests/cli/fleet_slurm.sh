#!/usr/bin/env bash
# gpuvet under a real Slurm (issue 34): tests/fixtures/slurm.sh starts a private cluster
# (munge, slurmctld, four slurmd n1..n4 on this machine) with
# Prolog=contrib/slurm/prolog.sh (PrologFlags=Alloc), then:
#   1. the cluster itself: `srun -N 2 hostname` runs two tasks on two nodes, and the
#      Prolog ran on each of them (a stub gate, a test input, writes a file per node with
#      its arguments);
#   2. the snippets' decisions with the stub gate: n1 keep, n2 drain (a hostile reason:
#      quotes, $(...), a newline, 300 bytes), n3 cannot assess (exit 2), n4 hangs past
#      GPUVET_TIMEOUT: only n2 is DRAIN, with the sanitized reason; then
#      contrib/slurm/healthcheck.sh, run as slurmd runs it (an environment of
#      SLURMD_NODENAME only, plus SLURM_CONF to find this cluster: slurmd passes none, so
#      an installed one reads /etc/slurm/gpuvet.conf), drains and resumes
#      (GPUVET_RESUME=1) as prolog.sh says;
#   3. the real gate (skipped until `gpuvet fleet` exists): srun -N 4 gpuvet fleet run
#      --dir D --device cpu --only 'gemm.f32*', fleet compare D, a reference, and a Prolog
#      whose reference for n2 (GPUVET_REFERENCE=ref-%n.json) carries another stack digest:
#      n2 is drained with the gate's reason, n1 stays up.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$GV_SRC/tests/fixtures/slurm.sh"

need_root "the private Slurm needs root (munged owns its key, slurmd runs jobs)"
gv_tmpdir tmp fleet_slurm
chmod 755 "$tmp"

# The stub gate (a test input standing in for `gpuvet fleet gate`): records its arguments
# and who called it, then acts as $tmp/mode says for this node.
cat >"$tmp/stub-gate" <<'STUB'
#!/bin/bash
dir=$(dirname "$0")
node=${GPUVET_FLEET_NODE:-unknown}
echo "${SLURM_SCRIPT_CONTEXT:-hand} $*" >>"$dir/gate.$node"
mode=$(cat "$dir/mode")
[[ $mode == keep ]] && { echo "gpuvet: keep: all cases agree" >&2; exit 0; }
case $node in
n1) echo "gpuvet: keep: all cases agree" >&2; exit 0 ;;
n2)
    echo "some progress line" >&2
    printf 'gpuvet: drain: gemm.f32 "digest" → other $(touch %s/PWN) `id` \\ '"'q'"' %0300d\n' "$dir" 0 >&2
    exit 1 ;;
n3) echo "gpuvet: cannot assess: no GPU" >&2; exit 2 ;;
n4) exec sleep 600 ;;
esac
exit 2
STUB
chmod 755 "$tmp/stub-gate"
echo keep >"$tmp/mode"

write_gpuvet_conf() { # GPUVET REFERENCE
    cat >"$tmp/slurm/gpuvet.conf" <<CONF
# read by contrib/slurm/prolog.sh (beside slurm.conf)
GPUVET="$1"
GPUVET_REFERENCE="$2"
GPUVET_DEVICE=cpu
GPUVET_TIMEOUT=${3:-55}
GPUVET_CACHE="$tmp/cache"
CONF
    chmod 644 "$tmp/slurm/gpuvet.conf" # prolog.sh ignores a config others may write
}

not_drained() { # NODE
    local st
    st=$(slurm_node_field "$1" State)
    [[ $st != *DRAIN* ]] || fail "$1 is $st (reason: $(slurm_node_field "$1" Reason)), expected not drained"
}
is_drained() { # NODE
    local st
    st=$(slurm_node_field "$1" State)
    [[ $st == *DRAIN* ]] || fail "$1 is $st, expected DRAIN"
}
not_running_prolog() { ! pgrep -f "$GV_SRC/contrib/slurm/prolog.sh" >/dev/null; }
# Waits until CMD succeeds, polling; the deadline (120 s) guards against a hang on a loaded
# machine and is no timing assertion. Slurm answers srun as soon as one node's Prolog
# fails: the others' Prologs may still be starting.
eventually() { # WHAT CMD...
    local what=$1 deadline=$((SECONDS + 120))
    shift
    until ("$@") >/dev/null 2>&1; do
        ((SECONDS < deadline)) || fail "$what (waited 120 s)"
        sleep 0.5
    done
}
node_reason() { # NODE: the Reason without Slurm's " [user@time]" suffix
    scontrol -o show node "$1" | sed -n 's/.*Reason=\(.*\) \[[^]]*\].*/\1/p'
}

SLURM_EXTRA_CONF="Prolog=$GV_SRC/contrib/slurm/prolog.sh
PrologFlags=Alloc"
mkdir -p "$tmp/slurm"
write_gpuvet_conf "$tmp/stub-gate" "$tmp/ref-%n.json"
rc=0
slurm_start "$tmp/slurm" 4 || rc=$?
((rc == 0)) || { ((rc == 77)) && skip "$SLURM_SKIP"; fail "the private Slurm did not start"; }

echo "== 1. srun -N 2 hostname, the Prolog on each node"
expect_rc 0 timeout 300 srun -N 2 -t 5 hostname
[[ $(grep -c . "$GV_OUT") == 2 ]] || fail "srun -N 2 hostname printed: $(cat "$GV_OUT")"
ran=$(cat "$tmp"/gate.n* 2>/dev/null | grep -c '^prolog_slurmd fleet gate --tier prolog' || true)
[[ $ran == 2 ]] || fail "the Prolog ran the gate $ran times, not 2: $(cat "$tmp"/gate.n* 2>&1)"
for f in "$tmp"/gate.n*; do
    n=${f##*.}
    grep -qxF "prolog_slurmd fleet gate --tier prolog --reference $tmp/ref-$n.json --device cpu" "$f" ||
        fail "the Prolog on $n called: $(cat "$f")"
done
for n in n1 n2 n3 n4; do not_drained $n; done

echo "== 2. the Prolog's decisions: n1 keep, n2 drain, n3 cannot assess, n4 past its time"
echo mixed >"$tmp/mode"
# n4's gate is killed after GPUVET_TIMEOUT; 15 s leaves the other stubs room on a loaded
# machine (a stub past it would be "cannot assess", and n2 would not drain).
write_gpuvet_conf "$tmp/stub-gate" "$tmp/ref-%n.json" 15
rm -f "$tmp"/gate.n*
rc=0
timeout 300 srun -N 4 -t 5 true >"$tmp/srun4.out" 2>&1 || rc=$?
((rc != 0)) || fail "srun -N 4 succeeded although n2's Prolog said drain"
for n in n1 n2 n3 n4; do
    eventually "the Prolog did not run the gate on $n: $(cat "$tmp/srun4.out")" test -s "$tmp/gate.$n"
done
eventually "n2 never became DRAIN" is_drained n2
# Every Prolog has ended (n4's by its timeout) before the health checks below.
eventually "a Prolog never ended" not_running_prolog
reason=$(node_reason n2)
echo "n2: $reason"
[[ $reason == "gpuvet: drain: gemm.f32 _digest_ -> other _(touch "* ]] || fail "n2's reason: '$reason'"
[[ ${#reason} -le 200 ]] || fail "n2's reason is ${#reason} bytes"
[[ $reason != *[\"\'\`\$\\]* ]] || fail "n2's reason kept a quote, \$, backquote or backslash: $reason"
[[ ! -e $tmp/PWN ]] || fail "the reason's \$(...) was run"
for n in n1 n3 n4; do not_drained $n; done

echo "== 2b. the health check, run as slurmd runs it"
hc() { # NODE: healthcheck.sh in an environment like slurmd's
    env -i SLURMD_NODENAME="$1" SLURM_CONF="$SLURM_CONF" "$GV_SRC/contrib/slurm/healthcheck.sh"
}
expect_rc 0 scontrol update NodeName=n2 State=RESUME
not_drained n2
expect_rc 1 hc n2
is_drained n2
[[ $(node_reason n2) == "$reason" ]] || fail "the health check's reason '$(node_reason n2)' differs from the Prolog's"
expect_rc 0 hc n3
not_drained n3
echo keep >"$tmp/mode"
expect_rc 0 hc n2
is_drained n2 # GPUVET_RESUME is off: a keep does not resume
echo "GPUVET_RESUME=1" >>"$tmp/slurm/gpuvet.conf"
expect_rc 0 hc n2
not_drained n2
expect_rc 0 scontrol update NodeName=n1 State=DRAIN Reason="admin: memory test"
expect_rc 0 hc n1
is_drained n1 # drained by someone else: left alone
expect_rc 0 scontrol update NodeName=n1 State=RESUME

echo "== 3. the real gate"
{ "$GPUVET" fleet run --help && "$GPUVET" fleet gate --help; } >/dev/null 2>&1 ||
    fail "gpuvet fleet run/gate --help failed"
D=$tmp/run
mkdir -p "$D"
chmod 755 "$D"
# Each task runs in an environment like the one prolog.sh gives the gate (its PATH and
# cache, the Slurm variables, nothing of this test's), so that the stack the reference
# holds is the stack the gate sees, whatever variables gpuvet's stack summary keeps.
cat >"$tmp/task" <<TASK
#!/bin/bash
mapfile -t slurm_vars < <(env | grep '^SLURM')
exec env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin LC_ALL=C \
    XDG_CACHE_HOME="$tmp/cache" "\${slurm_vars[@]}" "\$@"
TASK
chmod 755 "$tmp/task"
expect_rc 0 timeout 600 srun -N 4 -t 10 "$tmp/task" "$GPUVET" fleet run --dir "$D" --device cpu --only 'gemm.f32*'
nodes=$(cd "$D/nodes" && ls)
for n in n1 n2 n3 n4; do
    grep -q "^$n\.r[0-9]*\.json$" <<<"$nodes" || fail "no node document from $n: $nodes"
done
expect_rc 0 "$GPUVET" fleet compare "$D" --json -o "$tmp/fleet.json" --write-reference "$tmp/ref.json"
expect_json "$tmp/fleet.json" 'd["summary"]["odd"]' 0
expect_json "$tmp/fleet.json" 'd["nodes"]' 4
# n1's reference is the fleet's; n2's has another stack digest in every group (its stack
# "drifted" from the reference), so the gate must say drain there and keep on n1.
cp "$tmp/ref.json" "$tmp/ref-n1.json"
python3 - "$tmp/ref.json" "$tmp/ref-n2.json" <<'PY'
import json, sys
ref = json.load(open(sys.argv[1]))
def other(d):
    if isinstance(d, dict):
        for k, v in d.items():
            if k == "stack_digest" and isinstance(v, str):
                d[k] = "sha256:" + "0" * 64
            else:
                other(v)
    elif isinstance(d, list):
        for v in d:
            other(v)
other(ref)
json.dump(ref, open(sys.argv[2], "w"))
PY
cmp -s "$tmp/ref.json" "$tmp/ref-n2.json" && fail "the reference has no stack_digest to change"
write_gpuvet_conf "$GPUVET" "$tmp/ref-%n.json" 55
rc=0
timeout 300 srun -N 2 -w n1,n2 -t 5 true >"$tmp/srun-gate.out" 2>&1 || rc=$?
((rc != 0)) || fail "srun on n1,n2 succeeded although n2's gate should say drain"
eventually "n2 never became DRAIN" is_drained n2
eventually "a Prolog never ended" not_running_prolog
reason=$(node_reason n2)
echo "n2: $reason"
[[ $reason == "gpuvet: drain:"*"stack drift"* ]] || fail "n2's reason is not the gate's stack drift: '$reason'"
not_drained n1
