#!/usr/bin/env bash
# snapshot --image end to end, on the image fixtures (tests/fixtures/images.sh, real umoci and
# skopeo images made from the Debian ROCm roots):
# - every form (OCI layout, oci-archive, legacy docker-archive, Docker 25+ archive, zstd layers)
#   gives the same stack as `umoci unpack` of the image followed by `snapshot --root`: every
#   section but the image's own and the environment (an image's variables are its config's Env);
# - the image section's digests equal what skopeo and sha256sum say; the Env's secret never
#   reaches the document; each library and package names the layer whose tar really holds it;
# - whiteouts: what an upper layer deletes is gone, as in umoci's unpacking;
# - a tampered layer, a truncated archive, an unknown reference fail with a message naming the
#   culprit, write no output file and leave nothing in the cache.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_root "the image fixtures are built as root (umoci unpack keeps the roots' owners)"
for c in umoci skopeo jq tar gzip zstd sha256sum; do need_cmd "$c"; done
gv_images all
gv_tmpdir T
export XDG_CACHE_HOME=$T/cache GPUVET_HASH_CACHE=0
R=${img[rocm]}

# what must match between an image's snapshot and a root's
stack() { jq -S 'del(.created, .root, .image, .environment) |
    walk(if type == "object" then del(.layer) else . end)' "$1"; }
unpacked() { # REF NAME : snapshot --root of umoci's unpacking of REF
    umoci unpack --rootless --image "$1" "$T/$2.bundle" >/dev/null 2>&1 || fail "umoci unpack $1"
    expect_rc 0 "$GPUVET" snapshot --root "$T/$2.bundle/rootfs" -o "$T/$2.root.json"
}
same_stack() { # IMAGE.json ROOT.json WHAT
    diff <(stack "$1") <(stack "$2") >"$T/stack.diff" ||
        fail "$3: the image's snapshot differs from umoci's unpacking: $(head -20 "$T/stack.diff")"
}

for tag in 5.7 6.4; do
    expect_rc 0 "$GPUVET" snapshot --image "$R:$tag" -o "$T/i$tag.json"
    unpacked "$R:$tag" "u$tag"
    same_stack "$T/i$tag.json" "$T/u$tag.root.json" "rocm:$tag"
done
expect_json "$T/i6.4.json" "d['libraries']['items'] != []" True
# the staging tree is no fact of the image: a second snapshot is the same document
expect_rc 0 "$GPUVET" snapshot --image "$R:6.4" -o "$T/again.json"
diff <(jq -S 'del(.created)' "$T/i6.4.json") <(jq -S 'del(.created)' "$T/again.json") >"$T/again.diff" ||
    fail "two snapshots of one image differ: $(head -5 "$T/again.diff")"
! grep -q "$XDG_CACHE_HOME" "$T/i6.4.json" || fail "the snapshot names gpuvet's cache"
expect_json "$T/i5.7.json" "d['image']['form']" oci-layout
expect_json "$T/i6.4.json" "d['image']['tag']" 6.4
expect_json "$T/i6.4.json" "d['root']" "$R:6.4"
expect_json "$T/i6.4.json" "d['live']" False

# digests as the layout itself says (index.json, manifest, sha256sum of the blobs)
mdig=$(jq -r '.manifests[] | select(.annotations["org.opencontainers.image.ref.name"] == "6.4")
    | .digest' "$R/index.json")
man=$R/blobs/sha256/${mdig#sha256:}
[[ $(sha256sum <"$man" | cut -d' ' -f1) == "${mdig#sha256:}" ]] || fail "fixture manifest digest"
expect_json "$T/i6.4.json" "d['image']['manifest_digest']" "$mdig"
expect_json "$T/i6.4.json" "d['image']['config_digest']" "$(jq -r .config.digest "$man")"
expect_json "$T/i6.4.json" "[l['digest'] for l in d['image']['layers']]" \
    "$(python3 -c 'import json,sys; print([l["digest"] for l in json.load(open(sys.argv[1]))["layers"]])' "$man")"
cfg=$R/blobs/sha256/$(jq -r '.config.digest | sub("sha256:"; "")' "$man")
expect_json "$T/i6.4.json" "[l['diff_id'] for l in d['image']['layers']]" \
    "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["rootfs"]["diff_ids"])' "$cfg")"

# the secret in Env never reaches the document; allowed variables are the config's
! grep -q hf_notreal "$T/i6.4.json" || fail "the HF_TOKEN value reached the snapshot"
expect_json "$T/i6.4.json" "[e for e in d['image']['env'] if e['name'] == 'HF_TOKEN']" \
    "[{'name': 'HF_TOKEN', 'redacted': True}]"
expect_json "$T/i6.4.json" "d['environment']['variables']['HSA_OVERRIDE_GFX_VERSION']" 10.3.0

# the layer named on each item is the last one whose tar holds the item's path
layers=()
while read -r dg; do layers+=("$R/blobs/sha256/${dg#sha256:}"); done < <(jq -r '.layers[].digest' "$man")
for i in "${!layers[@]}"; do tar -tzf "${layers[$i]}" | sed 's|^\./||; s|^/||' >"$T/layer$i.list"; done
last_layer() { # PATH : the index of the last layer listing PATH
    local p=${1#/} i found=-1
    for i in "${!layers[@]}"; do grep -qxF "$p" "$T/layer$i.list" && found=$i; done
    echo "$found"
}
n=0
while IFS=$'\t' read -r path layer; do
    want=$(last_layer "$path")
    [[ $layer == "$want" ]] || fail "library $path: layer $layer, its tar is in layer $want"
    n=$((n + 1))
done < <(jq -r '.libraries.items[] | [.path, (.layer // -1 | tostring)] | @tsv' "$T/i6.4.json")
((n >= 3)) || fail "only $n libraries in rocm:6.4"
while IFS=$'\t' read -r name arch layer; do
    want=$(last_layer "/var/lib/dpkg/info/$name:$arch.list")
    [[ $want == -1 ]] && want=$(last_layer "/var/lib/dpkg/info/$name.list")
    [[ $layer == "$want" ]] || fail "package $name: layer $layer, its file list is in layer $want"
done < <(jq -r '.packages.items[] | select(.gpu) | [.name, .arch, (.layer // -1 | tostring)] | @tsv' "$T/i6.4.json")

# the same image in every other form: the same stack
for f in rocm-oci.tar rocm-docker.tar rocm-docker25.tar; do
    expect_rc 0 "$GPUVET" snapshot --image "${img[$f]}" -o "$T/$f.json"
    same_stack "$T/$f.json" "$T/u6.4.root.json" "$f"
done
expect_json "$T/rocm-oci.tar.json" "d['image']['form']" oci-archive
expect_json "$T/rocm-docker.tar.json" "d['image']['form']" docker-archive
expect_json "$T/rocm-docker25.tar.json" "d['image']['form']" docker-oci
expect_rc 0 "$GPUVET" snapshot --image "${img[rocm-zstd]}:6.4" -o "$T/zstd.json"
same_stack "$T/zstd.json" "$T/u6.4.root.json" "rocm-zstd:6.4"
expect_json "$T/zstd.json" "sorted(set(l['media_type'] for l in d['image']['layers']))" \
    "['application/vnd.oci.image.layer.v1.tar+zstd']"

# whiteouts and an opaque directory: as umoci applies them
W=${img[whiteout]}
expect_rc 0 "$GPUVET" snapshot --image "$W:whiteout" -o "$T/w.json"
unpacked "$W:whiteout" w
same_stack "$T/w.json" "$T/w.root.json" "whiteout"
expect_json "$T/w.json" "sum(l['whiteouts'] for l in d['image']['layers']) > 0" True

# diff of the two tags: the upgrade's changes name the layer that brought them (the last
# layer whose tar holds the new library), and a label that names ROCm 5.7 on 6.4 content is
# a finding of the side that carries it
expect_rc 1 "$GPUVET" diff --json image="$R:5.7" image="$R:lies"
cp "$GV_OUT" "$T/d.json"
hip=$(jq -r '.libraries.items[] | select(.name == "hip-runtime") | .path' "$T/i6.4.json")
expect_json "$T/d.json" "[c['image_layer']['after']['index'] for c in d['changes'] if c['subject'].startswith('hip-runtime')]" \
    "[$(last_layer "$hip")]"
expect_json "$T/d.json" "[(f['id'], f['side'], f['claimed']) for f in d['image_findings']]" \
    "[('image-tag', 'after', '5.7')]"
expect_rc 0 "$GPUVET" diff image="$R:6.4" "$T/i6.4.json"

# bad input: a message naming the culprit, no output file, nothing left in the cache
no_leftovers() {
    [[ ! -e $T/out.json ]] || fail "$1: an output file was written"
    [[ -z $(find "$XDG_CACHE_HOME/gpuvet/images" -mindepth 1 -maxdepth 1 2>/dev/null) ]] ||
        fail "$1: left behind in the cache: $(ls "$XDG_CACHE_HOME/gpuvet/images")"
}
expect_rc 3 "$GPUVET" snapshot --image "${img[tampered]}:6.4" -o "$T/out.json"
grep -q 'layer [0-9]' "$GV_ERR" || fail "tampered: the layer is not named: $(cat "$GV_ERR")"
grep -qi 'digest\|corrupt\|invalid' "$GV_ERR" || fail "tampered: no reason: $(cat "$GV_ERR")"
no_leftovers tampered
head -c 20000 "${img[rocm-oci.tar]}" >"$T/short.tar"
expect_rc 3 "$GPUVET" snapshot --image "$T/short.tar" -o "$T/out.json"
grep -q short.tar "$GV_ERR" || fail "truncated archive: not named: $(cat "$GV_ERR")"
no_leftovers truncated
expect_rc 3 "$GPUVET" snapshot --image "$R:9.9" -o "$T/out.json"
grep -q '9.9' "$GV_ERR" || fail "unknown tag: not named: $(cat "$GV_ERR")"
no_leftovers "unknown tag"
expect_rc 2 "$GPUVET" snapshot --image "$R:6.4" --root /
echo "ok"
