#!/usr/bin/env bash
# The Debian package (`make deb`, cmake/Package.cmake) installed and purged with the real
# dpkg in a clean Debian root: the trixie-rocm fixture (tests/fixtures/debian-rocm.sh)
# seen through a private overlay mount, so the cached root is never written and nothing
# is copied. The package is made here by `cpack -G DEB` from the Release build that
# `make test` builds first ($GV_RELEASE_BUILD, default $GV_SRC/build).
#
#   - the control file: version = project(VERSION) of CMakeLists.txt; Depends names the
#     package of every library the binary links (read from its DT_NEEDED here) and no
#     vendor GPU library (CUDA, HIP/ROCm, NCCL/RCCL, MPI, libpq, PyTorch: opened at run time)
#   - dependencies the root lacks are installed first from .debs found offline, in order:
#     the root's own apt cache, the fixtures' pool, this machine's apt cache; only when
#     none has one, `apt-get download` inside the root from its own mirror
#   - chroot dpkg -i; `gpuvet --version` and `gpuvet snapshot` run inside the root (it
#     must find the root's own HIP 5.7 runtime, which is not a dependency); the binary,
#     the man page and the bash completion are where dpkg -L says
#   - dpkg --purge: every file of the package gone, dpkg forgets it, and the root's file
#     list is the same as before the install (dpkg's own logs and backups aside)
set -uo pipefail
. "$(dirname "$0")/lib.sh"
need_root "dpkg -i into a root, chroot and overlay mounts need root"
need_cmd cpack "cpack (cmake) is not installed"
need_cmd dpkg-deb "dpkg-deb is not installed"
need_cmd dpkg-shlibdeps "dpkg-shlibdeps (dpkg-dev) is not installed"
need_cmd readelf "readelf (binutils) is not installed"
need_cmd unshare "unshare is needed for a private mount namespace"

# everything below runs in a private mount namespace: the overlay and /proc go away
# with the test, however it ends
if [[ -z ${GV_INSTALL_DEB_NS:-} ]]; then
    GV_INSTALL_DEB_NS=1 exec unshare --mount --propagation private bash "$0" "$@"
fi

REL=${GV_RELEASE_BUILD:-$GV_SRC/build}
[[ -f $REL/CPackConfig.cmake && -x $REL/gpuvet ]] ||
    skip "no Release build with CPack in $REL (make build, which make test runs first)"
base=$("$GV_SRC/tests/fixtures/debian-rocm.sh" trixie-rocm 2>/dev/null) && [[ -d $base/var/lib/dpkg ]] ||
    skip "the trixie-rocm fixture root cannot be built here (tests/fixtures/debian-rocm.sh)"
gv_tmpdir T install_deb

# --- the package, and its control file -------------------------------------------
cpack --config "$REL/CPackConfig.cmake" -G DEB -B "$T/pkg" >"$T/cpack.log" 2>&1 ||
    { tail -20 "$T/cpack.log" >&2; fail "cpack -G DEB failed"; }
debs=("$T"/pkg/gpuvet_*.deb)
deb=${debs[0]}
[[ -f $deb ]] || fail "cpack wrote no gpuvet_*.deb (log: $T/cpack.log)"
field() { dpkg-deb -f "$deb" "$1"; }

want_version=$(sed -n 's/^project(gpuvet VERSION \([0-9.]*\).*/\1/p' "$GV_SRC/CMakeLists.txt")
[[ -n $want_version ]] || fail "no project(gpuvet VERSION ...) in CMakeLists.txt"
[[ $(field Package) == gpuvet ]] || fail "Package is '$(field Package)'"
[[ $(field Version) == "$want_version" ]] || fail "Version is '$(field Version)', CMakeLists.txt says $want_version"
[[ $deb == */gpuvet_${want_version}_$(dpkg --print-architecture).deb ]] || fail "file name $(basename "$deb")"
depends=$(field Depends)
[[ -n $depends ]] || fail "the package declares no Depends"
vendor='cuda|cudart|cublas|nvrtc|nvidia|amdhip|hip|rocm|rocblas|hsa|miopen|nccl|rccl|mpi|libpq|torch|python'
for f in Depends Pre-Depends Recommends; do
    if field "$f" | tr ',|' '\n\n' | grep -Eiq "$vendor"; then
        fail "$f names a vendor or run-time-loaded library: $(field "$f")"
    fi
done

# every library the packaged binary links must come from a declared dependency: the
# package that owns it on this machine (dpkg -S), or one of that package's dependencies
# when Depends names a metapackage (libopenblas0 for libopenblas0-pthread)
mkdir -p "$T/x" && dpkg-deb -x "$deb" "$T/x" || fail "dpkg-deb -x"
names() { tr ',|' '\n\n' | sed 's/(.*//; s/ //g; s/:.*//' | grep .; } # package names in a Depends field
mapfile -t dep_names < <(names <<<"$depends")
# shellcheck disable=SC2016 # dpkg-query's own ${field} syntax
dep_closure=" ${dep_names[*]} $(dpkg-query -W -f='${Depends} ${Pre-Depends}\n' "${dep_names[@]}" 2>/dev/null |
    names | tr '\n' ' ') "
