#!/usr/bin/env bash
# gpuvet as a Slurm Prolog (slurm.conf: Prolog=/usr/share/gpuvet/contrib/slurm/prolog.sh).
# Runs `gpuvet fleet gate --tier prolog` on this node and acts on its exit status:
#
#   gate 0 keep           exit 0: the job starts here.
#   gate 1 drain          `scontrol update NodeName=THIS State=DRAIN Reason="gpuvet: drain: ..."`
#                         (the gate's reason line, sanitized), then exit 1. A Prolog that
#                         fails makes Slurm set the node DRAIN (our reason is kept) and requeue
#                         the job held (or not held, with SchedulerParameters=
#                         nohold_on_prolog_fail); an srun job step fails ("Job prolog failed").
#   gate 2 cannot assess  (no GPU, timeout, tool error; also a gate that is missing, killed,
#   or anything else      or exits with another status) logged, exit 0: a node is never drained
#                         because gpuvet could not judge it, unless the admin sets
#                         GPUVET_ON_CANNOT_ASSESS=drain (then as drain, with that reason).
#
# The same script is the HealthCheckProgram (healthcheck.sh runs it with --healthcheck):
# Slurm ignores a health check's exit status, so the drain is done here with scontrol, and
# with GPUVET_RESUME=1 a node that gpuvet itself drained (its reason starts "gpuvet:
# drain:" or "gpuvet: cannot assess:") is resumed when the gate says keep again.
#
# Settings, from the environment or else from gpuvet.conf beside slurm.conf
# ($SLURM_CONF's folder, /etc/slurm by default; KEY=VALUE lines, read as data, never run;
# ignored unless owned by root and writable by its owner only):
#   GPUVET                   the gpuvet binary (absolute path; default /usr/bin/gpuvet)
#   GPUVET_REFERENCE         reference file for --reference (fleet compare --write-reference);
#                            %n is replaced by this node's name; empty: no reference
#   GPUVET_DEVICE            --device (default: gpuvet's automatic choice)
#   GPUVET_TIER              prolog (default) or drain
#   GPUVET_TIMEOUT           seconds before the gate is killed (default 55: a
#                            HealthCheckProgram is killed at 60 s); killed = cannot assess
#   GPUVET_ON_CANNOT_ASSESS  keep (default) or drain
#   GPUVET_RESUME            1: a health check resumes a node gpuvet drained (default 0)
#   GPUVET_CACHE             gpuvet's cache folder (its fp64 references), given as
#                            XDG_CACHE_HOME: Slurm sets neither that nor HOME (default
#                            /var/cache: /var/cache/gpuvet)
#
# Prolog and HealthCheckProgram run as root with an environment Slurm builds (no PATH):
# PATH is set here, and the node's name comes from SLURMD_NODENAME.
set -u
export LC_ALL=C PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

mode=prolog
[[ ${1:-} == --healthcheck ]] && mode=healthcheck

log() {
    echo "gpuvet-slurm[$mode]: $*" >&2
    command -v logger >/dev/null && logger -t gpuvet-slurm -- "$mode: $*" 2>/dev/null
    return 0
}

