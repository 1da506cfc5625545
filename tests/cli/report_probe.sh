#!/usr/bin/env bash
# gpuvet report of a gpuvet.probe document made here on the CPU: every property of every
# route and precision is a row holding the value the JSON holds (read here with json).
# Not yet in Chromium (see check_page.py for the other kinds).
set -euo pipefail
fail() { echo "FAIL: $*" >&2; exit 1; }
T=$GV_TEST_TMP/report_probe
rm -rf "$T" && mkdir -p "$T" && cd "$T"
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
echo ok
