#!/usr/bin/env bash
# gpuvet fleet run under a PMIx launcher alone (issue 34, docs/fleet.md "Launchers"):
#   - a real Open MPI mpirun (4.1, its PMIx server) starts 4 ranks through a wrapper
#     that removes every OMPI_* and SLURM_* variable, keeping PMIX_*: gpuvet sees the
#     PMIx launcher only and asks the runtime (libpmix.so.2, opened at run time) for
#     the job size; rank 2 exits before running gpuvet, and fleet compare names it
#     missing, which it can only do from the size PMIx gave;
#   - no server (PMIX_RANK set by hand), no namespace, no library: size 0, a note;
#   - a stand-in libpmix built here ($GPUVET_LIBPMIX) answers hostile values: a size
#     of the wrong type, a huge size, a size the rank contradicts, another rank, a
#     host name with odd bytes; it logs the calls (Init and Finalize once each, the
#     size asked of the wildcard rank) and shows that under Open MPI's variables
#     PMIx is not called at all.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_cmd mpirun "Open MPI is not installed (scripts/install-deps.sh --test: openmpi-bin)"
need_cmd python3
need_cmd cc "no C compiler for the stand-in PMIx library"
gv_tmpdir T
export XDG_CACHE_HOME=$T/cache
unset GPUVET_TEST_FLIP GPUVET_FLEET_GATHER GPUVET_FLEET_BUDGET GPUVET_FLEET_NODE \
      GPUVET_LIBPMIX SLURM_PROCID OMPI_COMM_WORLD_RANK OMPI_COMM_WORLD_SIZE PMIX_RANK \
      PMIX_NAMESPACE LD_LIBRARY_PATH
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export GPUVET_FLEET_BUDGET=3600 # no tier budget may stop a rank on a loaded machine
ONLY=(--tier prolog --device cpu --only 'gemm.f32.256*')

# ---- no PMIx server, no namespace, no library: size 0 and why, exit as before ----
# (the first run also caches the library digests and fp64 references for the ranks)
nopmix() { # NAME WANT...: a run by hand as rank 1; its document's size and note
    local name=$1
    shift
    expect_rc 0 env PMIX_RANK=1 GPUVET_FLEET_NODE="$name" "$@" "$GPUVET" fleet run \
        --dir "$T/hand" "${ONLY[@]}"
    note=$(json_get "$T/hand/nodes/$name.r1.json" "d['launcher'], d['size'], d['node_note']")
    [[ $note == "pmix 0 "* ]] || fail "$name: launcher, size and note: $note"
    note=${note#pmix 0 }
    grep -qF "gpuvet fleet: $note" "$GV_ERR" || fail "$name: the note is not on stderr"
}
nopmix noserver PMIX_NAMESPACE=byhand
[[ $note == *"PMIx_Init failed"*"PMIX_ERR_UNREACH"* ]] || fail "no server: note '$note'"
nopmix nonspace
[[ $note == *"PMIX_NAMESPACE is not set"* ]] || fail "no namespace: note '$note'"
nopmix nolib PMIX_NAMESPACE=byhand GPUVET_LIBPMIX="$T/no-such-libpmix.so"
[[ $note == *"cannot load $T/no-such-libpmix.so"* ]] || fail "no library: note '$note'"

# ---- a real PMIx server: Open MPI's mpirun, its variables removed ----
cat >"$T/rank.sh" <<'EOF'
#!/usr/bin/env bash
# The PMIx launcher alone: no OMPI_* (nor SLURM_*) variable reaches gpuvet.
for v in $(compgen -e); do
    case $v in OMPI_* | SLURM_*) unset "$v" ;; esac
done
env >"$OUT/env.$PMIX_RANK"
[[ $PMIX_RANK == "${SKIP_RANK:-x}" ]] && exit 0 # gone before it could write
GPUVET_FLEET_NODE=n$PMIX_RANK exec "$GPUVET" fleet run "$@"
EOF
chmod +x "$T/rank.sh"
rc=0
OUT=$T SKIP_RANK=2 timeout 300 mpirun --oversubscribe --allow-run-as-root -x OUT -x SKIP_RANK \
    -np 4 "$T/rank.sh" --dir "$T/d" "${ONLY[@]}" >"$T/mpirun.log" 2>&1 || rc=$?
