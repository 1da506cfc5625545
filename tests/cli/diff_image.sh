#!/usr/bin/env bash
# gpuvet diff where a side is an image (docs/image.md, docs/diff-schema.md): real snapshots of
# the Debian fixtures (trixie-rocm, HIP 5.7, really upgraded to sid-rocm, HIP 6.4) with an
# "image" section and per-item "layer" added with jq as test input. Checks: the layer that
# brought each library and package change (JSON and text), the image group (layers shared
# by diff_id, labels, env with redacted secrets never printed, digests, tags), a plain
# root diff left as it was, and image=REF failing cleanly (exit 3, naming REF).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_root "the Debian fixtures need root to build"
need_cmd debootstrap "debootstrap is not installed"
need_cmd jq "jq builds the test input"
need_cmd python3 "python3 is needed to read the JSON"
gv_tmpdir T
mapfile -t roots < <("$GV_SRC/tests/fixtures/debian-rocm.sh" all) || fail "fixture build failed"
TRIXIE=${roots[0]} SID=${roots[1]}
for r in trixie:"$TRIXIE" sid:"$SID"; do
    env -i PATH=/usr/bin:/bin "$GPUVET" snapshot --no-hash --root "${r#*:}" -o "$T/${r%%:*}.json" ||
        fail "snapshot of ${r#*:}"
done

h() { printf 'sha256:%s' "$(printf "$1%.0s" {1..64})"; } # a digest of one repeated hex digit
FAKE_B=hf_FAKEdiffTOKENbefore0123456789 FAKE_A=hf_FAKEdiffTOKENafter9876543210
# The before image; the after image is it with its tags, labels, env, user and layers 2-3
# changed: base layers 0-1 shared. GPU packages and every library come with the install
# layer (1 before, 2 after), the other packages with layer 0.
jq -n --arg l0 "$(h 0)" --arg d0 "$(h 1)" --arg l1 "$(h 2)" --arg d1 "$(h 3)" \
    --arg l2 "$(h 4)" --arg d2 "$(h 5)" --arg fake "$FAKE_B" '
  {collected: true, reference: "old.tar:5.7", form: "oci-archive", tag: "5.7",
    tags: ["5.7", "localhost/rocm:5.7"], manifest_digest: "sha256:\("a" * 64)",
    config_digest: "sha256:\("b" * 64)", platform: {os: "linux", architecture: "amd64"},
    created: "2026-01-01T00:00:00Z",
    labels: {"org.opencontainers.image.version": "5.7", "maintainer": "old team"},
    env: [{name: "PATH", value: "/usr/bin:/bin"}, {name: "ROCM_PATH", value: "/opt/rocm-5.7"},
          {name: "HF_TOKEN", redacted: true, value: $fake}],
    entrypoint: ["/bin/bash"], user: "root", working_dir: "/",
    layers: [
      {index: 0, digest: $l0, diff_id: $d0, created_by: "ADD rootfs.tar.xz / # buildkit"},
      {index: 1, digest: $l1, diff_id: $d1, created_by: "RUN /bin/sh -c apt-get install -y libamdhip64-5 # buildkit"},
      {index: 2, digest: $l2, diff_id: $d2, created_by: "ENV ROCM_PATH=/opt/rocm-5.7"}]}' >"$T/image-a.json"
jq --arg l2 "sha256:ab12cd34ef56$(printf '7%.0s' {1..52})" --arg d2 "$(h 6)" \
    --arg l3 "$(h 8)" --arg d3 "$(h 9)" --arg fake "$FAKE_A" '
  .reference = "new.tar:6.4" | .tag = "6.4" | .tags = ["6.4", "localhost/rocm:6.4"]
  | .manifest_digest = "sha256:\("c" * 64)" | .config_digest = "sha256:\("d" * 64)"
  | .created = "2026-02-01T00:00:00Z" | .user = "rocm"
  | .labels = {"org.opencontainers.image.version": "6.4", "com.example.flavour": "rocm"}
  | .env = [.env[0], {name: "ROCM_PATH", value: "/opt/rocm-6.4"}, {name: "HF_TOKEN", value: $fake},
            {name: "AWS_SECRET_ACCESS_KEY", redacted: true},
            {name: "ROCR_VISIBLE_DEVICES", redacted: true, value: "\($fake)2"}]
  | .layers = .layers[:2] + [
      {index: 2, digest: $l2, diff_id: $d2, created_by: "RUN /bin/sh -c apt-get install -y libamdhip64-6 # buildkit"},
      {index: 3, digest: $l3, diff_id: $d3, created_by: "ENV ROCM_PATH=/opt/rocm-6.4"}]' \
    "$T/image-a.json" >"$T/image-b.json"
