#!/usr/bin/env bash
# The speed and memory of `gpuvet snapshot --image` on a multi-GB image (issue 33):
#
#   (a) decompress every layer to /dev/null (gzip -dc), the floor
#   (b) gpuvet snapshot --image DIR:big -o FILE: wall time and peak RSS (/usr/bin/time -v)
#   (c) unpack, then gpuvet snapshot --root of the result: with `umoci unpack`, and
#       separately with `tar -xzf` of each layer in order
# with GPUVET_HASH_CACHE=0 for every gpuvet run. Targets: b <= 1.2 a, c >= 3 b (for
# both ways of unpacking), peak RSS of (b) < 100 MB.
#
# The image: all of trixie-rocm (tests/fixtures/debian-rocm.sh, about 4.9 GB) as three
# gzip layers made with GNU tar and `umoci raw add-layer`: everything but
# usr/lib/x86_64-linux-gnu; that directory without rocBLAS's kernels and rocSOLVER;
# those two (about 3.3 GB). Cached beside the image fixtures (tests/fixtures/images.sh)
# in ${GV_FIXTURE_CACHE:-~/.cache/gpuvet-fixtures}/images/big (stamp big.stamp, the
# same lock); the first run builds it (minutes). The unpacked copies of (c) are made
# under images/.bench.* and removed.
#
# Usage: tests/bench/image_snapshot.sh [BUILD_DIR]   (default: build; a Release build)
# Exit: 0 every target met; 1 gpuvet failed (its stderr shown) or a target was missed;
# 2 no gpuvet; 77 a tool or the fixture root is missing (skipped).
set -uo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
B=${1:-$src/build}
G=$(cd "$B" 2>/dev/null && pwd)/gpuvet
[[ -x $G ]] || { echo "no gpuvet in $B (build first, or pass the build directory)" >&2; exit 2; }
BASE=${GV_FIXTURE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/gpuvet-fixtures}
CACHE=$BASE/images
BIG=$CACHE/big
RECIPE=1
export GPUVET_HASH_CACHE=0

skip() { echo "skipped: $*"; exit 77; }
die() { echo "image_snapshot: error: $*" >&2; exit 1; }
for c in umoci tar gzip jq /usr/bin/time; do
    command -v "$c" >/dev/null || skip "$c is not installed (scripts/install-deps.sh --test)"
done

build_big() { # the multi-GB image, from the trixie-rocm root (read only)
    local root t lib=./usr/lib/x86_64-linux-gnu t0 solver
    root=$("$src/tests/fixtures/debian-rocm.sh" trixie-rocm) || skip "the trixie-rocm root cannot be built here"
    t0=$(date +%s)
    t=$(mktemp -d "$CACHE/.big.XXXXXX")
    tmpdirs+=("$t")
    mapfile -t solver < <(cd "$root" && printf '%s\n' "$lib"/librocsolver.so*)
    echo "image_snapshot: building the big image from $root (minutes, once)" >&2
    umoci init --layout "$t/big" || die "umoci init failed"
    umoci new --image "$t/big:big" || die "umoci new failed"
    add_layer() { # WHY TAR-ARGS... : tar the root's paths, append them as a gzip layer
        local why=$1; shift
        tar -C "$root" --numeric-owner -cf "$t/layer.tar" "$@" || die "tar $* failed"
        umoci raw add-layer --image "$t/big:big" --history.created_by "$why" "$t/layer.tar" ||
            die "umoci raw add-layer failed"
        rm -f "$t/layer.tar"
    }
    add_layer "debian trixie minbase" --exclude=./tmp --exclude="$lib" .
    add_layer "libraries" --exclude="$lib/rocblas" --exclude="$lib/librocsolver.so*" "$lib"
    add_layer "rocBLAS kernels, rocSOLVER" "$lib/rocblas" "${solver[@]}"
    umoci config --image "$t/big:big" --no-history --config.env HF_TOKEN=hf_notreal \
        --config.label org.opencontainers.image.version=5.7 || die "umoci config failed"
    umoci gc --layout "$t/big" || die "umoci gc failed"
    rm -rf "$BIG" && mv "$t/big" "$BIG" && rmdir "$t"
    echo "recipe=$RECIPE" >"$CACHE/big.stamp"
    echo "image_snapshot: built in $(($(date +%s) - t0)) s, $(du -sh "$BIG" | cut -f1)" >&2
}

tmpdirs=()
trap 'rm -rf "${tmpdirs[@]}"' EXIT
mkdir -p "$CACHE"
exec 9>"$CACHE/.lock"
flock 9
[[ -d $BIG && $(cat "$CACHE/big.stamp" 2>/dev/null) == "recipe=$RECIPE" ]] || build_big
flock -u 9

