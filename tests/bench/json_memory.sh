#!/bin/bash
# Benchmark (issue 31, class 6): peak resident memory of the commands that load two
# documents, on the worst JSON documents under the size limits. Each document kind is
# made at each size (MB of text):
#   objs   [{},{},...]               many small objects
#   nums   [0,0,...]                 a long array of small numbers
#   keys   {"k0":0,"k1":0,...}       one object with many keys
#   deep   [[[...]]] 100000 deep     nesting (jansson stops at depth 2048)
#   snap   a valid snapshot (tests/data/diff/before.json) whose packages section holds
#          as many packages as fit; A and B differ in every version, so diff has work
# and for each, `gpuvet diff A B`, `gpuvet compare A B` and `gpuvet verify --baseline A
# --snapshot B` run under /usr/bin/time -v: exit code, wall seconds and "Maximum resident
# set size". Target: every run under 1 GB (1024 MB), whatever it exits with.
#   usage: tests/bench/json_memory.sh GPUVET [GPUVET...]   (Release builds; SIZES="32 200")
# One line per run: binary, kind, size, command, exit, seconds, peak MB.
set -eu
SRC=$(cd "$(dirname "$0")/../.." && pwd)
[ $# -ge 1 ] || { echo "usage: $0 GPUVET [GPUVET...]" >&2; exit 2; }
SIZES=${SIZES:-"32 200"}
. "$(dirname "$0")/../cli/lib.sh"
gv_tmpdir W
python3 - "$W" "$SRC/tests/data/diff/before.json" $SIZES <<'PY'
import json, sys
w, base, sizes = sys.argv[1], sys.argv[2], [int(s) for s in sys.argv[3:]]
head = '{"schema":"gpuvet.snapshot","schema_version":1,"x":'
def write(name, side, body_unit, n, pre, post):
    with open("%s/%s-%s.json" % (w, name, side), "w") as f:
        f.write(pre)
        chunk = ",".join([body_unit] * 100000)
        for i in range(n // 100000):
            f.write(("," if i else "") + chunk)
        f.write(post)
for mb in sizes:
    b = mb << 20
    for side in ("a", "b"):
        write("objs%d" % mb, side, "{}", b // 3, head + "[", "]}")
        write("nums%d" % mb, side, "0", b // 2, head + "[", "]}")
        with open("%s/keys%d-%s.json" % (w, mb, side), "w") as f:
            f.write(head + "{")
            n, i, size = 0, 0, 0
            while size < b:
                s = '%s"k%d":0' % ("," if i else "", i)
                f.write(s)
                size += len(s)
                i += 1
            f.write("}}")
        with open("%s/deep%d-%s.json" % (w, mb, side), "w") as f:
            f.write(head + "[" * 100000 + "]" * 100000 + "}")
        d = json.load(open(base))
        one = len(json.dumps({"name": "p0000000", "version": "1.0-%s" % side, "arch": "amd64",
                              "state": "installed", "hold": False, "gpu": False})) + 1
        n = b // one
        d["packages"]["items"] = [{"name": "p%07d" % i, "version": "1.0-%s" % side, "arch": "amd64",
                                   "state": "installed", "hold": False, "gpu": False}
                                  for i in range(n)]
        d["packages"]["count"] = n
        json.dump(d, open("%s/snap%d-%s.json" % (w, mb, side), "w"), separators=(",", ":"))
PY
echo "cpus: $(nproc), memory: $(free -m | awk '/Mem:/{print $2}') MB"
printf '%-28s %-8s %4s  %-8s %4s %7s %8s\n' binary kind MB command exit seconds peak_MB
for G in "$@"; do
    for mb in $SIZES; do
        for kind in objs nums keys deep snap; do
            A=$W/$kind$mb-a.json B=$W/$kind$mb-b.json
            for cmd in diff compare verify; do
                case $cmd in
                    verify) args=(verify --baseline "$A" --snapshot "$B") ;;
                    *) args=("$cmd" "$A" "$B") ;;
                esac
                rc=0
                /usr/bin/time -v -o "$W/time" "$G" "${args[@]}" >/dev/null 2>"$W/err" || rc=$?
                [ "$rc" -le 3 ] || { echo "$G ${args[*]}: exit $rc: $(tail -3 "$W/err")" >&2; }
                kb=$(awk -F': ' '/Maximum resident set size/{print $2}' "$W/time")
                s=$(awk -F': ' '/Elapsed \(wall clock\)/{print $2}' "$W/time")
                printf '%-28s %-8s %4d  %-8s %4d %7s %8d\n' "$(basename "$(dirname "$G")")/$(basename "$G")" \
                    "$kind" "$mb" "$cmd" "$rc" "$s" "$((kb / 1024))"
            done
        done
    done
done