annotate() { # SNAPSHOT IMAGE INSTALL-LAYER OUT
    jq --slurpfile img "$2" --argjson n "$3" '.image = $img[0] | .libraries.items |= map(.layer = $n)
      | .packages.items |= map(.layer = (if .gpu then $n else 0 end))' "$1" >"$4"
}
annotate "$T/trixie.json" "$T/image-a.json" 1 "$T/img-a.json"
annotate "$T/sid.json" "$T/image-b.json" 2 "$T/img-b.json"

expect_rc 1 "$GPUVET" diff --json "$T/img-a.json" "$T/img-b.json"
cp "$GV_OUT" "$T/diff.json"
expect_rc 1 "$GPUVET" diff "$T/img-a.json" "$T/img-b.json"
cp "$GV_OUT" "$T/diff.txt"

python3 - "$T/diff.json" "$T/img-a.json" "$T/img-b.json" <<'PY' || fail "the image diff document (above)"
import json, sys
d = json.load(open(sys.argv[1]))
ch = {(c["layer"], c["subject"]): c for c in d["changes"]}
def get(layer, subject):
    assert (layer, subject) in ch, f"no {layer} change {subject!r}"
    return ch[layer, subject]
def brought(c, side):
    return c.get("image_layer", {}).get(side, {}).get("index")
# packages: the GPU install layer on each side, the base layer for the others
assert brought(get("packages", "libamdhip64-6"), "after") == 2, get("packages", "libamdhip64-6")
assert "before" not in get("packages", "libamdhip64-6")["image_layer"]
assert brought(get("packages", "libamdhip64-5"), "before") == 1, get("packages", "libamdhip64-5")
assert "after" not in get("packages", "libamdhip64-5")["image_layer"]
il = get("packages", "libamdhip64-6")["image_layer"]["after"]
assert il["digest"].startswith("sha256:ab12cd34ef56") and "libamdhip64-6" in il["created_by"], il
gpu = {p["name"] for f in sys.argv[2:] for p in json.load(open(f))["packages"]["items"] if p.get("gpu")}
pk = [c for c in d["changes"] if c["layer"] == "packages" and c["kind"] == "changed" and " (" not in c["subject"]]
plain = [c for c in pk if c["subject"] not in gpu]
assert plain and all(brought(c, "after") == 0 and brought(c, "before") == 0 for c in plain), plain[:2]
assert all(brought(c, "after") == 2 and brought(c, "before") == 1 for c in pk if c["subject"] in gpu)
# libraries: the HIP runtime, before and after
hip = [c for c in d["changes"] if c["layer"] == "runtime" and c["subject"].startswith("hip-runtime")]
assert hip and all(brought(c, "after") == 2 and brought(c, "before") == 1 for c in hip), hip
# every library and package change names its layer; nothing else does
for c in d["changes"]:
    if c["layer"] in ("loader", "framework", "image", "driver"):
        assert "image_layer" not in c, c
# the image group
lay = get("image", "layers")
assert (lay["before"], lay["after"]) == ("3 layers", "4 layers"), lay
assert lay["detail"] == "layers 0-1 shared, layers 2-3 differ", lay["detail"]
assert get("image", "layer 2")["kind"] == "changed" and get("image", "layer 3")["kind"] == "added"
assert ("image", "layer 1") not in ch and ("image", "layer 0") not in ch
v = get("image", "label org.opencontainers.image.version")
assert (v["kind"], v["before"], v["after"]) == ("changed", "5.7", "6.4"), v
assert get("image", "label maintainer")["kind"] == "removed"
assert get("image", "label com.example.flavour")["after"] == "rocm"
r = get("image", "ROCM_PATH (image env)")
assert (r["before"], r["after"]) == ("/opt/rocm-5.7", "/opt/rocm-6.4"), r
assert ("image", "HF_TOKEN (image env)") not in ch, "both sides redacted: no change to see"
assert ("image", "PATH (image env)") not in ch
s = get("image", "AWS_SECRET_ACCESS_KEY (image env)")
assert (s["kind"], s["after"]) == ("added", "(redacted)"), s
s = get("image", "ROCR_VISIBLE_DEVICES (image env)")
assert (s["kind"], s["after"]) == ("added", "(redacted)"), s
assert get("image", "manifest digest")["after"] == "sha256:" + "c" * 64
assert get("image", "tag 6.4")["kind"] == "added" and get("image", "tag 5.7")["kind"] == "removed"
assert get("image", "user")["after"] == "rocm" and ("image", "entrypoint") not in ch
assert ("image", "platform") not in ch
assert d["summary"]["by_layer"]["image"] == sum(1 for c in d["changes"] if c["layer"] == "image")
assert d["after"]["image"]["reference"] == "new.tar:6.4" and d["after"]["image"]["layers"] == 4
assert d["image_findings"] == [], d["image_findings"]
PY