# One setting: the environment first, else the config file, else the default. The file
# names a program that runs as root: it is ignored unless owned by root (or by whoever runs
# this) and writable by its owner only.
conf_file=$(dirname -- "${SLURM_CONF:-/etc/slurm/slurm.conf}")/gpuvet.conf
if [[ -e $conf_file ]]; then
    conf_st=$(stat -L -c '%u %a' -- "$conf_file" 2>/dev/null) || conf_st="x 777"
    if [[ ${conf_st% *} != 0 && ${conf_st% *} != "$EUID" ]] || ((8#${conf_st#* } & 8#022)); then
        log "ignoring $conf_file: not owned by root, or writable by others"
        conf_file=
    fi
fi

setting() { # KEY DEFAULT
    local line v
    if [[ -n ${!1+x} ]]; then
        printf '%s' "${!1}"
        return
    fi
    if [[ -n $conf_file && -r $conf_file ]]; then
        line=$(grep -E "^[[:space:]]*$1=" -- "$conf_file" | tail -n 1)
        if [[ -n $line ]]; then
            v=${line#*=}
            v=${v%$'\r'}
            [[ $v == \"*\" || $v == \'*\' ]] && v=${v:1:${#v}-2}
            printf '%s' "$v"
            return
        fi
    fi
    printf '%s' "$2"
}

# A reason fit for scontrol: one line, printable ASCII without quotes, backslashes or
# shell characters, prefixed "gpuvet:", at most 200 bytes.
sanitize() { # TEXT
    local s=$1
    s=${s//→/->}
    s=$(printf '%s' "$s" | tr '\n\r\t' '   ' | tr -c 'A-Za-z0-9 ._:,=+/()@%#[]<>-' '_')
    [[ $s == gpuvet:* ]] || s="gpuvet: $s"
    printf '%s' "${s:0:200}"
}

node=${SLURMD_NODENAME:-$(hostname -s)}
if [[ ! $node =~ ^[A-Za-z0-9._-]{1,64}$ ]]; then
    log "node name not usable: $(sanitize "$node")"
    exit 0
fi

gpuvet=$(setting GPUVET /usr/bin/gpuvet)
reference=$(setting GPUVET_REFERENCE "")
reference=${reference//%n/$node}
device=$(setting GPUVET_DEVICE "")
tier=$(setting GPUVET_TIER prolog)
timeout_s=$(setting GPUVET_TIMEOUT 55)
on_cannot=$(setting GPUVET_ON_CANNOT_ASSESS keep)
resume=$(setting GPUVET_RESUME 0)
cache=$(setting GPUVET_CACHE /var/cache)
[[ $cache == /* ]] || { log "GPUVET_CACHE must be an absolute path"; cache=/var/cache; }

[[ $tier == prolog || $tier == drain ]] || { log "GPUVET_TIER must be prolog or drain, not $(sanitize "$tier")"; tier=prolog; }
[[ $timeout_s =~ ^[1-9][0-9]{0,4}$ ]] || { log "GPUVET_TIMEOUT must be whole seconds"; timeout_s=55; }

# Runs the gate; sets gate_rc and reason (its last "gpuvet: " line on stderr, sanitized).
run_gate() {
    local args=(fleet gate --tier "$tier") out line
    [[ -n $reference ]] && args+=(--reference "$reference")
    [[ -n $device ]] && args+=(--device "$device")
    if [[ $gpuvet != /* || ! -x $gpuvet ]]; then
        gate_rc=2
        reason=$(sanitize "gpuvet: cannot assess: $gpuvet is not an executable absolute path")
        return
    fi
    out=$(GPUVET_FLEET_NODE=$node XDG_CACHE_HOME=$cache timeout -k 5 "$timeout_s" "$gpuvet" "${args[@]}" \
        2>&1 >/dev/null </dev/null; echo "gate-exit:$?")
    gate_rc=${out##*gate-exit:}
    out=${out%gate-exit:*}
    line=$(printf '%s\n' "$out" | grep -E '^gpuvet: ' | tail -n 1)
    case $gate_rc in
    0) [[ -n $line ]] || line="gpuvet: keep" ;;
    1) [[ $line == "gpuvet: drain:"* ]] || line="gpuvet: drain: the gate said drain${line:+ ($line)}" ;;
    124 | 137) line="gpuvet: cannot assess: the gate ran past ${timeout_s} s and was killed" ;;
    2) [[ -n $line ]] || line="gpuvet: cannot assess: the gate exited 2" ;;
    *) line="gpuvet: cannot assess: the gate exited $gate_rc${line:+ ($line)}" ;;
    esac
    reason=$(sanitize "$line")
}

drain() { # REASON
    log "$node: draining: $1"
    scontrol update NodeName="$node" State=DRAIN Reason="$1" ||
        log "$node: scontrol update State=DRAIN failed"
}

# A health check that says keep resumes the node only when gpuvet drained it.
maybe_resume() {
    local current
    [[ $mode == healthcheck && $resume == 1 ]] || return 0
    current=$(scontrol -o show node "$node" 2>/dev/null | grep -Eo 'Reason=gpuvet: (drain|cannot assess):' | head -n 1)
    [[ -n $current ]] || return 0
    log "$node: resuming (the gate says keep)"
    scontrol update NodeName="$node" State=RESUME || log "$node: scontrol update State=RESUME failed"
}

run_gate
case $gate_rc in
0)
    maybe_resume
    exit 0
    ;;
1)
    drain "$reason"
    exit 1
    ;;
*)
    if [[ $on_cannot == drain ]]; then
        drain "$reason"
        exit 1
    fi
    log "$node: not drained: $reason"
    exit 0
    ;;
esac
