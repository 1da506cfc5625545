#!/usr/bin/env bash
# gpuvet report of a gpuvet.probe document made here on the CPU: every property of every
# route and precision is a row holding the value the JSON holds (read here with json).
# Not yet in Chromium (see check_page.py for the other kinds).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
gv_workdir T && cd "$T"
"$GPUVET" probe --device cpu -o p.json >/dev/null || fail "probe"
"$GPUVET" report p.json -o p.html 2>/dev/null || fail "report of p.json"
python3 - p.json p.html <<'PY' || fail "the probe page does not hold the document's values"
import json, sys, html, re
doc = json.load(open(sys.argv[1])); page = open(sys.argv[2]).read()
arts = re.split(r'<article class="precision"', page)[1:]
want = [(pc.get("op"), pc.get("precision"), pc.get("properties", {}))
        for r in doc["routes"] for pc in r.get("precisions", [])]
assert len(arts) == len(want), (len(arts), len(want))
n = 0
for a, (op, prec, props) in zip(arts, want):
    assert a.startswith(' data-op="%s" data-precision="%s"' % (html.escape(op), html.escape(prec))), a[:80]
    for name, pr in props.items():
        m = re.search(r'<tr data-property="%s">.*?<td class="pv">(.*?)</td>' % re.escape(html.escape(name)), a)
        assert m, (op, prec, name)
        v = pr["value"] if isinstance(pr["value"], str) else json.dumps(pr["value"])
        got = re.sub(r'<[^>]+>', '', m.group(1))
        assert html.unescape(got).endswith(v.replace("_", " ")), (op, prec, name, got, v)
        n += 1
assert n > 0
PY
# a comparison of two check --probe results (plain CPU, TF32 emulation): the page holds the
# ranked causes with the cases each touches, every error signature and every fingerprint
# property that changed, as the comparison document says them
"$GPUVET" check --suite quick --probe -o a.json >/dev/null 2>&1 || fail "check --probe"
rc=0
"$GPUVET" check --suite quick --probe --device cpu:emulate=tf32 -o b.json >/dev/null 2>&1 || rc=$?
[[ $rc == 1 ]] || fail "check --probe with TF32 emulation: exit $rc, not 1"
rc=0
"$GPUVET" compare a.json b.json --json >c.json || rc=$?
[[ $rc == 1 ]] || fail "compare of plain and TF32: exit $rc, not 1"
"$GPUVET" report c.json -o c.html 2>/dev/null || fail "report of the comparison"
python3 - c.json c.html <<'PY' || fail "the comparison page does not hold the explanation"
import json, sys, html, re
d = json.load(open(sys.argv[1])); page = html.unescape(re.sub(r"<[^>]+>", "", open(sys.argv[2]).read()))
assert d["fingerprint_changes"] and d["signatures"] and d["causes"], "nothing to explain"
for x in d["fingerprint_changes"] + d["signatures"]:
    assert x["text"] in page, x["text"]
body = page.index("schema gpuvet.compare")  # after the verdict the page opens with
pos = [page.index(c["name"], body) for c in d["causes"][:3]]
assert pos == sorted(pos), "the causes are not in the document's order"
for c in d["causes"]:
    if c.get("cases_text"):
        assert "touches: " + c["cases_text"] in page, c["cases_text"]
PY
echo ok
