#!/usr/bin/env bash
# `plan rollback --to last-good` writes the last good run's snapshot beside the history
# database it read it from (a "baselines" directory next to $GPUVET_DB's file), not under the
# default data directory; with no GPUVET_DB, under $XDG_DATA_HOME/gpuvet/baselines as before,
# and there too when the database's directory takes no "baselines" directory (here a file of
# that name: permissions would not stop root).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
gv_tmpdir T rollback_db_dir
export XDG_CACHE_HOME="$T/cache" XDG_DATA_HOME="$T/data" HOME="$T/home"
unset GPUVET_RECORD
expect_rc 0 "$GPUVET" check --device cpu --only 'sum.f32.*' -o "$T/good.json"
json_get "$T/good.json" 'json.dumps(d["snapshot"])' >"$T/current.json" # this machine, as it is

last_good() { # DIR: record good.json, plan back to it; fail unless the baseline is in DIR
    expect_rc 0 "$GPUVET" history import "$T/good.json"
    expect_rc 0,1 "$GPUVET" plan rollback --to last-good --from "$T/current.json" --no-check \
        --format json
    local base
    base=$(sed -n 's/.*snapshot written to //p' "$GV_ERR")
    [[ $base == "$1"/run-1.snapshot.json ]] ||
        fail "the baseline went to '$base', not under $1: $(cat "$GV_ERR")"
    [[ -f $base ]] || fail "no baseline at $base"
}

GPUVET_DB="$T/elsewhere/h.db" last_good "$T/elsewhere/baselines"
[[ ! -e $T/data/gpuvet && ! -e $T/home/.local ]] ||
    fail "wrote under the default data directory: $(find "$T/data" "$T/home" -type f)"
(unset GPUVET_DB; last_good "$T/data/gpuvet/baselines")
rm -r "$T/data/gpuvet/baselines"
mkdir -p "$T/shared" && touch "$T/shared/baselines"
GPUVET_DB="$T/shared/h.db" last_good "$T/data/gpuvet/baselines"
echo "ok: the last good baseline goes beside its database"
