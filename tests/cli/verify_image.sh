#!/usr/bin/env bash
# gpuvet verify --image REF / --pid N against a baseline of an image (docs/rollback.md,
# "Images"). The baseline is a real snapshot (with digests) of the trixie-rocm fixture root
# with an image section added by jq (test input).
#   --image: an image that cannot be read (today cli_image_identity's stub, later a missing
#   file) is an error naming REF, exit 3.
#   --pid: a real process maps the root's HIP runtime (python3 mmap, no GPU needed); the
#   process lives in this mount namespace, so what it maps is the root's file under the
#   root's host path: the baseline's library paths get that prefix (as a container's process
#   sees the image's paths under /). Its digest must be the baseline's (exit 0, the digest is
#   sha256sum's); a changed digest and a library the baseline lacks are named (exit 1); a
#   process that is gone is an error (exit 3).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_cmd jq
need_cmd python3
gv_tmpdir T

root=$(bash "$GV_SRC/tests/fixtures/debian-rocm.sh" trixie-rocm 2>"$T/fixture.log" | tail -1) ||
    fail "debian-rocm.sh trixie-rocm failed (see $T/fixture.log)"
lib=/usr/lib/x86_64-linux-gnu/libamdhip64.so.5.7.31921
[[ -f $root$lib ]] || fail "no $lib in the trixie-rocm root '$root'"
expect_rc 0 "$GPUVET" snapshot --root "$root" -o "$T/snap.json"
M=sha256:$(printf manifest | sha256sum | cut -d' ' -f1)
jq --arg m "$M" --arg r "$root" \
    '.image = {collected: true, form: "oci-archive", reference: "/srv/rocm.tar", tags: ["rocm/hip:5.7"],
               manifest_digest: $m, config_digest: $m}
     | .libraries.items |= map(.path = $r + .path)' "$T/snap.json" >"$T/img.json"
[[ $(jq --arg p "$root$lib" '[.libraries.items[] | select(.path == $p and .sha256)] | length' "$T/img.json") == 1 ]] ||
    fail "the snapshot has no digest of $lib"

# --image: the reader's error, naming REF, exit 3
expect_rc 3 "$GPUVET" verify --image "$T/no-such-image.tar" --baseline "$T/img.json"
grep -qF "$T/no-such-image.tar" "$GV_ERR" || fail "verify --image does not name REF in its error"
[[ ! -s $GV_OUT ]] || fail "a failed verify --image printed a report"
expect_rc 2 "$GPUVET" verify --image "$T/x.tar" --pid 1 --baseline "$T/img.json"
expect_rc 2 "$GPUVET" verify --pid 12x --baseline "$T/img.json"

# a real process mapping the root's HIP runtime; "ready" through a FIFO once it is mapped
mkfifo "$T/ready"
python3 -c 'import mmap, sys, time
f = open(sys.argv[1], "rb")
m = mmap.mmap(f.fileno(), 0, prot=mmap.PROT_READ)
open(sys.argv[2], "w").write("ready\n")
time.sleep(86400)' "$root$lib" "$T/ready" &
pid=$!
at_exit "kill $pid 2>/dev/null"
read -r line <"$T/ready"
[[ $line == ready ]] || fail "the mapping process did not start"
want=$(sha256sum "$root$lib" | cut -d' ' -f1)

expect_rc 0 "$GPUVET" verify --pid "$pid" --baseline "$T/img.json" --json
cp "$GV_OUT" "$T/ok.json"
expect_json "$T/ok.json" '(d["stack_matches"], d["ok"], d["kind"], d["pid"])' "(True, True, 'process', $pid)"
expect_json "$T/ok.json" '[(m["path"], m["status"], m["sha256"]) for m in d["mapped"]]' "[('$root$lib', 'match', '$want')]"
expect_json "$T/ok.json" 'd["image"]["manifest_digest"]' "$M"
expect_rc 0 "$GPUVET" verify --pid "$pid" --baseline "$T/img.json"
grep -qF "maps the baseline's GPU libraries" "$GV_OUT" || fail "no human verdict"

# the baseline's digest differs: a mismatch naming both digests, exit 1
other=$(printf other | sha256sum | cut -d' ' -f1)
jq --arg p "$root$lib" --arg o "$other" '.libraries.items |= map(if .path == $p then .sha256 = $o else . end)' \
    "$T/img.json" >"$T/changed.json"
expect_rc 1 "$GPUVET" verify --pid "$pid" --baseline "$T/changed.json" --json
expect_json "$GV_OUT" '[(m["path"], m["sha256"], m["baseline_sha256"]) for m in d["mismatches"]]' "[('$root$lib', '$want', '$other')]"
expect_json "$GV_OUT" '(d["stack_matches"], d["ok"])' "(False, False)"

# the baseline lacks the library: named as not in the baseline, exit 1
jq --arg p "$root$lib" '.libraries.items |= map(select(.path != $p))' "$T/img.json" >"$T/lacks.json"
expect_rc 1 "$GPUVET" verify --pid "$pid" --baseline "$T/lacks.json" --json
expect_json "$GV_OUT" '([m["path"] for m in d["not_in_baseline"]], d["mismatches"])' "(['$root$lib'], [])"
expect_rc 1 "$GPUVET" verify --pid "$pid" --baseline "$T/lacks.json"
grep -qF "not_in_baseline" "$GV_OUT" || fail "the human report does not name the library the baseline lacks"

# a process that is gone: exit 3
kill "$pid"
wait "$pid" 2>/dev/null || true
expect_rc 3 "$GPUVET" verify --pid "$pid" --baseline "$T/img.json"
grep -qF "process $pid" "$GV_ERR" || fail "a gone process is not named"

# what the process maps is read through /proc/N/root, in its own mount namespace: there a
# changed copy is bind-mounted over the library's path, which this namespace still sees as
# the baseline's file (a container's files are not the host's)
unshare -r -m true 2>/dev/null || skip "all else passed; the mount-namespace case needs unshare -r -m"
cp "$root$lib" "$T/changed.so"
printf 'changed' >>"$T/changed.so"
changed=$(sha256sum "$T/changed.so" | cut -d' ' -f1)
mkfifo "$T/ready2"
unshare -r -m sh -c 'mount --bind "$1" "$2" && exec python3 -c "$3" "$2" "$4"' sh \
    "$T/changed.so" "$root$lib" 'import mmap, sys, time
f = open(sys.argv[1], "rb")
m = mmap.mmap(f.fileno(), 0, prot=mmap.PROT_READ)
open(sys.argv[2], "w").write("ready\n")
time.sleep(86400)' "$T/ready2" &
pid2=$!
at_exit "kill $pid2 2>/dev/null"
read -r line <"$T/ready2"
[[ $line == ready ]] || fail "the process in its own mount namespace did not start"
expect_rc 1 "$GPUVET" verify --pid "$pid2" --baseline "$T/img.json" --json
expect_json "$GV_OUT" '[(m["path"], m["sha256"], m["baseline_sha256"]) for m in d["mismatches"]]' "[('$root$lib', '$changed', '$want')]"
echo "ok"
