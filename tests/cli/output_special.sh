#!/usr/bin/env bash
# -o into a file that is not a regular one (a FIFO, /dev/stdout) writes into
# it and leaves it what it was: the atomic write (temporary file, rename) once
# renamed its temporary file over the target, so `-o /dev/null` run as root
# replaced the device node with a regular file.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
gv_tmpdir T
mkfifo "$T/fifo"
cat "$T/fifo" >"$T/read" &   # blocks until gpuvet opens the FIFO for writing
reader=$!
"$GPUVET" snapshot --no-hash --root "$T" -o "$T/fifo" >"$T/out" 2>&1 || { kill "$reader"; cat "$T/out"; fail "snapshot -o FIFO failed"; }
# the reader still waits on the old FIFO when it was renamed over: end it
[[ -p $T/fifo ]] || { kill "$reader"; fail "the FIFO was replaced by a $(stat -c %F "$T/fifo")"; }
wait "$reader"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["schema"]=="gpuvet.snapshot", d["schema"]' "$T/read" ||
    fail "what came through the FIFO is not a snapshot"
ls "$T" | grep -q 'fifo\.tmp' && fail "a temporary file was left beside the FIFO"
# /dev/stdout: the document goes down the pipe
"$GPUVET" snapshot --no-hash --root "$T" -o /dev/stdout 2>/dev/null | python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["schema"]=="gpuvet.snapshot"' ||
    fail "snapshot -o /dev/stdout did not write the document to the pipe"
# a directory is refused, not replaced
mkdir "$T/dir"
rc=0; "$GPUVET" snapshot --no-hash --root "$T" -o "$T/dir" >"$T/out" 2>&1 || rc=$?
[[ $rc -ne 0 && -d $T/dir ]] || fail "snapshot -o DIR: exit $rc"
echo "ok: -o into a FIFO and /dev/stdout writes into them; a directory is refused"