[[ $rc != 124 ]] || fail "mpirun did not end within 300 s (a guard, not a timing test)"
[[ $rc == 0 ]] || fail "mpirun exited $rc: $(tail -20 "$T/mpirun.log")"
for r in 0 1 2 3; do
    [[ -s $T/env.$r ]] || fail "rank $r did not start"
    ! grep -qE '^(OMPI|SLURM)_' "$T/env.$r" || fail "rank $r still sees Open MPI's variables"
    grep -q '^PMIX_NAMESPACE=.' "$T/env.$r" || fail "rank $r has no PMIX_NAMESPACE"
done
ns=$(sed -n 's/^PMIX_NAMESPACE=//p' "$T/env.0")
nodes=$(cd "$T/d/nodes" && echo *)
[[ $nodes == "n0.r0.json n1.r1.json n3.r3.json" ]] || fail "node documents: $nodes"
for r in 0 1 3; do
    f=$T/d/nodes/n$r.r$r.json
    expect_json "$f" "(d['launcher'], d['rank'], d['size'], d['node'], d['job'] == '$ns', \
        d['status'], 'node_note' in d)" "('pmix', $r, 4, 'n$r', True, 'ran', False)"
done
expect_rc 1 "$GPUVET" fleet compare "$T/d" --json
expect_json "$GV_OUT" "(d['missing'], d['ranks_expected'])" "([2], 4)"

# ---- a stand-in PMIx answering hostile values ----
cat >"$T/fakepmix.c" <<'EOF'
/* PMIx_Init/Get/Finalize/Value_destruct with the layouts of pmix_common.h,
 * answering what FAKE_* say, every call logged to $FAKE_LOG. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
struct proc { char nspace[256]; uint32_t rank; };
struct value { uint16_t type; union { char *string; uint32_t u32; uint64_t u64; } data; };
static char *host;
static const char *env(const char *name, const char *dflt)
{
    const char *s = getenv(name);
    return s ? s : dflt;
}
static void logf_(const char *what, const char *key, uint32_t rank)
{
    FILE *f = fopen(env("FAKE_LOG", "/dev/null"), "a");
    if (f) {
        fprintf(f, "%s %s %u\n", what, key, rank);
        fclose(f);
    }
}
int PMIx_Init(struct proc *p, void *info, size_t n)
{
    (void)info, (void)n;
    logf_("init", "-", 0);
    memset(p, 0, sizeof *p);
    strncpy(p->nspace, env("FAKE_NSPACE", env("PMIX_NAMESPACE", "")), 255);
    p->rank = (uint32_t)strtoul(env("FAKE_RANK", env("PMIX_RANK", "0")), NULL, 10);
    return atoi(env("FAKE_INIT", "0"));
}
int PMIx_Get(const struct proc *p, const char *key, const void *info, size_t n,
             struct value **out)
{
    (void)info, (void)n;
    logf_("get", key, p->rank);
    struct value *v = calloc(1, sizeof *v);
    if (!strcmp(key, "pmix.job.size") && p->rank == UINT32_MAX - 1) {
        v->type = (uint16_t)atoi(env("FAKE_SIZE_TYPE", "14"));
        v->data.u64 = strtoull(env("FAKE_SIZE", "4"), NULL, 10);
    } else if (!strcmp(key, "pmix.hname") && getenv("FAKE_HOST")) {
        v->type = 3;
        v->data.string = host = strdup(getenv("FAKE_HOST"));
    } else {
        free(v);
        return -46; /* PMIX_ERR_NOT_FOUND */
    }
    *out = v;
    return 0;
}
void PMIx_Value_destruct(struct value *v)
{
    if (v->type == 3 && v->data.string == host) /* a size of type 3 is no string */
        free(host);
    v->type = 0;
}
int PMIx_Finalize(const void *info, size_t n)
{
    (void)info, (void)n;
    logf_("finalize", "-", 0);
    return 0;
}
EOF
cc -shared -fPIC -o "$T/libfakepmix.so" "$T/fakepmix.c" || fail "cannot build the stand-in PMIx"
fake() { # WANT VAR=VALUE...: fleet run as rank 1 of namespace fake under the stand-in
    local want=$1
    shift
    rm -f "$T/fake.log"
    expect_rc "$want" env PMIX_RANK=1 PMIX_NAMESPACE=fake GPUVET_LIBPMIX="$T/libfakepmix.so" \
        FAKE_LOG="$T/fake.log" "$@" "$GPUVET" fleet run --dir "$T/fake" "${ONLY[@]}"
}
fakedoc() { # NODE EXPR VALUE
    expect_json "$T/fake/nodes/$1.r1.json" "$2" "$3"
}
# the plain answer: size 4 asked of the wildcard rank, the host name of the rank itself
# when no variable names the node; Init and Finalize once
fake 0 FAKE_HOST=pmixhost
fakedoc pmixhost "(d['node'], d['size'], 'node_note' in d)" "('pmixhost', 4, False)"
[[ $(cat "$T/fake.log") == $'init - 0\nget pmix.job.size 4294967294\nget pmix.hname 1\nfinalize - 0' ]] ||
    fail "calls to PMIx: $(cat "$T/fake.log")"
