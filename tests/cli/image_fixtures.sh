#!/usr/bin/env bash
# Guards the image fixtures themselves (tests/fixtures/images.sh), with the real tools and
# never with gpuvet: skopeo reads every layout and tarball, rocm:6.4 is rocm:5.7 plus one
# layer whose whiteouts delete the HIP 5.x library, the labels and the secret in Env are
# where the image tests expect them, the whiteout image has its .wh. and opaque entries,
# zstd layers really are zstd, the tampered blob no longer matches its name, and both
# docker tarballs hold a manifest.json of the right shape.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_root "the image fixtures are built as root (umoci unpack keeps the roots' owners)"
for c in umoci skopeo jq tar gzip zstd sha256sum python3; do need_cmd "$c"; done
# the Debian roots: built on a cold cache only as root (debian-rocm.sh), else skip
gv_images all
for n in rocm whiteout rocm-oci.tar rocm-docker.tar rocm-docker25.tar rocm-zstd tampered torch; do
    [[ -e ${img[$n]:-/nonexistent} ]] || fail "images.sh printed no existing path for $n"
done
gv_tmpdir T

manifest() { # LAYOUT TAG : the path of TAG's manifest blob
    local d
    d=$(jq -r --arg t "$2" '.manifests[] | select(.annotations["org.opencontainers.image.ref.name"] == $t)
        | .digest' "$1/index.json")
    [[ $d == sha256:* ]] || fail "$1 has no tag $2"
    echo "$1/blobs/sha256/${d#sha256:}"
}
blob() { echo "$1/blobs/sha256/${2#sha256:}"; } # LAYOUT DIGEST

R=${img[rocm]}
skopeo inspect "oci:$R:5.7" >"$T/57.json" || fail "skopeo inspect oci:$R:5.7"
skopeo inspect --config "oci:$R:6.4" >"$T/64c.json" || fail "skopeo inspect oci:$R:6.4"
[[ $(jq '.Layers | length' "$T/57.json") == 1 ]] || fail "rocm:5.7 does not have 1 layer"
m57=$(manifest "$R" 5.7) m64=$(manifest "$R" 6.4)
[[ $(jq '.layers | length' "$m64") == 2 ]] || fail "rocm:6.4 does not have 2 layers"
[[ $(jq -r '.layers[0].digest' "$m64") == "$(jq -r '.layers[0].digest' "$m57")" ]] ||
    fail "rocm:6.4 is not built on rocm:5.7's layer"
jq -e '.config.Labels["org.opencontainers.image.version"] == "6.4"' "$T/64c.json" >/dev/null ||
    fail "rocm:6.4 label version is not 6.4"
jq -e '.config.Env | index("HF_TOKEN=hf_notreal") and index("HSA_OVERRIDE_GFX_VERSION=10.3.0")' \
    "$T/64c.json" >/dev/null || fail "rocm:6.4 Env lacks HF_TOKEN or HSA_OVERRIDE_GFX_VERSION"
for t in lies 5.7-lies; do
    ml=$(manifest "$R" "$t")
    cl=$(blob "$R" "$(jq -r .config.digest "$ml")")
    jq -e '.config.Labels["org.opencontainers.image.version"] == "5.7"' "$cl" >/dev/null ||
        fail "rocm:$t does not say version 5.7"
    [[ $(jq -c '[.layers[].digest]' "$ml") == "$(jq -c '[.layers[].digest]' "$m64")" ]] ||
        fail "rocm:$t does not carry 6.4's layers"
done

# the upgrade layer: whiteouts for the HIP 5.x library, the 6.x library itself
up=$(blob "$R" "$(jq -r '.layers[1].digest' "$m64")")
tar -tzf "$up" >"$T/up.lst" || fail "tar -tzf of the upgrade layer"
grep -Eq '^usr/lib/x86_64-linux-gnu/\.wh\.libamdhip64\.so\.5' "$T/up.lst" ||
    fail "no .wh. whiteout of libamdhip64.so.5* in the upgrade layer"
grep -q '^usr/lib/x86_64-linux-gnu/libamdhip64\.so\.6\.' "$T/up.lst" || fail "no libamdhip64.so.6 in the upgrade layer"
low=$(blob "$R" "$(jq -r '.layers[0].digest' "$m64")")
tar -tzf "$low" >"$T/low.lst" || fail "tar -tzf of the base layer"
grep -q '^usr/lib/x86_64-linux-gnu/libamdhip64\.so\.5\.7\.' "$T/low.lst" || fail "no HIP 5.7 in the base layer"
grep -q '^var/lib/dpkg/status$' "$T/low.lst" || fail "no dpkg status in the base layer"
! grep -Eq '^usr/lib/.*/lib(rocblas|rocsolver)\.so' "$T/low.lst" || fail "the slim copy carries rocBLAS/rocSOLVER"

# whiteout: a deleted library and an opaque directory in the upper layer
W=${img[whiteout]}
skopeo inspect "oci:$W:whiteout" >/dev/null || fail "skopeo inspect the whiteout image"
mw=$(manifest "$W" whiteout)
[[ $(jq '.layers | length' "$mw") == 2 ]] || fail "the whiteout image does not have 2 layers"
tar -tzf "$(blob "$W" "$(jq -r '.layers[1].digest' "$mw")")" >"$T/wh.lst" || fail "tar of the whiteout layer"
grep -qx 'usr/lib/x86_64-linux-gnu/.wh.libhipblas.so.0.1' "$T/wh.lst" || fail "no whiteout of libhipblas"
grep -qx 'opt/rocm/lib/.wh..wh..opq' "$T/wh.lst" || fail "no opaque marker for /opt/rocm/lib"
tar -tzf "$(blob "$W" "$(jq -r '.layers[0].digest' "$mw")")" | grep -x 'usr/lib/x86_64-linux-gnu/libhipblas.so.0.1' >/dev/null ||
    fail "the whiteout image's base layer lacks the library its upper layer deletes"

# the tarballs
skopeo inspect "oci-archive:${img[rocm-oci.tar]}:6.4" >"$T/oa.json" || fail "skopeo inspect the oci-archive"
[[ $(jq '.Layers | length' "$T/oa.json") == 2 ]] || fail "the oci-archive does not have 2 layers"
skopeo inspect "docker-archive:${img[rocm-docker.tar]}" >/dev/null || fail "skopeo inspect the docker-archive"
for f in rocm-docker.tar rocm-docker25.tar; do
    tar -tf "${img[$f]}" | grep -x manifest.json >/dev/null || fail "$f lists no manifest.json"
    tar -xOf "${img[$f]}" manifest.json >"$T/$f.manifest.json"
    jq -e '(.[0].RepoTags[0] | test("(^|/)rocm:6.4$")) and (.[0].Layers | length) == 2' "$T/$f.manifest.json" >/dev/null ||
        fail "$f manifest.json: not rocm:6.4 with 2 layers"
done
tar -tf "${img[rocm-docker25.tar]}" | grep -x index.json >/dev/null || fail "the Docker 25 tarball has no index.json"
mkdir "$T/d25" && tar -C "$T/d25" -xf "${img[rocm-docker25.tar]}"
jq -r '.[0].Config, .[0].Layers[]' "$T/d25/manifest.json" | while read -r p; do
    [[ $p == blobs/sha256/* && -f $T/d25/$p ]] || fail "Docker 25 manifest.json names a missing blob: $p"
done
skopeo inspect "oci:$T/d25:6.4" >/dev/null || fail "skopeo inspect the Docker 25 layout"

# zstd layers
Z=${img[rocm-zstd]}
mz=$(manifest "$Z" 6.4)
[[ $(jq -r '[.layers[].mediaType] | unique | join(",")' "$mz") == application/vnd.oci.image.layer.v1.tar+zstd ]] ||
    fail "rocm-zstd's layers are not all tar+zstd"
zstd -dc <"$(blob "$Z" "$(jq -r '.layers[1].digest' "$mz")")" | tar -tf - | grep '\.wh\.libamdhip64' >/dev/null ||
    fail "the zstd upgrade layer does not decompress to the whiteouts"

# tampered: same size, and the sha256 no longer the blob's name
X=${img[tampered]}
mx=$(manifest "$X" 6.4)
d=$(jq -r '.layers[1].digest' "$mx")
b=$(blob "$X" "$d")
[[ $(stat -c %s "$b") == "$(jq -r '.layers[1].size' "$mx")" ]] || fail "the tampered blob changed size"
[[ sha256:$(sha256sum <"$b" | cut -d' ' -f1) != "$d" ]] || fail "the tampered blob still matches its digest"
[[ sha256:$(sha256sum <"$(blob "$R" "$d")" | cut -d' ' -f1) == "$d" ]] || fail "rocm's own blob was changed too"

# torch: python and the torch package, torch in one layer of its own
P=${img[torch]}
skopeo inspect "oci:$P:2.6" >/dev/null || fail "skopeo inspect the torch image"
mp=$(manifest "$P" 2.6)
[[ $(jq '.layers | length' "$mp") == 2 ]] || fail "the torch image does not have 2 layers"
tar -tzf "$(blob "$P" "$(jq -r '.layers[1].digest' "$mp")")" >"$T/torch.lst"
grep -qx 'usr/lib/python3/dist-packages/torch/version.py' "$T/torch.lst" || fail "no torch/version.py in the torch layer"
grep -q '^usr/lib/x86_64-linux-gnu/libc10\.so' "$T/torch.lst" || fail "no libc10 in the torch layer"
tar -tzf "$(blob "$P" "$(jq -r '.layers[0].digest' "$mp")")" | grep -x 'usr/bin/python3.13' >/dev/null ||
    fail "no python3.13 in the torch image's base layer"

# a warm call is quiet: the lines on stdout, nothing on stderr
"$GV_SRC/tests/fixtures/images.sh" all >"$T/warm.out" 2>"$T/warm.err" || fail "warm images.sh failed"
[[ ! -s $T/warm.err ]] || fail "a cache hit wrote to stderr: $(cat "$T/warm.err")"
[[ $(wc -l <"$T/warm.out") == 8 ]] || fail "a cache hit did not print 8 lines"
echo "image_fixtures: ok ($(du -sh "$(dirname "$R")" | cut -f1) of images)"