needed=$(readelf -d "$T/x/usr/bin/gpuvet" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
[[ -n $needed ]] || fail "readelf finds no NEEDED entry in the packaged binary"
for soname in $needed; do
    path=$(ldconfig -p | awk -v s="$soname" '$1 == s && /x86-64/ {print $NF; exit}')
    [[ -n $path ]] || fail "$soname (needed by the binary) is not in this machine's ld.so.cache"
    echo "$soname $path $(readlink -f "$path")"
done >"$T/needed"
mapfile -t paths < <(cut -d' ' -f2,3 "$T/needed" | tr ' ' '\n')
dpkg -S "${paths[@]}" 2>/dev/null >"$T/owners"
while read -r soname path real; do
    owner=$(grep -F -e ": $real" -e ": $path" "$T/owners" | awk -F': ' '{print $1}' | cut -d: -f1 | head -1)
    [[ -n $owner ]] || fail "no package owns $path ($soname)"
    [[ $dep_closure == *" $owner "* ]] || fail "$soname comes from $owner, which Depends ($depends) does not name"
done <"$T/needed"

# --- a clean root: the cached fixture under a private overlay ------------------------
# (the writable layer on a tmpfs: an overlay's upper directory cannot be on overlayfs,
# which a container's own root often is)
R=$T/root
mkdir -p "$T/rw" "$R" && mount -t tmpfs -o size=2g tmpfs "$T/rw" || fail "cannot mount a tmpfs"
at_exit "umount -l $(printf %q "$T/rw")"
mkdir -p "$T/rw/upper" "$T/rw/work"
mount -t overlay overlay -o "lowerdir=$base,upperdir=$T/rw/upper,workdir=$T/rw/work" "$R" ||
    skip "this kernel or container cannot mount overlayfs"
at_exit "umount -l $(printf %q "$R/proc") 2>/dev/null; umount -l $(printf %q "$R")"
mount -t proc proc "$R/proc" || fail "cannot mount /proc in the root"
in_root() { env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 \
    DEBIAN_FRONTEND=noninteractive chroot "$R" "$@"; }
# what the root has installed: package names and what they provide, one a line
# shellcheck disable=SC2016 # dpkg-query's own ${field} syntax
in_root dpkg-query -W -f='${db:Status-Status} ${Package} ${Provides}\n' 2>/dev/null |
    awk '$1 == "installed" { for (i = 2; i <= NF; i++) { p = $i; sub(/,$/, "", p); if (p !~ /^\(/) print p } }' \
    >"$T/installed" || fail "dpkg-query does not run in the root"
[[ -s $T/installed ]] || fail "dpkg in the root lists no installed package"
installed() { grep -qxF "$1" "$T/installed"; } # NAME
pool=$("$GV_SRC/tests/fixtures/debian-rocm.sh" pool 2>/dev/null) || pool=
find_deb() { # NAME : a .deb of NAME, the root's apt candidate first, offline first
    local name=$1 cand dir f
    cand=$(in_root apt-cache policy "$name" 2>/dev/null | awk '/Candidate:/ {print $2}')
    cand=${cand//:/%3a}
    for dir in "$R/var/cache/apt/archives" "$pool" /var/cache/apt/archives; do
        [[ -n $dir && -n $cand && $cand != "(none)" ]] || continue
        for f in "$dir/${name}_${cand}"_{amd64,all}.deb; do [[ -f $f ]] && { echo "$f"; return 0; }; done
    done
    for dir in "$R/var/cache/apt/archives" "$pool" /var/cache/apt/archives; do
        [[ -n $dir ]] || continue
        for f in "$dir/${name}"_*_{amd64,all}.deb; do [[ -f $f ]] && { echo "$f"; return 0; }; done
    done
    mkdir -p "$R/tmp/dl" && cp -L /etc/resolv.conf "$R/etc/resolv.conf" 2>/dev/null
    # shellcheck disable=SC2016 # expanded by the inner sh
    if (cd "$R/tmp/dl" && in_root sh -c 'cd /tmp/dl && apt-get -q download "$1"' _ "$name" >>"$T/download.log" 2>&1); then
        for f in "$R/tmp/dl/${name}"_*.deb; do [[ -f $f ]] && { echo "downloaded: $name" >&2; echo "$f"; return 0; }; done
    fi
    return 1
}
need=() seen=" "
add_deps() { # DEPENDS-FIELD : the .debs of what the root lacks, with their own dependencies
    local group alt name f found
    while read -r group; do
        [[ -n $group ]] || continue
        found=0
        for alt in ${group//|/ }; do
            name=${alt%%[(:]*}
            [[ $name == *[a-z0-9] ]] || continue
            if installed "$name" || [[ $seen == *" $name "* ]]; then found=1; break; fi
        done
        [[ $found == 1 ]] && continue
        for alt in ${group//|/ }; do
            name=${alt%%[(:]*}
            [[ $name == *[a-z0-9] ]] || continue
            if f=$(find_deb "$name"); then
                seen+="$name " need+=("$f") found=1
                echo "dependency the root lacks: $name <- $f"
                add_deps "$(dpkg-deb -f "$f" Depends Pre-Depends | sed 's/^[A-Za-z-]*: //' | tr '\n' ',')"
                break
            fi
        done
        [[ $found == 1 ]] || skip "no .deb of '$group' offline (root, fixture pool, /var/cache/apt/archives) nor from the mirror"
    done < <(tr ',' '\n' <<<"$1" | sed 's/([^)]*)//g; s/^ *//; s/ *$//; s/ //g')
}
add_deps "$depends"
if [[ ${#need[@]} -gt 0 ]]; then
    mkdir -p "$R/tmp/deps" && cp "${need[@]}" "$R/tmp/deps/" || fail "cannot copy the dependencies into the root"
    in_root sh -c 'dpkg -i /tmp/deps/*.deb' >"$T/deps.log" 2>&1 ||
        { tail -20 "$T/deps.log" >&2; fail "dpkg -i of the dependencies failed"; }
    rm -rf "$R/tmp/deps" "$R/tmp/dl"
fi

tree() { # the root's files, less what is not the package's business
    (cd "$R" && find . -xdev \( -path ./proc -o -path ./tmp -o -path ./root -o -path ./run \
        -o -path ./var/log -o -path ./var/cache/debconf -o -path ./var/lib/dpkg/status-old \
        -o -path ./var/lib/dpkg/diversions-old -o -path ./var/lib/dpkg/lock \
        -o -path ./var/lib/dpkg/triggers/Lock -o -path './var/lib/dpkg/*-old' \) -prune -o -print) | sort
}
tree >"$T/before"

# --- install, run, purge ---------------------------------------------------------------
cp "$deb" "$R/tmp/gpuvet.deb" || fail "cannot copy the package into the root"
expect_rc 0 in_root dpkg -i /tmp/gpuvet.deb
rm -f "$R/tmp/gpuvet.deb"
# shellcheck disable=SC2016 # dpkg-query's own ${field} syntax
st=$(in_root dpkg-query -W -f='${db:Status-Abbrev}${Version}' gpuvet 2>/dev/null)
[[ $st == "ii $want_version" ]] || fail "dpkg says gpuvet is '$st' after dpkg -i"
in_root dpkg -L gpuvet >"$T/files" || fail "dpkg -L gpuvet"
for f in /usr/bin/gpuvet /usr/share/man/man1/gpuvet.1 /usr/share/bash-completion/completions/gpuvet; do
    grep -qx "$f" "$T/files" || fail "dpkg -L gpuvet does not list $f"
    [[ -f $R$f ]] || fail "$f is not in the root after dpkg -i"
done
[[ -x $R/usr/bin/gpuvet ]] || fail "/usr/bin/gpuvet is not executable"
grep -q '^\.TH GPUVET' "$R/usr/share/man/man1/gpuvet.1" || fail "the man page is not docs/gpuvet.1"
cmp -s "$R/usr/share/bash-completion/completions/gpuvet" "$GV_SRC/contrib/gpuvet.bash-completion" ||
    fail "the completion file is not contrib/gpuvet.bash-completion"

expect_rc 0 in_root gpuvet --version
grep -q "$want_version" "$GV_OUT" || fail "gpuvet --version inside the root printed '$(cat "$GV_OUT")'"
expect_rc 0 in_root gpuvet snapshot -o /tmp/snap.json
S=$R/tmp/snap.json
[[ -s $S ]] || fail "gpuvet snapshot wrote no /tmp/snap.json in the root"
python3 - "$S" <<'EOF' || fail "the snapshot taken inside the root does not show the root"
import json, sys
d = json.load(open(sys.argv[1]))
text = json.dumps(d)
assert "trixie" in text, "not the trixie root's os-release"
assert "libamdhip64.so.5" in text, "the root's HIP 5.7 runtime is missing"
EOF

expect_rc 0 in_root dpkg --purge gpuvet
while read -r f; do
    [[ $f == /usr/bin/gpuvet || $f == /usr/share/man/man1/* || $f == */completions/gpuvet ]] || continue
    [[ ! -e $R$f ]] || fail "$f is left after dpkg --purge"
done <"$T/files"
in_root dpkg-query -W gpuvet >/dev/null 2>&1 && fail "dpkg still knows gpuvet after --purge"
ls "$R"/var/lib/dpkg/info/gpuvet.* >/dev/null 2>&1 && fail "dpkg info files of gpuvet are left"
tree >"$T/after"
if ! diff "$T/before" "$T/after" >"$T/tree.diff"; then
    head -20 "$T/tree.diff" >&2
    fail "the root's files differ from before the install"
fi
echo "install_deb: ok ($(basename "$deb"), Depends: $depends; ${#need[@]} dependency package(s) installed first)"
