#!/bin/sh
# node-problem-detector custom plugin (contrib/npd/gpuvet-plugin.json runs it): the gpuvet
# gate on this node, its reason line on stdout (NPD's condition message), and NPD's exit
# status convention: 0 no problem (gate: keep), 1 problem (gate: drain), 3 unknown (gate:
# cannot assess, killed at GPUVET_TIMEOUT seconds, missing, or any other status). NPD kills
# the plugin at the rule's "timeout" (90s): GPUVET_TIMEOUT (default 80) stays below it.
# Settings from the environment of the NPD container: GPUVET (default /usr/bin/gpuvet),
# GPUVET_TIER (prolog), GPUVET_REFERENCE, GPUVET_DEVICE, GPUVET_TIMEOUT.
export LC_ALL=C
gpuvet=${GPUVET:-/usr/bin/gpuvet}
tier=${GPUVET_TIER:-prolog}
secs=${GPUVET_TIMEOUT:-80}
case $tier in prolog | drain) ;; *) echo "gpuvet: cannot assess: GPUVET_TIER must be prolog or drain"; exit 3 ;; esac
case $secs in '' | *[!0-9]*) echo "gpuvet: cannot assess: GPUVET_TIMEOUT must be whole seconds"; exit 3 ;; esac
if [ ! -x "$gpuvet" ]; then
    echo "gpuvet: cannot assess: $gpuvet is not executable"
    exit 3
fi
set -- fleet gate --tier "$tier"
[ -n "${GPUVET_REFERENCE:-}" ] && set -- "$@" --reference "$GPUVET_REFERENCE"
[ -n "${GPUVET_DEVICE:-}" ] && set -- "$@" --device "$GPUVET_DEVICE"
out=$(timeout -k 5 "$secs" "$gpuvet" "$@" 2>&1 >/dev/null </dev/null; echo "gate-exit:$?")
rc=${out##*gate-exit:}
line=$(printf '%s\n' "${out%gate-exit:*}" | grep -E '^gpuvet: ' | tail -n 1 | sed 's/→/->/g' |
    tr -c 'A-Za-z0-9 ._:,=+/()@%#[]<>\n-' '_' | head -c 200)
case $rc in
0) echo "${line:-gpuvet: keep}"; exit 0 ;;
1) echo "${line:-gpuvet: drain}"; exit 1 ;;
124 | 137) echo "gpuvet: cannot assess: the gate ran past $secs s and was killed"; exit 3 ;;
*) echo "${line:-gpuvet: cannot assess: the gate exited $rc}"; exit 3 ;;
esac
