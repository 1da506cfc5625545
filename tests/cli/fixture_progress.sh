#!/usr/bin/env bash
# tests/fixtures/progress.sh, which `make test` runs ctest under: while its command runs,
# the time-stamped lines that the fixture scripts append to their build logs
# ($GV_FIXTURE_CACHE/build.log, images/build.log) reach the console with the time since
# the start; lines written before the start, and the build steps' own output, do not;
# the command's output and exit status are kept; the header names the roots that
# debian-rocm.sh would still have to build (here, in an empty cache, all six).
set -uo pipefail
. "$(dirname "$0")/lib.sh"
gv_tmpdir T fixture_progress
C=$T/cache
mkdir -p "$C/images" || fail "mkdir $C/images"
printf '09:00:00 [trixie-rocm 0:00] a line from before the run\n' >"$C/build.log"

# what a test building trixie-rocm and the images would append, while ctest prints its own
cat >"$T/cmd.sh" <<'EOF'
printf '10:00:00 [trixie-rocm 0:00] debootstrap --variant=minbase trixie -> /x\n' >>"$1/build.log"
printf 'I: Retrieving libc6 2.41-12\n' >>"$1/build.log"
printf '10:00:31 [trixie-rocm 0:31] still running: I: Retrieving libc6 2.41-12\n' >>"$1/build.log"
printf '10:01:00 building rocm\n' >>"$1/images/build.log"
echo "1/2 Test #1: cli.example ....   Passed"
exit 5
EOF

rc=0
out=$(GV_FIXTURE_CACHE=$C "$GV_SRC/tests/fixtures/progress.sh" bash "$T/cmd.sh" "$C") || rc=$?
printf '%s\n' "$out" >"$T/out"
[[ $rc == 5 ]] || fail "progress.sh exited $rc, its command 5"
has() { grep -Eq "$1" "$T/out" || fail "no line matching '$1' in: $(cat "$T/out")"; }
has '^1/2 Test #1: cli\.example \.+   Passed$'
has '^fixtures: not built yet: trixie-rocm sid-rocm trixie-torch sid-torch trixie-hipcc sid-hipcc\.$'
has "under $C "
has '^fixtures \+0:0[0-9] debian-rocm \[trixie-rocm 0:00\] debootstrap --variant=minbase trixie -> /x$'
has '^fixtures \+0:0[0-9] debian-rocm \[trixie-rocm 0:31\] still running: I: Retrieving libc6 2\.41-12$'
has '^fixtures \+0:0[0-9] images building rocm$'
! grep -q 'from before the run' "$T/out" || fail "a line written before the run was shown"
[[ $(grep -c 'Retrieving libc6' "$T/out") == 1 ]] || fail "a build step's own output was shown"
[[ $(grep -c '^fixtures +' "$T/out") == 3 ]] || fail "not exactly the three new lines: $(cat "$T/out")"
echo "fixture_progress: ok"