# the size of another type: unknown, and why; GPUVET_FLEET_NODE names the node: no host asked
fake 0 GPUVET_FLEET_NODE=strsize FAKE_SIZE_TYPE=3 FAKE_HOST=pmixhost
fakedoc strsize "(d['size'], 'PMIX_STRING' in d['node_note'] and 'pmix.job.size' in d['node_note'])" \
    "(0, True)"
[[ $(cat "$T/fake.log") == $'init - 0\nget pmix.job.size 4294967294\nfinalize - 0' ]] ||
    fail "calls to PMIx with GPUVET_FLEET_NODE: $(cat "$T/fake.log")"
# a huge size, a size the rank is not below, another rank: errors naming PMIx
fake 3 GPUVET_FLEET_NODE=huge FAKE_SIZE=4294967295
grep -q 'PMIx gives the job size 4294967295' "$GV_ERR" || fail "huge size: $(cat "$GV_ERR")"
fake 3 GPUVET_FLEET_NODE=small FAKE_SIZE=1
grep -q 'PMIx gives the job size 1.*rank 1' "$GV_ERR" || fail "size 1: $(cat "$GV_ERR")"
fake 3 GPUVET_FLEET_NODE=other FAKE_RANK=7
grep -q 'PMIx_Init says rank 7' "$GV_ERR" || fail "another rank: $(cat "$GV_ERR")"
[[ ! -e $T/fake/nodes/huge.r1.json && ! -e $T/fake/nodes/small.r1.json ]] ||
    fail "a contradicted rank wrote its document"
# Init fails: a note with the status
fake 0 GPUVET_FLEET_NODE=initfail FAKE_INIT=-31
fakedoc initfail "('PMIX_ERR_INIT (-31)' in d['node_note'], d['size'])" "(True, 0)"
grep -qx 'finalize - 0' "$T/fake.log" && fail "PMIx_Finalize called after a failed Init"
# the host name from PMIx when no variable names the node: odd bytes mapped
fake 0 FAKE_HOST=$'rack 7/\x01gpu\xff'
files=("$T"/fake/nodes/rack*)
odd=${files[*]##*/}
[[ $odd =~ ^rack_7__gpu_-[0-9a-f]{8}\.r1\.json$ ]] || fail "host name from PMIx: '$odd'"
fakedoc "${odd%.r1.json}" "'from PMIx' in d['node_note']" True
# Open MPI's variables: PMIx is never called (MPI initialises it itself)
fake 0 OMPI_COMM_WORLD_RANK=1 OMPI_COMM_WORLD_SIZE=2 GPUVET_FLEET_GATHER=dir \
    GPUVET_FLEET_NODE=ompi
fakedoc ompi "(d['launcher'], d['size'])" "('openmpi', 2)"
[[ ! -e $T/fake.log ]] || fail "PMIx called under Open MPI: $(cat "$T/fake.log")"

echo "fleet under PMIx alone: size 4 from a real server, the missing rank named; no server, hostile answers"
