#!/usr/bin/env bash
# Every committed benchmark that runs on this machine, one after another, against a
# Release build (make bench). Each prints its own figures and targets; a benchmark whose
# input is not here (a fixture root, a GPU, PyTorch) says "skipped" and why.
#   usage: tests/bench/run.sh [BUILD_DIR]    (default: build)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
B=$(cd "${1:-build}" && pwd)
G=$B/gpuvet
[[ -x $G ]] || { echo "no gpuvet in $B (run make build)" >&2; exit 2; }
status=0
run() {
    local name=$1; shift
    echo "== $name"
    "$@"
    local rc=$?
    if [[ $rc == 77 ]]; then echo "   skipped"; elif [[ $rc != 0 ]]; then echo "   $name: exit $rc"; status=1; fi
}
torch_py=
for py in "${GV_TORCH_PYTHON:-}" python3 /usr/bin/python3; do
    [[ -n $py ]] && "$py" -c 'import torch' 2>/dev/null && { torch_py=$py; break; }
done
run bench_check "$here/bench_check.sh" "$B"
run doctor "$here/doctor.sh" "$G"
run bench_dpkg "$here/bench_dpkg.sh" "$G"
run snapshot_root "$here/snapshot_root.sh" "$G"
run snapshot_first "$here/snapshot_first.sh" "$G"
GPUVET=$G run snapshot_speed "$here/snapshot_speed.sh"
if [[ -n $torch_py ]]; then
    run bench_torch "$here/bench_torch.sh" "$G" "$torch_py"
    dev=cpu; command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1 && dev=cuda:0
    run bench_capture "$here/bench_capture.sh" "$G" "$torch_py" "$dev"
else
    echo "== bench_torch, bench_capture"; echo "   skipped: no python with torch (set GV_TORCH_PYTHON)"
fi
run offload_scan "$here/offload_scan.sh" "$B"
run port_scan "$here/port_scan.sh" "$G"
run image_snapshot "$here/image_snapshot.sh" "$B"
run bench_probe "$here/bench_probe.sh" "$B"
run bench_report "$here/bench_report.sh" "$B"
run bench_history "$here/bench_history.sh" "$B"
run fleet_compare "$here/fleet_compare.sh" "$B"
exit $status
