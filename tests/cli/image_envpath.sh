#!/usr/bin/env bash
# An image's Python is where the image's Env says (issue 33, found on the H100: an image
# whose PyTorch lives in a virtual environment outside the usual places, on the config's
# PATH, was snapshotted without it). A tiny OCI layout made with umoci: a virtual
# environment at /srv/app/venv (pyvenv.cfg, bin/python3, an empty site-packages) and
# Env PATH=/srv/app/venv/bin:/usr/bin. snapshot --image must list that environment; the
# same tree with PATH=/usr/bin must not (the place is in no default list).
# The rootfs gpuvet unpacks to run in gets /proc, /sys and /dev mount points when the
# image has none (as a container runtime makes them), and never follows a link there.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
for c in umoci jq; do need_cmd "$c"; done
gv_tmpdir T
cd "$T"
export SOURCE_DATE_EPOCH=1764000000
umoci init --layout L >/dev/null
umoci new --image L:base >/dev/null
umoci unpack --rootless --image L:base b >/dev/null
r=b/rootfs
mkdir -p "$r/srv/app/venv/bin" "$r/srv/app/venv/lib/python3.11/site-packages" "$r/usr/bin" \
    "$r/usr/lib/python3.11"
printf 'home = /usr/bin\ninclude-system-site-packages = false\nversion = 3.11.2\n' \
    >"$r/srv/app/venv/pyvenv.cfg"
cp /bin/true "$r/usr/bin/python3.11"
ln -s /usr/bin/python3.11 "$r/srv/app/venv/bin/python3"
ln -s python3 "$r/srv/app/venv/bin/python"
umoci repack --image L:v1 b >/dev/null
umoci config --image L:v1 --tag venv --config.env PATH=/srv/app/venv/bin:/usr/bin >/dev/null
umoci config --image L:v1 --tag plain --config.env PATH=/usr/bin >/dev/null
expect_rc 0 "$GPUVET" snapshot --no-hash --image "$T/L:venv" -o "$T/venv.json"
jq -e '[.python.environments[].prefix] | index("/srv/app/venv")' "$T/venv.json" >/dev/null ||
    fail "the image's PATH names /srv/app/venv/bin: $(jq -c '[.python.environments[].prefix]' "$T/venv.json")"
expect_rc 0 "$GPUVET" snapshot --no-hash --image "$T/L:plain" -o "$T/plain.json"
jq -e '[.python.environments[].prefix] | index("/srv/app/venv") | not' "$T/plain.json" >/dev/null ||
    fail "without it on PATH the environment was found anyway (the test proves nothing)"
echo ok
