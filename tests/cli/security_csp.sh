#!/usr/bin/env bash
# Issue 31, class 10: the report page's Content-Security-Policy allows no inline
# script but its own. script-src holds no 'unsafe-inline' (nor 'unsafe-eval', '*' or a
# scheme) and only 'sha256-...' sources; every <script> block of the page hashes to
# one of them, so the sorting script still runs and an injected one would not.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_cmd python3 "python3 is needed to read the page"
gv_workdir T

"$GPUVET" report "$GV_SRC/tests/data/diff/before.json" -o "$T/page.html" 2>"$T/err" ||
    fail "report: $(cat "$T/err")"
python3 - "$T/page.html" <<'PY'
import base64, hashlib, html, re, sys
page = open(sys.argv[1], encoding="utf-8").read()
metas = re.findall(r'<meta http-equiv="Content-Security-Policy" content="([^"]*)"', page)
assert len(metas) == 1, "%d CSP meta elements" % len(metas)
policy = {}
for d in html.unescape(metas[0]).split(";"):
    words = d.split()
    if words:
        policy[words[0]] = words[1:]
src = policy.get("script-src")
assert src is not None, "no script-src: %r" % metas[0]
for s in src:
    assert re.fullmatch(r"'sha256-[A-Za-z0-9+/]{43}='", s), "script-src allows %r" % s
allowed = {s[8:-1] for s in src}
scripts = re.findall(r"<script([^>]*)>(.*?)</script>", page, re.S)
assert scripts, "the page has no script (the sorting script is expected)"
for attrs, body in scripts:
    assert "src" not in attrs, "a script with a src: %r" % attrs
    h = base64.b64encode(hashlib.sha256(body.encode("utf-8")).digest()).decode()
    assert h in allowed, "a script not allowed by the policy (sha256-%s not in %s)" % (h, sorted(allowed))
assert not re.search(r"<[^>]+\son[a-z]+\s*=", page), "an inline event handler"
print("policy %s; %d script(s), each allowed by its hash" % (" ".join(src), len(scripts)))
PY