manifest=$BIG/blobs/sha256/$(jq -r '.manifests[] | select(.annotations["org.opencontainers.image.ref.name"] == "big")
    | .digest | sub("^sha256:"; "")' "$BIG/index.json")
mapfile -t layers < <(jq -r '.layers[].digest | sub("^sha256:"; "")' "$manifest" | sed "s|^|$BIG/blobs/sha256/|")
[[ ${#layers[@]} -ge 2 ]] || die "the big image has ${#layers[@]} layers"
packed=$(du -cb "${layers[@]}" | tail -1 | cut -f1)

now() { date +%s%N; }
ms() { echo $((($2 - $1) / 1000000)); } # T0 T1
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }'; }
tmp=$(mktemp -d "$CACHE/.bench.XXXXXX")
tmpdirs+=("$tmp")

cat "${layers[@]}" >/dev/null # the blobs in the page cache for every measurement
# (a) decompressing alone
t0=$(now)
unpacked=0
for l in "${layers[@]}"; do
    n=$(gzip -dc <"$l" | wc -c) || die "gzip -dc $l failed"
    unpacked=$((unpacked + n))
done
a=$(ms "$t0" "$(now)")
echo "image: ${#layers[@]} gzip layers, $((packed / 1048576)) MiB packed, $((unpacked / 1048576)) MiB of tar"
echo "(a) gzip -dc of every layer: $a ms"

gv_failed=
snapshot() { # LABEL OUT ARGS... : run gpuvet snapshot ARGS, wall ms in $wall, peak RSS KiB in $rss
    local label=$1 out=$2 t0 rc=0; shift 2
    t0=$(now)
    /usr/bin/time -v -o "$tmp/time.$label" "$G" snapshot "$@" -o "$out" >"$tmp/out.$label" 2>"$tmp/err.$label" || rc=$?
    wall=$(ms "$t0" "$(now)")
    rss=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$tmp/time.$label")
    if [[ $rc != 0 || ! -s $out ]]; then
        echo "FAILED: gpuvet snapshot $* exited $rc; its stderr ends:" >&2
        tail -5 "$tmp/err.$label" >&2
        gv_failed+=" $label"
        return 1
    fi
}

# (b) the streamed snapshot
b='' b_rss=0
if snapshot image "$tmp/image.json" --image "$BIG:big"; then
    b=$wall b_rss=$rss
    echo "(b) gpuvet snapshot --image: $b ms, peak RSS $((b_rss / 1024)) MiB"
else
    echo "(b) gpuvet snapshot --image: FAILED"
fi

# (c) unpacking first, two ways (into $tmp/LABEL)
c_way() { # LABEL ROOT UNPACK-CMD... : time UNPACK-CMD, then snapshot --root ROOT; sum in c_LABEL
    local label=$1 root=$2 t0 u; shift 2
    t0=$(now)
    "$@" >/dev/null || die "$label: $* failed"
    u=$(ms "$t0" "$(now)")
    if snapshot "$label" "$tmp/$label.json" --root "$root"; then
        printf -v "c_$label" %s $((u + wall))
        echo "(c) $label: unpack $u ms + snapshot --root $wall ms = $((u + wall)) ms"
    fi
    rm -rf "${tmp:?}/$label"
}
untar_layers() { # DIR : tar -xzf of every layer in order into DIR
    local l
    mkdir "$1" || return 1
    for l in "${layers[@]}"; do tar -C "$1" -xzf "$l" || return 1; done
}
c_umoci='' c_tar=''
c_way umoci "$tmp/umoci/rootfs" umoci unpack --image "$BIG:big" "$tmp/umoci"
c_way tar "$tmp/tar" untar_layers "$tmp/tar"

if [[ -n $gv_failed ]]; then
    echo "image_snapshot: FAILED: gpuvet snapshot failed for:$gv_failed (no ratios)" >&2
    exit 1
fi
missed=
check() { # WHAT OK : print one target's verdict
    if [[ $2 == 1 ]]; then echo "  ok      $1"; else echo "  MISSED  $1"; missed=1; fi
}
echo "targets (issue 33):"
check "b/a = $(ratio "$b" "$a") <= 1.2" "$(awk -v x="$b" -v y="$a" 'BEGIN { print (x <= 1.2 * y) }')"
check "c/b = $(ratio "$c_umoci" "$b") (umoci) >= 3" "$(awk -v x="$c_umoci" -v y="$b" 'BEGIN { print (x >= 3 * y) }')"
check "c/b = $(ratio "$c_tar" "$b") (tar) >= 3" "$(awk -v x="$c_tar" -v y="$b" 'BEGIN { print (x >= 3 * y) }')"
check "peak RSS $((b_rss / 1024)) MiB < 100 MB" "$(awk -v r="$b_rss" 'BEGIN { print (r * 1024 < 100e6) }')"
[[ -z $missed ]] || { echo "image_snapshot: a target was missed" >&2; exit 1; }
