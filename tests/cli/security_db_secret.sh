#!/usr/bin/env bash
# Issue 31, class 7: a PostgreSQL password given on the command line is not in the
# process list, and no error message shows it. gpuvet history list --db
# postgresql://u:secretpw@127.0.0.1:PORT/x connects to a socket this test listens on
# and never answers; once the connection is accepted (gpuvet has parsed its arguments
# long before), /proc/PID/cmdline is read: the password is absent, in both the
# "--db URL" and the "--db=URL" forms. Then the error messages of report, diff and
# verify given such a URL as a file, and of history with a password= parameter.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_cmd python3 "python3 is needed for the listener"
gv_workdir T
cd "$T"

for form in split joined; do
    mkfifo port.$form cmdline.$form.pid
    # says its port, learns gpuvet's pid, accepts one connection, reads gpuvet's
    # cmdline, then closes the connection
    python3 - port.$form cmdline.$form <<'PY' &
import socket, sys
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(1)
s.settimeout(120)  # only when gpuvet never connects: the test fails then
with open(sys.argv[1], "w") as f:
    f.write("%d\n" % s.getsockname()[1])
pid = open(sys.argv[2] + ".pid").read().strip()
c, _ = s.accept()
open(sys.argv[2], "wb").write(open("/proc/%s/cmdline" % pid, "rb").read())
c.close()
PY
    lst=$!
    port=$(head -1 port.$form)
    url="postgresql://u:secretpw@127.0.0.1:$port/x"
    if [[ $form == split ]]; then
        "$GPUVET" history list --db "$url" >out.$form 2>&1 &
    else
        "$GPUVET" history list "--db=$url" >out.$form 2>&1 &
    fi
    gv=$!
    echo $gv >cmdline.$form.pid
    wait $lst || fail "$form: the listener failed (gpuvet never connected?): $(cat out.$form)"
    rc=0
    wait $gv || rc=$?
    [[ $rc == 3 ]] || fail "$form: gpuvet exited $rc after the server closed: $(cat out.$form)"
    [[ -s cmdline.$form ]] || fail "$form: no cmdline read"
    tr '\0' ' ' <cmdline.$form >cmdline.$form.txt
    grep -q "127.0.0.1:$port" cmdline.$form.txt || fail "$form: not gpuvet's cmdline: $(cat cmdline.$form.txt)"
    ! grep -q secretpw cmdline.$form.txt || fail "$form: the password is in /proc/PID/cmdline: $(cat cmdline.$form.txt)"
    ! grep -q secretpw out.$form || fail "$form: the password is in the output: $(cat out.$form)"
done

# a URL where a file is expected: the error names it without the password
url=postgresql://u:secretpw@127.0.0.1/x
for cmd in "report $url" "diff $url $GV_SRC/tests/data/diff/before.json" \
    "diff $GV_SRC/tests/data/diff/before.json $url" "verify --baseline $url" \
    "history list --db $url?password=secretpw2&sslmode=disable" "matrix --db=host=/nonexistent password=secretpw"; do
    rc=0
    # shellcheck disable=SC2086
    "$GPUVET" $cmd >msg.out 2>&1 || rc=$?
    [[ $rc == 3 || $rc == 2 ]] || fail "$cmd: exit $rc: $(cat msg.out)"
    [[ -s msg.out ]] || fail "$cmd: no message"
    ! grep -q secretpw msg.out || fail "$cmd: the password in the message: $(cat msg.out)"
    grep -q '\*\*\*\|u@127' msg.out || fail "$cmd: the message does not name the database: $(cat msg.out)"
done
echo "no password in the process list or in messages"
