# shellcheck shell=bash
# Sourced (never run) by the shell tests in tests/cli, tests/gpu and tests/bench:
#     . "$(dirname "$0")/lib.sh"            (tests/cli)
#     . "$(dirname "$0")/../cli/lib.sh"     (tests/gpu, tests/bench)
# It is not a test itself: tests/CMakeLists.txt leaves it out of the cli.* glob.
# It sets no shell options (each script keeps its own set -e/-u/pipefail) and runs nothing
# that can fail at load time.
#
# The environment a test gets from CTest (tests/CMakeLists.txt): GPUVET (the binary), GV_SRC,
# GV_BUILD, GV_TEST_TMP. Run by hand, GV_SRC defaults to this checkout, GPUVET to the test
# build's binary when there is one (else gpuvet on PATH), GV_TEST_TMP to $TMPDIR or /tmp.
#
#   fail MSG...            "FAIL: MSG" on stderr, exit 1
#   skip MSG...            "skipped: MSG", exit 77 (CTest's SKIP_RETURN_CODE)
#   need_cmd CMD [WHY]     skip unless CMD is on PATH
#   need_root WHY          skip unless running as root
#   need_browser           fail unless chromium and chromedriver are installed
#   at_exit CMD            run CMD (eval'd) when the script exits, last added first; the exit
#                          status of the script is kept. Use it instead of `trap ... EXIT`,
#                          which would replace the lib's own trap.
#   gv_tmpdir VAR [NAME]   make a fresh directory NAME.XXXXXX under $GV_TEST_TMP, put its path
#                          in VAR, remove it on exit (kept, and named on stderr, when
#                          GV_KEEP_TMP=1)
#   gv_workdir VAR [NAME]  the fixed directory $GV_TEST_TMP/NAME (NAME: the script's name),
#                          emptied now and kept afterwards for a look at what the test wrote
#   expect_rc WANT CMD...  run CMD with stdout in $GV_OUT and stderr in $GV_ERR (last.out and
#                          last.err in the directory of the last gv_tmpdir or gv_workdir, one
#                          of its own when there is none); fail naming the
#                          command and showing its stderr unless the exit status is WANT
#                          (a number, or several separated by commas: 0,1)
#   json_get FILE EXPR     print the Python expression EXPR over d, the JSON document FILE
#   expect_json FILE EXPR VALUE   fail unless json_get FILE EXPR prints VALUE
#   state_of PID           the state letter of /proc/PID/stat (R, S, T, Z ...), "" when gone
#   wait_stopped PID       until PID is stopped (T, 0) or has exited (1); up to 10 minutes,
#                          a limit, not a timing assumption

[[ -n ${GV_LIB_LOADED:-} ]] && return 0
GV_LIB_LOADED=1

: "${GV_SRC:=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}"
if [[ -z ${GPUVET:-} && -x $GV_SRC/build-test/gpuvet ]]; then
    GPUVET=$GV_SRC/build-test/gpuvet
fi
: "${GPUVET:=gpuvet}" "${GV_TEST_TMP:=${TMPDIR:-/tmp}}"
export GPUVET GV_SRC GV_TEST_TMP

fail() { echo "FAIL: $*" >&2; exit 1; }
skip() { echo "skipped: $*"; exit 77; }

need_cmd() { # CMD [WHY]
    command -v "$1" >/dev/null || skip "${2:-$1 is not installed}"
}

need_root() { # WHY
    [[ $(id -u) == 0 ]] || skip "$*"
}

# The report pages are checked in a real browser; `make test` installs it, so
# its absence is a failure, not a skip.
need_browser() {
    local exe
    for exe in chromium chromedriver; do
        command -v $exe >/dev/null ||
            fail "$exe is not installed (make test installs chromium and chromium-driver)"
    done
}

GV_AT_EXIT=()
at_exit() { # CMD
    GV_AT_EXIT=("$1" "${GV_AT_EXIT[@]}")
}
gv_run_at_exit() {
    local rc=$? cmd
    for cmd in "${GV_AT_EXIT[@]}"; do
        eval "$cmd" || true
    done
    exit "$rc"
}
trap gv_run_at_exit EXIT

gv_remove_tmp() { # DIR
    if [[ ${GV_KEEP_TMP:-0} == 1 ]]; then
        echo "kept: $1" >&2
        return 0
    fi
    rm -rf "$1"
}

# (no locals in these two: VAR may name any variable of the caller)
gv_tmpdir() { # VAR [NAME]
    mkdir -p "$GV_TEST_TMP" || fail "cannot make $GV_TEST_TMP"
    GV_TMP=$(mktemp -d "$GV_TEST_TMP/${2:-$(basename "$0" .sh)}.XXXXXX") || fail "mktemp under $GV_TEST_TMP"
    at_exit "gv_remove_tmp $(printf %q "$GV_TMP")"
    printf -v "$1" %s "$GV_TMP"
}

gv_workdir() { # VAR [NAME]
    GV_TMP=$GV_TEST_TMP/${2:-$(basename "$0" .sh)}
    rm -rf "$GV_TMP" && mkdir -p "$GV_TMP" || fail "cannot make $GV_TMP"
    printf -v "$1" %s "$GV_TMP"
}

expect_rc() { # WANT CMD...
    local want=$1 rc=0
    shift
    [[ -n ${GV_TMP:-} ]] || gv_tmpdir GV_TMP
    GV_OUT=$GV_TMP/last.out GV_ERR=$GV_TMP/last.err
    "$@" >"$GV_OUT" 2>"$GV_ERR" || rc=$?
    [[ ,$want, == *,$rc,* ]] && return 0
    echo "FAIL: $* exited $rc, not $want; its stderr ends:" >&2
    tail -20 "$GV_ERR" >&2
    exit 1
}

json_get() { # FILE EXPR
    python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1"
}

expect_json() { # FILE EXPR VALUE
    local got
    got=$(json_get "$1" "$2") || fail "cannot evaluate $2"
    [[ $got == "$3" ]] || fail "$2: expected '$3', got '$got'"
}

state_of() { # PID
    local s
    s=$(cat "/proc/$1/stat" 2>/dev/null) || return 0
    s=${s##*) }
    echo "${s%% *}"
}

wait_stopped() { # PID
    local i st
    for ((i = 0; i < 6000; i++)); do
        st=$(state_of "$1")
        [ "$st" = T ] && return 0
        [ -z "$st" ] || [ "$st" = Z ] && return 1
        sleep 0.1
    done
    return 1
}

# Loads image fixtures (tests/fixtures/images.sh NAME..., or all) into the global array img
# (name -> path). Skips when the Debian roots they are made from cannot be built here; fails
# when images.sh fails or names no existing path.
gv_images() {
    if ! "$GV_SRC/tests/fixtures/debian-rocm.sh" all >/dev/null 2>&1 ||
        ! "$GV_SRC/tests/fixtures/debian-rocm.sh" trixie-torch >/dev/null 2>&1; then
        skip "the Debian root fixtures cannot be built here (tests/fixtures/debian-rocm.sh)"
    fi
    declare -gA img
    local n name path out
    for n in "$@"; do
        out=$("$GV_SRC/tests/fixtures/images.sh" "$n") || fail "images.sh $n failed"
        while IFS=$'\t' read -r name path; do
            [[ -e $path ]] || fail "images.sh printed no existing path for $name"
            img[$name]=$path
        done <<<"$out"
    done
}
