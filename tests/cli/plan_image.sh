#!/usr/bin/env bash
# gpuvet plan rollback --to IMG-BASELINE.json: a baseline of a container image gives a
# digest pin, not a package transaction (docs/rollback.md, "Images"). The baseline is a real
# snapshot of the trixie-rocm fixture root with an image section added by jq (test input).
# Checked: the sh plan parses (bash -n) and holds the pin NAME@sha256:... exactly, in the
# docker, podman, kubectl and compose lines; the md and json forms; a legacy docker-archive
# pins the image ID; a hostile tag or digest is refused naming its field, and nothing printed;
# no name among the tags is an incomplete plan, --name gives one; --root does not apply.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_cmd jq
gv_tmpdir T

root=$(bash "$GV_SRC/tests/fixtures/debian-rocm.sh" trixie-rocm 2>"$T/fixture.log" | tail -1) ||
    fail "debian-rocm.sh trixie-rocm failed (see $T/fixture.log)"
[[ -d $root/var/lib/dpkg ]] || fail "no trixie-rocm root: '$root'"
expect_rc 0 "$GPUVET" snapshot --root "$root" --no-hash -o "$T/snap.json"

M=sha256:$(printf manifest | sha256sum | cut -d' ' -f1)
C=sha256:$(printf config | sha256sum | cut -d' ' -f1)
image() { # OUT JQ-FILTER (over the image section)
    jq --arg m "$M" --arg c "$C" \
        '.image = ({collected: true, form: "oci-archive", reference: "/srv/rocm.tar:6.4",
                    tag: "6.4", tags: ["6.4", "docker.io/rocm/pytorch:6.4"],
                    manifest_digest: $m, config_digest: $c} | '"$2"')' "$T/snap.json" >"$1"
}
image "$T/img.json" .
REF="docker.io/rocm/pytorch@$M"

# sh: parses, pins the digest exactly in every engine's line, no package transaction
expect_rc 0 "$GPUVET" plan rollback --to "$T/img.json" --format sh -o "$T/plan.sh"
bash -n "$T/plan.sh" || fail "the sh plan does not parse"
if command -v shellcheck >/dev/null; then
    shellcheck -s bash "$T/plan.sh" || fail "the sh plan does not pass shellcheck"
fi
for want in "'docker' 'pull' '$REF'" "'docker' 'tag' '$REF' 'docker.io/rocm/pytorch:6.4'" \
    "'podman' 'pull' '$REF'" "'podman' 'tag' '$REF' 'docker.io/rocm/pytorch:6.4'" \
    "'kubectl' 'set' 'image' 'deployment/<DEPLOYMENT>' '<CONTAINER>=$REF'" "#   image: $REF" \
    "'verify' '--image' 'docker:docker.io/rocm/pytorch:6.4' '--baseline' '$T/img.json'"; do
    grep -qF -- "$want" "$T/plan.sh" || fail "the sh plan lacks: $want"
done
! grep -qE 'apt-get|dpkg|dnf' "$T/plan.sh" || fail "an image plan holds a package transaction"
! grep -qE '(^|[^&])>[^&]' <(grep -v '^#' "$T/plan.sh" | grep -v '>/dev/null') ||
    fail "the sh plan redirects into a file"

# md and json
expect_rc 0 "$GPUVET" plan rollback --to "$T/img.json" --format md
grep -qF "Pin: \`$REF\`" "$GV_OUT" || fail "md lacks the pin"
grep -qxF "image: $REF" "$GV_OUT" || fail "md lacks the manifest's image: line"
expect_rc 0 "$GPUVET" plan rollback --to "$T/img.json" --format json -o "$T/plan.json"
expect_json "$T/plan.json" 'd["kind"]' image-pin
expect_json "$T/plan.json" 'd["pin"]["reference"]' "$REF"
expect_json "$T/plan.json" 'd["pin"]["by"]' manifest_digest
expect_json "$T/plan.json" '[e["engine"] for e in d["engines"]]' "['docker', 'podman', 'kubernetes', 'compose']"

# a legacy docker-archive has no manifest digest: the image ID, and why
image "$T/legacy.json" '.form = "docker-archive" | .tags = ["rocm/pytorch:latest"] | del(.manifest_digest) | del(.tag)'
expect_rc 0 "$GPUVET" plan rollback --to "$T/legacy.json" --format sh -o "$T/legacy.sh"
bash -n "$T/legacy.sh" || fail "the legacy sh plan does not parse"
grep -qF "'docker' 'image' 'inspect' '$C'" "$T/legacy.sh" || fail "legacy: no check that the image ID is loaded"
grep -qF "'docker' 'tag' '$C' 'rocm/pytorch:latest'" "$T/legacy.sh" || fail "legacy: no tag of the image ID"
! grep -qF "'pull'" "$T/legacy.sh" || fail "legacy: an image ID cannot be pulled"
expect_rc 0 "$GPUVET" plan rollback --to "$T/legacy.json" --json
expect_json "$GV_OUT" 'd["pin"]["by"]' image_id
grep -q 'no manifest' "$GV_OUT" || fail "legacy: the plan does not say why the image ID"

# hostile values: refused naming the field, nothing printed
image "$T/bad-name.json" '.tags = ["rocm; rm -rf /"]'
expect_rc 3 "$GPUVET" plan rollback --to "$T/bad-name.json"
grep -qF 'image.tags[0]' "$GV_ERR" || fail "a hostile name is not refused naming image.tags[0]"
[[ ! -s $GV_OUT ]] || fail "a refused plan printed something"
image "$T/bad-digest.json" '.manifest_digest = ($m + "\nrm -rf /")'
for f in sh md json; do
    expect_rc 3 "$GPUVET" plan rollback --to "$T/bad-digest.json" --format $f
    grep -qF 'image.manifest_digest' "$GV_ERR" || fail "$f: a digest with a newline is not refused naming the field"
    [[ ! -s $GV_OUT ]] || fail "$f: a refused plan printed something"
done
image "$T/bad-tag.json" '.tag = "6.4 && reboot"'
expect_rc 3 "$GPUVET" plan rollback --to "$T/bad-tag.json"
grep -qF 'image.tag:' "$GV_ERR" || fail "a hostile tag is not refused naming image.tag"
expect_rc 2 "$GPUVET" plan rollback --to "$T/img.json" --name 'rocm;id'
grep -qF -- '--name' "$GV_ERR" || fail "a hostile --name is not refused naming it"

# no name among the tags: incomplete (exit 1, says how); --name gives it
image "$T/noname.json" '.tags = ["6.4"]'
expect_rc 1 "$GPUVET" plan rollback --to "$T/noname.json"
grep -qF -- '--name NAME' "$GV_ERR" || fail "no name: the problem does not say how"
expect_rc 0 "$GPUVET" plan rollback --to "$T/noname.json" --name rocm/pytorch
grep -qF "'docker' 'pull' 'rocm/pytorch@$M'" "$GV_OUT" || fail "--name is not the pinned name"
grep -qF "'docker' 'tag' 'rocm/pytorch@$M' 'rocm/pytorch:6.4'" "$GV_OUT" || fail "--name: the tag asked for is not kept"

# the machine's options do not apply to an image
expect_rc 2 "$GPUVET" plan rollback --to "$T/img.json" --root "$root"
echo "ok"