# the text names the layer that brought a change, with its digest and what made it
grep -A1 -E '^  .*\+.* libamdhip64-6: added ' "$T/diff.txt" |
    grep -qF 'brought by layer 2 (sha256:ab12cd34ef56…, RUN /bin/sh -c apt-get install -y libamdhip64-6 # buildkit)' ||
    fail "no layer line under libamdhip64-6: $(grep -A1 'libamdhip64-6' "$T/diff.txt")"
grep -A1 -E ' libamdhip64-5: removed ' "$T/diff.txt" | grep -qF 'had come with layer 1 (sha256:2222' ||
    fail "no layer line under libamdhip64-5: $(grep -A1 'libamdhip64-5' "$T/diff.txt")"
grep -qF 'layers: 3 layers -> 4 layers  (layers 0-1 shared, layers 2-3 differ)' "$T/diff.txt" ||
    fail "no layers line: $(grep 'layers' "$T/diff.txt")"
grep -qF 'label org.opencontainers.image.version: 5.7 -> 6.4' "$T/diff.txt" || fail "no label line"
grep -qF 'image new.tar:6.4 (sha256:cccc' "$T/diff.txt" || fail "no image in the header"
# a secret is never printed, whatever the document holds beside "redacted" (a value beside
# the marker, a value under a secret name)
for f in "$T/diff.txt" "$T/diff.json"; do
    if grep -q 'hf_FAKE' "$f"; then fail "a redacted token reached $f"; fi
done

# an image against itself: no difference at all
expect_rc 0 "$GPUVET" diff "$T/img-b.json" "$T/img-b.json"
grep -q 'no differences' "$GV_OUT" || fail "image vs itself: $(cat "$GV_OUT")"
# an image against a root: layers on the image side only, no image group
expect_rc 1 "$GPUVET" diff --json "$T/trixie.json" "$T/img-b.json"
python3 - "$GV_OUT" <<'PY' || fail "root vs image"
import json, sys
d = json.load(open(sys.argv[1]))
assert not [c for c in d["changes"] if c["layer"] == "image"]
assert not [c for c in d["changes"] if "before" in c.get("image_layer", {})]
assert [c for c in d["changes"] if c.get("image_layer", {}).get("after", {}).get("index") == 2]
assert "image" not in d["before"] and "image" in d["after"]
PY
# two roots: the document as before (no image fields)
expect_rc 1 "$GPUVET" diff --json "$T/trixie.json" "$T/sid.json"
python3 - "$GV_OUT" <<'PY' || fail "root vs root gained image fields"
import json, sys
d = json.load(open(sys.argv[1]))
assert "image_findings" not in d and "image" not in d["summary"]["by_layer"]
assert not [c for c in d["changes"] if "image_layer" in c or c["layer"] == "image"]
PY

# image=REF: taken with the image reader; its failure is reported, naming REF, exit 3
REF="$T/no such image.tar:6.4"
expect_rc 3 "$GPUVET" diff "image=$REF" "$T/sid.json"
grep -qF "$REF" "$GV_ERR" || fail "the error does not name the reference: $(cat "$GV_ERR")"
if grep -qF "image=" "$GV_ERR"; then fail "image=REF was read as a file name: $(cat "$GV_ERR")"; fi
expect_rc 3 "$GPUVET" diff "$T/sid.json" "image=$REF"
grep -qF "$REF" "$GV_ERR" || fail "the error does not name the reference: $(cat "$GV_ERR")"
echo ok
