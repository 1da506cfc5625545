#!/bin/bash
# gpuvet report of an image's snapshot (docs/report.md, docs/image.md): a real snapshot --root
# of a fixture plus an image section (tests/cli/image_section.jq) whose label, env value and
# created_by carry markup, checked in a real headless Chromium by tests/report/check_page.py
# (kind image: the image's values, tags, digests, labels, env with "redacted", the layers
# table, the layer of each library and GPU package, all read from the document, and no
# markup of the document turned into elements); and the HTML itself holds them escaped.
set -u
. "$(dirname "$0")/lib.sh"
need_cmd jq
need_browser
gv_workdir T
root=$(bash "$GV_SRC/tests/fixtures/debian-rocm.sh" trixie-rocm 2> "$T/fixture.log") ||
    fail "fixture trixie-rocm: $(tail -5 "$T/fixture.log")"
export XDG_CACHE_HOME="$T/cache"
mkdir -p "$T/shots"
expect_rc 0 "$GPUVET" snapshot --root "$root" -o "$T/root.json"
NOTE='<script>window.__gv_pwned=1</script><img src=x onerror="window.__gv_pwned=2">'
ENVVAL='11.0.0"><script>window.__gv_pwned=3</script>'
jq --arg tag 5.7 --arg manifest "sha256:$(printf 'a%.0s' {1..64})" \
    --arg config "sha256:$(printf 'c%.0s' {1..64})" --arg note "$NOTE" --arg envval "$ENVVAL" \
    -f "$GV_SRC/tests/cli/image_section.jq" "$T/root.json" > "$T/img.json" || fail "jq"
# the fixture has GPU libraries and packages, or the layer columns are not tried
[ "$(jq '[.packages.items[] | select(.gpu)] | length' "$T/img.json")" -gt 0 ] || fail "no GPU package"
[ "$(jq '.libraries.items | length' "$T/img.json")" -gt 0 ] || fail "no library"

expect_rc 0 "$GPUVET" report "$T/img.json" -o "$T/img.html"
python3 "$GV_SRC/tests/report/check_page.py" image "$T/img.html" "$T/shots" "$T/img.json" ||
    fail "the image page"
# escaped in the HTML itself: the text of the markup, never the markup
for s in '&lt;script&gt;window.__gv_pwned=1&lt;/script&gt;' 'onerror=&quot;window.__gv_pwned=2&quot;' \
    '11.0.0&quot;&gt;&lt;script&gt;window.__gv_pwned=3'; do
    grep -qF -- "$s" "$T/img.html" || fail "not shown escaped: $s"
done
! grep -qF -- '<script>window.__gv_pwned' "$T/img.html" || fail "markup of the document in the page"
! grep -qF -- '<img src=x' "$T/img.html" || fail "markup of the document in the page"
# the redacted variable's value never was in the document; the page says so
grep -q 'redacted' "$T/img.html" || fail "HF_TOKEN is not said to be redacted"

# a snapshot without an image has no image section and no layer column
expect_rc 0 "$GPUVET" report "$T/root.json" -o "$T/root.html"
! grep -q 'class="part image"' "$T/root.html" || fail "an image section on a root's page"
python3 "$GV_SRC/tests/report/check_page.py" snapshot "$T/root.html" "$T/shots" "$T/root.json" ||
    fail "the root's snapshot page"
echo ok
