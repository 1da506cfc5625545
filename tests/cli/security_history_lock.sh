#!/usr/bin/env bash
# Issue 31, class 9: the SQLite history database, locked or read-only.
# 1. A database another process holds with an exclusive lock (python3's sqlite3:
#    PRAGMA locking_mode=EXCLUSIVE; BEGIN EXCLUSIVE; a write, kept open until this
#    test says so through a FIFO): history list, history show and matrix exit 3 with
#    "history database ... is locked by another process (pid N, python3)" after
#    GPUVET_DB_TIMEOUT=1 second, not "No such file or directory" and not after hours
#    of retries; once the lock is gone the same list works.
# 2. A database file 0444 in a 0555 directory, read by a user who cannot write
#    either (root ignores modes: as root the commands run as nobody via setpriv):
#    history list, show, check and matrix read it (the commands that only read open
#    it read-only); history import says it cannot be written.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_cmd python3 "python3 is needed to hold the lock"
gv_workdir T
cd "$T"
D=$GV_SRC/tests/data/diff

"$GPUVET" history import --db h.db "$D/before.json" >/dev/null 2>&1 || fail "import"

# --- 1. locked
mkfifo held release
python3 - h.db held release <<'PY' &
import sqlite3, sys
c = sqlite3.connect(sys.argv[1], isolation_level=None)
c.execute("PRAGMA locking_mode=EXCLUSIVE")
c.execute("BEGIN EXCLUSIVE")
c.execute("INSERT INTO meta VALUES ('held', 'by the test')")
with open(sys.argv[2], "w") as f:
    f.write("held\n")
open(sys.argv[3]).read()  # until the test writes to release
c.execute("ROLLBACK")
PY
holder=$!
read -r _ <held
for cmd in "history list" "history show 1" "matrix"; do
    rc=0
    # shellcheck disable=SC2086
    GPUVET_DB_TIMEOUT=1 timeout 300 "$GPUVET" $cmd --db h.db >locked.out 2>&1 || rc=$?
    [[ $rc == 3 ]] || { echo x >release; fail "$cmd on a locked database: exit $rc: $(cat locked.out)"; }
    grep -q "history database h.db is locked by another process (pid $holder, python3)" locked.out ||
        { echo x >release; fail "$cmd: the message does not say the database is locked by whom: $(cat locked.out)"; }
    ! grep -qi "no such file" locked.out || { echo x >release; fail "$cmd: 'no such file': $(cat locked.out)"; }
done
echo x >release
wait $holder || fail "the lock holder failed"
"$GPUVET" history list --db h.db >list.out 2>&1 || fail "list after the lock is gone: $(cat list.out)"

# --- 2. read-only
R=$(mktemp -d /tmp/gv-ro.XXXXXX)
at_exit 'chmod -R u+w "$R"; rm -rf "$R"'
chmod 755 "$R"
mkdir "$R/db"
cp h.db "$R/db/h.db"
chmod 0444 "$R/db/h.db"
chmod 0555 "$R/db"
as_reader=()
if [[ $(id -u) == 0 ]]; then
    need_cmd setpriv "as root, setpriv is needed to read as nobody"
    as_reader=(setpriv --reuid=nobody --regid=nogroup --clear-groups)
fi
for cmd in "history list" "history show 1" "history check" "matrix"; do
    rc=0
    # shellcheck disable=SC2086
    timeout 300 "${as_reader[@]}" "$GPUVET" $cmd --db "$R/db/h.db" >ro.out 2>&1 || rc=$?
    [[ $rc == 0 ]] || fail "$cmd of a read-only database: exit $rc: $(cat ro.out)"
done
grep -q "gpuvet.snapshot" < <(timeout 300 "${as_reader[@]}" "$GPUVET" history show 1 --db "$R/db/h.db") ||
    fail "show of a read-only database does not show the run"
rc=0
timeout 300 "${as_reader[@]}" "$GPUVET" history import --db "$R/db/h.db" "$D/after.json" >imp.out 2>&1 || rc=$?
[[ $rc == 3 ]] || fail "import into a read-only database: exit $rc: $(cat imp.out)"
grep -q "readonly\|read-only\|can be read but not written" imp.out || fail "import: $(cat imp.out)"
[[ ! -e $R/db/h.db-wal ]] || fail "a reader left a -wal file"
echo "locked: says so and by whom; read-only: read"
