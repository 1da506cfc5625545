#!/usr/bin/env bash
# `snapshot -o FILE` and `plan rollback -o FILE` say on stderr what they wrote, in the
# words `gpuvet report` uses ("gpuvet CMD: wrote FILE (N bytes)", N the file's size), and
# keep stdout empty; with `-o -` or no -o the document goes to stdout and nothing is said.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
gv_tmpdir T output_written
mkdir -p "$T/root/etc" "$T/root/var/lib/dpkg/info" "$T/root/var/lib/dpkg/updates"
touch "$T/root/var/lib/dpkg/status" "$T/root/var/lib/dpkg/available" # an empty dpkg database

said() { # CMD FILE: fail unless $GV_ERR is the one "wrote" line for FILE and stdout is empty
    local want
    want="gpuvet $1: wrote $2 ($(stat -c %s "$2") bytes)"
    [[ $(cat "$GV_ERR") == "$want" ]] || fail "$1 -o: stderr is not '$want': $(cat "$GV_ERR")"
    [[ ! -s $GV_OUT ]] || fail "$1 -o: something on stdout: $(head -c 200 "$GV_OUT")"
}
quiet() { # CMD: fail if $GV_ERR says "wrote" or stdout is empty
    ! grep -q 'wrote' "$GV_ERR" || fail "$1 to stdout: says it wrote a file: $(cat "$GV_ERR")"
    [[ -s $GV_OUT ]] || fail "$1 to stdout: nothing on stdout"
}

expect_rc 0 "$GPUVET" snapshot --no-hash --root "$T/root" -o "$T/base.json"
said snapshot "$T/base.json"
expect_rc 0 "$GPUVET" snapshot --no-hash --root "$T/root" -o -
quiet snapshot
expect_rc 0 "$GPUVET" snapshot --no-hash --root "$T/root"
quiet snapshot

for format in sh md json; do
    expect_rc 0 "$GPUVET" plan rollback --to "$T/base.json" --from "$T/base.json" --no-check \
        --format $format -o "$T/plan.$format"
    said plan "$T/plan.$format"
    expect_rc 0 "$GPUVET" plan rollback --to "$T/base.json" --from "$T/base.json" --no-check \
        --format $format -o -
    quiet plan
done
echo "ok: snapshot and plan say what -o wrote"
