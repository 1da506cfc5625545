#!/usr/bin/env python3
"""Opens a gpuvet report page in a real headless Chromium (file://, JavaScript on
and off) and checks it against the documents it was made from:

  check_page.py KIND PAGE.html OUTDIR DOC.json [EXTRA...]

Every value asserted is read from the input documents here (json), never from
what gpuvet produced. Common to all kinds: no console errors or warnings, no
network request but the file itself, a non-blank page and a screenshot
(OUTDIR/PAGE.png), every figure (SVG) present with a title, a description and
drawn marks, with JavaScript off the page still complete (and the sorting
script really off), sorting with it on, and printing on A4 (OUTDIR/PAGE.pdf)
with no table wider than the page. At 1280 px and at A4 width the verdict of each
document is in the header, on the first screen, with the status the document's
command exits with, and no element is wider than the viewport.

KIND: snapshot image results compare doctor diff matrix capture capture-compare bisect
bench bench-compare verify fleet hostile multi (image: a snapshot with an "image" section,
docs/image.md). EXTRA for compare: BEFORE.json AFTER.json [BEFORE.safetensors
AFTER.safetensors] (the ULP histogram of the saved outputs is recomputed here
from the files, independently of gpuvet)."""
import json
import math
import os
import struct
import sys
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from browser import Browser  # noqa: E402

KIND, PAGE, OUT, DOC = sys.argv[1:5]
EXTRA = sys.argv[5:]
NAME = os.path.splitext(os.path.basename(PAGE))[0]
os.makedirs(OUT, exist_ok=True)


def read_doc(path):
    """A JSON document, or the index of a .gvcap (its documented trailer)."""
    raw = open(path, "rb").read()
    if raw[:8] == b"GVCAP01\n":
        off, n = struct.unpack("<QQ", raw[-24:-8])
        return json.loads(raw[off:off + n])
    return json.loads(raw)


doc = read_doc(DOC)
failures = []


def check(cond, msg):
    if not cond:
        failures.append(msg)


def num_eq(cell_v, want):
    """A cell's data-v against a document number (or "inf"/"nan" string)."""
    if want is None:
        return cell_v in ("", None)
    if isinstance(want, str):
        return cell_v == want
    try:
        got = float(cell_v)
    except (TypeError, ValueError):
        return False
    return got == float(want) or (math.isnan(got) and math.isnan(float(want)))


def png_not_blank(path):
    """Decodes the PNG's pixel rows (zlib) and wants more than a few distinct bytes."""
    b = open(path, "rb").read()
    assert b[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    i, idat = 8, b""
    while i < len(b):
        n, typ = struct.unpack(">I4s", b[i:i + 8])
        if typ == b"IDAT":
            idat += b[i + 8:i + 8 + n]
        i += 12 + n
    raw = zlib.decompress(idat)
    return len(set(raw[:4000000])) > 16


# ---------- what every page must satisfy ----------

COMMON_JS = r"""
const figs = Array.from(document.querySelectorAll('svg[role=img]'));
return {
  title: document.title,
  h1: (document.querySelector('h1') || {}).textContent || '',
  text: document.body.innerText.length,
  sections: document.querySelectorAll('section.doc').length,
  figs: figs.map(s => { const r = s.getBoundingClientRect();
    return {title: (s.querySelector('title') || {}).textContent || '',
            desc: (s.querySelector('desc') || {}).textContent || '',
            labelled: s.getAttribute('aria-labelledby') || '',
            marks: s.querySelectorAll('rect, use, polyline[points]:not([points=""]), path').length,
            w: r.width, h: r.height}; }),
  sortable: document.querySelectorAll('table.sortable').length,
  sortTitles: document.querySelectorAll('table.sortable th[title]').length,
};
"""


def common(b, url, js_on, tag):
    probs = b.console_problems()
    check(not probs, "%s: console errors/warnings: %s" % (tag, probs[:5]))
    reqs = b.requests()
    check(reqs and all(r == url for r in reqs), "%s: requests other than the file: %s" % (tag, reqs))
    info = b.js(COMMON_JS)
    check(info["text"] > 200 and info["h1"].strip(), "%s: the page is blank" % tag)
    for f in info["figs"]:
        check(f["title"].strip() and f["desc"].strip() and f["labelled"],
              "%s: figure without title/desc/aria: %s" % (tag, f))
        check(f["marks"] > 0 and f["w"] >= 5 and f["h"] >= 5, "%s: an empty figure: %s" % (tag, f))
    # every number shown is the one its cell's data-v holds, formatted (>= 3 significant digits)
    cells = b.js("return Array.from(document.querySelectorAll('td[data-v]')).map(c => [c.getAttribute('data-v'), c.textContent])")
    for raw, text in cells:
        shown = text.replace("✗", "").strip()
        if raw in ("", None):
            check(shown == "—", "%s: a cell without value shows %r" % (tag, text))
            continue
        if raw in ("inf", "-inf", "nan"):
            check(shown == raw, "%s: %s shown as %r" % (tag, raw, text))
            continue
        try:
            v, t = float(raw), float(shown)
        except ValueError:
            check(False, "%s: cell %r shows %r" % (tag, raw, text))
            continue
        check(abs(t - v) <= 0.006 * abs(v), "%s: cell %s shown as %r" % (tag, raw, text))
    if js_on:
        check(info["sortTitles"] > 0 or info["sortable"] == 0, "%s: the sorting script did not run" % tag)
    else:
        check(info["sortTitles"] == 0, "%s: a script ran with JavaScript off" % tag)
    return info


def sort_works(b, tag):
    """Clicks a numeric column header of the largest sortable table; the rows must come
    out in ascending order of their data-v."""
    r = b.js(r"""
const ts = Array.from(document.querySelectorAll('table.sortable')).filter(t => t.tBodies[0] && t.tBodies[0].rows.length > 2);
if (!ts.length) return null;
ts.sort((a, b) => b.tBodies[0].rows.length - a.tBodies[0].rows.length);
const t = ts[0]; const ths = Array.from(t.tHead.rows[0].cells);
const col = ths.findIndex(h => h.classList.contains('num'));
if (col < 0) return null;
ths[col].click();
return Array.from(t.tBodies[0].rows).map(r => r.cells[col].getAttribute('data-v'));
""")
    if r is None:
        return
    vals = [float(v) if v not in ("", None) else float("nan") for v in r]
    finite = [v for v in vals if not math.isnan(v)]
    check(finite == sorted(finite), "%s: sorting by a numeric column did not sort: %s" % (tag, vals[:10]))


WIDE_JS = r"""
const w = document.documentElement.clientWidth;
const name = e => e.tagName.toLowerCase() + (e.className && e.className.baseVal === undefined ? '.' + e.className.split(' ').join('.') : '');
return [document.documentElement.scrollWidth, w, Array.from(document.querySelectorAll('body *'))
  .filter(e => e.getBoundingClientRect().width > 0 && (e.getBoundingClientRect().right > w + 1 ||
               (!(e instanceof SVGElement) && e.getBoundingClientRect().left + e.scrollWidth > w + 1)))
  .slice(-5).map(e => [name(e), Math.round(e.getBoundingClientRect().right), (e.textContent || '').slice(0, 60)])];
"""

VERDICT_JS = r"""
window.scrollTo(0, 0);
const v = Array.from(document.querySelectorAll('p.verdict'));
return v.map(p => { const r = p.getBoundingClientRect();
  return {top: r.top, bottom: r.bottom, status: p.getAttribute('data-status'), text: p.innerText,
          head: (p.querySelector('b') || {}).textContent || '', inHeader: !!p.closest('header')}; });
"""


def want_status(d):
    """The exit status the document's command gives (README, "Exit codes"), from the
    document itself: 1 found something, 0 nothing wrong, -1 a record without verdict."""
    s = d.get("schema")
    sm = d.get("summary") or {}
    if s == "gpuvet.results":
        return int(sm["pass"] < sm["cases"])
    if s in ("gpuvet.compare", "gpuvet.bisect", "gpuvet.capture-compare"):
        return int(bool(d["flagged"]))
    if s == "gpuvet.fleet":
        return int(sm["odd"] + sm["missing"] > 0)
    if s == "gpuvet.doctor":
        return int(sm["errors"] > 0)
    if s == "gpuvet.diff":
        return int(len(d["changes"]) > 0)
    if s == "gpuvet.verify":
        return int(not d["ok"])
    if s == "gpuvet.bench":
        return int(any(r["status"] in ("failed", "error", "timeout") for r in d["results"]))
    return -1


def first_screen(b, tag, height, docs=None):
    """The verdict of every document is in the page's header and within the first screen
    (height px from the top), with the status its command exits with; nothing is wider
    than the viewport."""
    got = b.js(VERDICT_JS)
    check(got, "%s: no verdict on the page" % tag)
    for v in got:
        check(v["inHeader"] and v["top"] >= 0 and v["bottom"] <= height,
              "%s: the verdict %r is not on the first screen (%d-%d px of %d)" %
              (tag, v["text"][:80], v["top"], v["bottom"], height))
    if docs is not None:
        want = [str(want_status(d)) for d in docs]
        check([v["status"] for v in got] == want, "%s: verdict statuses %s, the documents say %s" %
              (tag, [v["status"] for v in got], want))
    over = b.js(r"""
const out = [];
document.querySelectorAll('svg').forEach(svg => {
  const r = Array.from(svg.querySelectorAll('g.mark text')).map(t => [t.getBoundingClientRect(), t.textContent]);
  for (let i = 0; i < r.length; i++) for (let j = i + 1; j < r.length; j++) {
    const a = r[i][0], b = r[j][0];
    if (a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom) out.push([r[i][1], r[j][1]]);
  }
});
return out.slice(0, 3);""")
    check(not over, "%s: labels of marks on a figure overlap: %s" % (tag, over))
    sw, w, wide = b.js(WIDE_JS)
    check(sw <= w and not wide, "%s: wider than the %d px viewport (%d px): %s" % (tag, w, sw, wide))
    return got


def print_fits(b, tag):
    """Print media at A4 text width (210 mm - 2 x 12 mm at 96 dpi = 703 px): no table
    may stick out of the page; and a real A4 PDF is made."""
    b.cdp("Emulation.setEmulatedMedia", {"media": "print"})
    b.cdp("Emulation.setDeviceMetricsOverride", {"width": 703, "height": 1000, "deviceScaleFactor": 1,
                                                  "mobile": False})
    over = b.js(r"""
const w = document.documentElement.clientWidth;
return Array.from(document.querySelectorAll('table')).map(t => [t.getBoundingClientRect().right, w,
  (t.querySelector('caption,th') || {}).textContent]).filter(x => x[0] > x[1] + 1);
""")
    check(not over, "%s: tables wider than an A4 page: %s" % (tag, over[:3]))
    first_screen(b, tag + " (A4)", 1000)
    pdf = b.print_pdf(os.path.join(OUT, NAME + ".pdf"))
    check(pdf[:5] == b"%PDF-" and len(pdf) > 2000, "%s: no A4 PDF" % tag)
    b.cdp("Emulation.clearDeviceMetricsOverride")
    b.cdp("Emulation.setEmulatedMedia", {"media": ""})


# ---------- per kind: values from the documents ----------

def rows_by_case(b):
    return b.js(r"""
const out = {};
document.querySelectorAll('section.cases tr[data-case]').forEach(r => {
  out[r.getAttribute('data-case')] = {
    words: Array.from(r.querySelectorAll('.v')).map(v => v.getAttribute('data-word')),
    vals: Array.from(r.cells).map(c => c.getAttribute('data-v')), text: r.innerText};
});
return out;
""")


def summary_counts(b):
    return b.js(r"""
const out = {};
document.querySelectorAll('ul.summary li[data-key]').forEach(li => {
  out[li.getAttribute('data-key')] = li.querySelector('.count').textContent; });
return out;
""")


def check_summary(b, summary, tag):
    got = summary_counts(b)
    for k, v in summary.items():
        if isinstance(v, (int, float)):
            check(got.get(k) == str(v), "%s: summary %s shows %r, the document holds %r" % (tag, k, got.get(k), v))


def desc_counts(desc, label):
    """The counts of one series in a histogram's <desc>: 'LABEL: 0 ULP: n; 1 ULP: n; ...'."""
    part = desc.split(label + ":", 1)[1]
    out = []
    for piece in part.split(";")[:8]:
        v = piece.split("ULP:", 1)[1].strip().split(".")[0].split(" ")[0]
        out.append(None if v == "none" else int(v))
    return out


def ulp_oracle(a_path, b_path, name):
    """Bins the ULP distance between two saved outputs, from the safetensors bytes
    (own decoder; F32, F16, BF16, F64)."""
    def tensor(path):
        raw = open(path, "rb").read()
        n = struct.unpack("<Q", raw[:8])[0]
        hdr = json.loads(raw[8:8 + n])
        t = hdr[name]
        s, e = t["data_offsets"]
        return t["dtype"], raw[8 + n + s:8 + n + e]
    da, ba = tensor(a_path)
    db, bb = tensor(b_path)
    assert da == db
    width = {"F64": 8, "F32": 4, "F16": 2, "BF16": 2}.get(da)
    if not width:
        return None
    fmt = {8: "<%dq", 4: "<%di", 2: "<%dh"}[width]
    bits = width * 8
    xa = struct.unpack(fmt % (len(ba) // width), ba)
    xb = struct.unpack(fmt % (len(bb) // width), bb)
    mask = (1 << (bits - 1)) - 1
    if da in ("F32", "F16", "BF16", "F64"):
        exp_bits = {"F64": 11, "F32": 8, "F16": 5, "BF16": 8}[da]
        frac_bits = bits - 1 - exp_bits

    def is_nan(i):
        m = i & mask
        return (m >> frac_bits) == (1 << exp_bits) - 1 and (m & ((1 << frac_bits) - 1)) != 0

    def ordered(i):
        m = i & mask
        return -m if i < 0 else m
    edges = [1, 2, 4, 8, 16, 256, 65536]
    hist = [0] * 8
    for p, q in zip(xa, xb):
        if is_nan(p) or is_nan(q):
            hist[7] += 1
            continue
        d = abs(ordered(p) - ordered(q))
        hist[next((k for k, e in enumerate(edges) if d < e), 7)] += 1
    return hist


def kind_snapshot(b, d, tag):
    t = b.js("return document.querySelector('table.glance').innerText")
    os_name = d["host"]["os"].get("pretty_name")
    if os_name:
        check(os_name in t, "%s: the OS %r is not in the stack table" % (tag, os_name))
    if d["host"]["kernel"].get("release"):  # a --root or an image has none
        check(d["host"]["kernel"]["release"] in t, "%s: kernel release missing" % tag)
    for e in d["python"]["environments"]:
        if e.get("torch"):
            check("torch " + e["torch"]["version"] in t, "%s: torch %s missing" % (tag, e["torch"]["version"]))
    for s in d["stacks"]["installs"]:
        check(s["version"] in t, "%s: stack %s missing" % (tag, s))
    libs = b.js("return Array.from(document.querySelectorAll('section.libraries tbody tr')).map(r => r.cells[2].innerText)")
    want = [i["path"] for i in d["libraries"]["items"]]
    check(libs == want, "%s: library rows %s != %s" % (tag, libs[:3], want[:3]))
    gpu = [p["name"] for p in d["packages"]["items"] if p.get("gpu")]
    got = b.js("return Array.from(document.querySelectorAll('section.packages tbody tr')).map(r => r.cells[0].innerText)")
    check(got == gpu, "%s: GPU package rows %s != %s" % (tag, got[:3], gpu[:3]))


def table_rows(b, selector, i=0):
    """The body rows of the i-th table selector names: each a list of cells, a cell
    [text, data-v, the title of its code]."""
    return b.js("""const t = document.querySelectorAll(arguments[0])[arguments[1]];
        return t ? Array.from(t.querySelectorAll('tbody tr')).map(r =>
        Array.from(r.cells).map(c => [c.innerText.trim(), c.getAttribute('data-v'),
            c.querySelector('code') ? c.querySelector('code').getAttribute('title') : null])) : []""",
                selector, i)


def kind_image(b, d, tag):
    kind_snapshot(b, d, tag)
    img = d["image"]
    t = b.js("return document.querySelector('section.image table.image-glance').innerText")
    want = [img["reference"], img["form"], img["manifest_digest"], img["config_digest"], img["created"],
            img["platform"]["os"] + "/" + img["platform"]["architecture"], img["user"],
            " ".join(img["entrypoint"]), " ".join(img["cmd"])] + img["tags"]
    for w in want:
        check(w in t, "%s: %r is not in the image table" % (tag, w))
    tables = b.js("return Array.from(document.querySelectorAll('section.image table.sortable caption')).map(c => c.innerText)")
    check(len(tables) == 3, "%s: image tables %s" % (tag, tables))
    sel = "section.image table.sortable"
    labels = table_rows(b, sel, 0)
    check({r[0][0]: r[1][0] for r in labels} == img["labels"] and len(labels) == len(img["labels"]),
          "%s: labels %s != %s" % (tag, labels, img["labels"]))
    env = [[r[0][0], r[1][0]] for r in table_rows(b, sel, 1)]
    want = [[e["name"], "redacted" if e.get("redacted") else e["value"]] for e in img["env"]]
    check(env == want, "%s: image env %s != %s" % (tag, env, want))
    layers = table_rows(b, sel, 2)
    check(len(layers) == len(img["layers"]), "%s: %d layer rows" % (tag, len(layers)))
    for row, l in zip(layers, img["layers"]):
        got = [row[0][1], row[1][0], row[1][2], row[2][0], row[3][1], row[4][1], row[5][1], row[6][0]]
        want = [str(l["index"]), l["digest"][:19], l["digest"], l["media_type"], str(l["size"]),
                str(l["files"]), str(l["whiteouts"]), l["created_by"]]
        check(got == want, "%s: layer row %s != %s" % (tag, got, want))
    libs = table_rows(b, "section.libraries table")
    want = [str(i["layer"]) for i in d["libraries"]["items"]]
    check([r[5][1] for r in libs] == want, "%s: library layers %s != %s" % (tag, [r[5][1] for r in libs][:5], want[:5]))
    pk = table_rows(b, "section.packages table")
    want = [str(p["layer"]) for p in d["packages"]["items"] if p.get("gpu")]
    check([r[5][1] for r in pk] == want, "%s: package layers %s != %s" % (tag, [r[5][1] for r in pk][:5], want[:5]))
    # nothing of the document became markup: only the sorting script, no handlers
    n = b.js("return [document.querySelectorAll('script').length, document.querySelectorAll('[onerror],[onload],iframe,object,embed,img').length, window.__gv_pwned === undefined]")
    check(n == [1, 0, True], "%s: scripts, injected elements, not run: %s" % (tag, n))


def kind_results(b, d, tag):
    check_summary(b, d["summary"], tag)
    rows = rows_by_case(b)
    check(len(rows) == len(d["cases"]), "%s: %d case rows for %d cases" % (tag, len(rows), len(d["cases"])))
    for c in d["cases"]:
        r = rows.get(c["id"])
        if not r:
            check(False, "%s: no row for %s" % (tag, c["id"]))
            continue
        check(c["verdict"] in r["words"], "%s: %s verdict %s not shown" % (tag, c["id"], c["verdict"]))
        m = c.get("metrics") or {}
        check(num_eq(r["vals"][4], m.get("effective_bits")), "%s: %s effective bits %s != %s" %
              (tag, c["id"], r["vals"][4], m.get("effective_bits")))
        check(num_eq(r["vals"][5], m.get("err_over_bound")), "%s: %s error/bound" % (tag, c["id"]))
    failed = [c for c in d["cases"] if c["verdict"] == "fail"]
    descs = b.js("return Array.from(document.querySelectorAll('section.failed svg desc')).map(x => x.textContent)")
    check(len(descs) == len(failed), "%s: %d failure histograms for %d failed cases" % (tag, len(descs), len(failed)))
    for c, desc in zip(failed, descs):
        check(desc_counts(desc, "elements per ULP range") == c["metrics"]["ulp_histogram"],
              "%s: %s histogram %s != %s" % (tag, c["id"], desc, c["metrics"]["ulp_histogram"]))


def kind_compare(b, d, tag):
    check_summary(b, d["summary"], tag)
    rows = rows_by_case(b)
    check(len(rows) == len(d["cases"]), "%s: %d rows for %d cases" % (tag, len(rows), len(d["cases"])))
    for c in d["cases"]:
        r = rows.get(c["id"], {"words": [], "vals": [None] * 11})
        check(c["change"] in r["words"], "%s: %s change %s not shown" % (tag, c["id"], c["change"]))
        check(num_eq(r["vals"][4], c["before"].get("effective_bits")), "%s: %s bits before" % (tag, c["id"]))
        check(num_eq(r["vals"][5], c["after"].get("effective_bits")), "%s: %s bits after" % (tag, c["id"]))
        check(num_eq(r["vals"][6], c.get("delta_effective_bits")), "%s: %s delta bits" % (tag, c["id"]))
        el = c.get("elementwise") or {}
        check(num_eq(r["vals"][10], el.get("max_ulp")), "%s: %s max ULP %s != %s" %
              (tag, c["id"], r["vals"][10], el.get("max_ulp")))
    causes = b.js("return Array.from(document.querySelectorAll('section.causes tbody tr')).map(r => r.cells[1].innerText)")
    check(causes == [k["name"] for k in d["causes"]], "%s: causes %s" % (tag, causes[:4]))
    flagged = [c for c in d["cases"] if c["flagged"]]
    arts = b.js(r"""return Array.from(document.querySelectorAll('article.flagged')).map(a => ({
        id: a.getAttribute('data-case'),
        vals: Array.from(a.querySelectorAll('table.kv td')).map(c => c.getAttribute('data-v')),
        descs: Array.from(a.querySelectorAll('svg desc')).map(x => x.textContent)}));""")
    check([a["id"] for a in arts] == [c["id"] for c in flagged], "%s: flagged cases %s" % (tag, arts))
    for c, a in zip(flagged, arts):
        el = c.get("elementwise") or {}
        want = [c["before"].get("effective_bits"), c["after"].get("effective_bits"),
                c["before"].get("err_over_bound"), c["after"].get("err_over_bound"),
                c["before"].get("mean_signed_error"), c["after"].get("mean_signed_error"),
                c.get("delta_effective_bits"), el.get("count"), el.get("differing"), el.get("max_ulp")]
        check(len(a["vals"]) == len(want) and all(num_eq(g, w) for g, w in zip(a["vals"], want)),
              "%s: %s numbers %s, the document holds %s" % (tag, c["id"], a["vals"], want))
    if len(EXTRA) >= 2:
        ra, rb = (json.load(open(p)) for p in EXTRA[:2])
        ca = {c["id"]: c for c in ra["cases"]}
        cb = {c["id"]: c for c in rb["cases"]}
        for a in arts:
            check(len(a["descs"]) >= 1, "%s: %s has no error histogram" % (tag, a["id"]))
            if not a["descs"]:
                continue
            check(desc_counts(a["descs"][0], "before") == ca[a["id"]]["metrics"]["ulp_histogram"],
                  "%s: %s before histogram" % (tag, a["id"]))
            check(desc_counts(a["descs"][0], "after") == cb[a["id"]]["metrics"]["ulp_histogram"],
                  "%s: %s after histogram" % (tag, a["id"]))
            if len(EXTRA) >= 4:
                want = ulp_oracle(EXTRA[2], EXTRA[3], ca[a["id"]].get("output_tensor", a["id"]))
                check(len(a["descs"]) == 2, "%s: %s has no histogram of the saved outputs" % (tag, a["id"]))
                if want is not None and len(a["descs"]) == 2:
                    got = desc_counts(a["descs"][1], "elements per ULP distance between the two saved outputs")
                    check(got == want, "%s: %s saved-output histogram %s != %s (recomputed)" %
                          (tag, a["id"], got, want))
                    el = next(c for c in flagged if c["id"] == a["id"])["elementwise"]
                    check(sum(got) == el["count"], "%s: histogram total %d != elementwise count %d" %
                          (tag, sum(got), el["count"]))


def kind_doctor(b, d, tag):
    check_summary(b, {k: v for k, v in d["summary"].items() if k != "rules"}, tag)
    got = b.js(r"""return Array.from(document.querySelectorAll('article.finding')).map(a => ({
        rule: a.getAttribute('data-rule'), title: a.querySelector('.title').textContent,
        fix: (a.querySelector('pre.fix') || {}).textContent || '',
        ev: Array.from(a.querySelectorAll('table.evidence th')).map(t => t.textContent)}));""")
    check(len(got) == len(d["findings"]), "%s: %d findings shown for %d" % (tag, len(got), len(d["findings"])))
    for f, g in zip(d["findings"], got):
        check(g["rule"] == f["rule"] and g["title"] == f["title"], "%s: finding %s shown as %s" % (tag, f["rule"], g))
        for line in f["fix"]:
            check(line in g["fix"], "%s: fix %r of %s missing" % (tag, line, f["rule"]))
        check(g["ev"] == [e["path"] for e in f["evidence"]], "%s: evidence of %s" % (tag, f["rule"]))


def kind_verify(b, d, tag):
    keys = b.js("return Array.from(document.querySelectorAll('ul.summary li')).map(l => [l.getAttribute('data-key'), l.querySelector('.v').getAttribute('data-word')])")
    want = [["verification", "pass" if d["ok"] else "fail"],
            ["stack", "pass" if d["stack_matches"] else "fail"]]
    if "numerics" in d:
        want.append(["numerics", "fail" if d["numerics"]["degraded"] else "pass"])
    check(keys == want, "%s: verdicts %s != %s" % (tag, keys, want))
    rows = b.js("return Array.from(document.querySelectorAll('section.differences tbody tr')).map(r => Array.from(r.cells).map(c => c.innerText))")
    check(rows == [[c["layer"], c["kind"], c["subject"], c.get("before") or "(absent)", c.get("after") or "(absent)"]
                   for c in d["differences"]], "%s: differences %s != the document's" % (tag, rows[:3]))
    left = b.js("return Array.from(document.querySelectorAll('section.leftovers tbody tr')).map(r => r.cells[0].innerText)")
    check(left == [c["path"] for c in d["leftovers"]], "%s: leftovers %s" % (tag, left[:3]))
    if "numerics" in d:
        counts = b.js("return Array.from(document.querySelectorAll('section.numerics table.sortable')[0].querySelectorAll('tbody tr')).map(r => [r.cells[0].querySelector('.v').getAttribute('data-word'), r.cells[1].getAttribute('data-v')])")
        check(sorted(counts) == sorted([k, str(v)] for k, v in d["numerics"]["counts"].items()),
              "%s: counts %s != %s" % (tag, counts, d["numerics"]["counts"]))
        flagged = b.js("return Array.from(document.querySelectorAll('section.numerics table.sortable')).slice(1).flatMap(t => Array.from(t.querySelectorAll('tbody tr')).map(r => r.cells[0].innerText))")
        check(flagged == [c["id"] for c in d["numerics"]["flagged"]], "%s: flagged %s" % (tag, flagged))


def kind_diff(b, d, tag):
    got = b.js("return Array.from(document.querySelectorAll('section.layer tbody tr')).map(r => r.cells[1].innerText)")
    order = ["driver", "runtime", "math", "framework", "loader", "packages"]
    want = [c["subject"] for layer in order for c in d["changes"] if c["layer"] == layer]
    check(got == want, "%s: changes %s != %s" % (tag, got[:4], want[:4]))


def kind_matrix(b, d, tag):
    got = b.js(r"""return Array.from(document.querySelectorAll('section.matrix tbody tr')).map(r => ({
        gpu: r.cells[0].innerText, vals: Array.from(r.cells).map(c => c.getAttribute('data-v')),
        text: Array.from(r.cells).map(c => c.textContent),
        cells: r.querySelectorAll('g.cell').length, fails: r.querySelectorAll('g.cell.fail').length,
        tips: Array.from(r.querySelectorAll('g.cell title')).map(t => t.textContent)}));""")
    check(len(got) == len(d["rows"]), "%s: %d rows for %d" % (tag, len(got), len(d["rows"])))
    for row, g in zip(d["rows"], got):
        check(g["gpu"] == row["gpu_model"], "%s: GPU %s != %s" % (tag, g["gpu"], row["gpu_model"]))
        for col, key in ((7, "runs"), (8, "machines"), (9, "passes"), (10, "failures")):
            check(num_eq(g["vals"][col], row[key]), "%s: %s %s != %s" % (tag, key, g["vals"][col], row[key]))
        check(num_eq(g["vals"][14], row["worst"]["bits_lost"]), "%s: bits lost" % tag)
        img = row.get("image") or {}
        digest = img.get("manifest_digest") or img.get("config_digest")
        check((digest[:19] in g["text"][6] and (img.get("tag") or "") in g["text"][6]) if digest
              else g["text"][6] == "—", "%s: image shown as %r, the row holds %r" % (tag, g["text"][6], img))
        for col, key in ((1, "gpu_arch"), (2, "kernel"), (3, "driver"), (5, "torch")):
            check(g["text"][col] == (row[key] or "—"), "%s: %s shown as %r, the row holds %r" %
                  (tag, key, g["text"][col], row[key]))
        for key in ("rocm", "cuda"):
            check(row[key] is None or row[key] in g["text"][4], "%s: %s %s missing" % (tag, key, row[key]))
        check(g["cells"] == len(row["timeline"]), "%s: %d timeline cells for %d" % (tag, g["cells"], len(row["timeline"])))
        check(g["fails"] == sum(1 for t in row["timeline"] if t["verdict"] == "fail"), "%s: failed cells" % tag)
        for t, tip in zip(row["timeline"], g["tips"]):
            check(t["time"] in tip and t["machine"] in tip and ("run %d" % t["run"]) in tip,
                  "%s: timeline tip %r for %s" % (tag, tip, t))


def module_text(m):
    """A module path as the pages show it: the model's own forward has the empty path."""
    return "the model itself" if m == "" else (m or "—")


def shape_text(shape):
    return "scalar" if not shape else "×".join(str(n) for n in shape)


def output_rows(b):
    return b.js(r"""return Array.from(document.querySelectorAll('section.outputs table:not(.call) tbody tr')).map(r => ({
        cells: Array.from(r.cells).map(c => c.innerText), vals: Array.from(r.cells).map(c => c.getAttribute('data-v')),
        words: Array.from(r.querySelectorAll('.v')).map(v => v.getAttribute('data-word')),
        tips: Array.from(r.querySelectorAll('span[title]')).map(s => s.getAttribute('title'))}));""")


def check_outputs_against(b, outs, tag):
    """The page's table of the model's outputs against A's (a comparison's or a bisection's)."""
    got = output_rows(b)
    check(len(got) == len(outs), "%s: %d output rows for %d" % (tag, len(got), len(outs)))
    for i, (o, g) in enumerate(zip(outs, got)):
        check(g["cells"][0] == o.get("name", "#%d" % i) and o["status"] in g["words"]
              and g["cells"][2] == o["dtype"] and g["cells"][3] == shape_text(o["shape"])
              and num_eq(g["vals"][4], o["units"]) and num_eq(g["vals"][5], o.get("differing")),
              "%s: output %s shown as %s" % (tag, o, g))


def kind_capture_compare(b, d, tag):
    check_outputs_against(b, d["outputs"], tag)
    got = b.js(r"""return Array.from(document.querySelectorAll('section.ops tbody tr')).map(r => ({
        vals: Array.from(r.cells).map(c => c.getAttribute('data-v')),
        words: Array.from(r.querySelectorAll('.v')).map(v => v.getAttribute('data-word')), name: r.cells[2].innerText,
        module: r.cells[3].innerText}));""")
    check(len(got) == len(d["ops"]), "%s: %d op rows for %d" % (tag, len(got), len(d["ops"])))
    for o, g in zip(d["ops"], got):
        check(num_eq(g["vals"][0], o["a"]) and num_eq(g["vals"][5], o["units"]) and o["status"] in g["words"]
              and g["name"] == o["name"] and g["module"] == module_text(o["module"]), "%s: op %s shown as %s" % (tag, o, g))
    fd = d["summary"]["first_difference"]
    if fd:
        marks = b.js("return Array.from(document.querySelectorAll('g.mark title')).map(t => t.textContent)")
        check(any(("op %d" % fd["op"]) in m and fd["name"] in m for m in marks),
              "%s: first difference not marked: %s" % (tag, marks))


def kind_bisect(b, d, tag):
    check_summary(b, d["summary"], tag)
    check_outputs_against(b, d.get("outputs", []), tag)
    if "outputs_status" in d:
        shown = b.js(r"""const r = Array.from(document.querySelectorAll('section.model-run table.kv tr'))
            .find(r => r.cells[0].innerText == 'model outputs here against A');
            return r ? r.querySelector('.v').getAttribute('data-word') : null""")
        check(shown == d["outputs_status"], "%s: the outputs' verdict shown as %r" % (tag, shown))
    got = b.js(r"""return Array.from(document.querySelectorAll('section.culprits tbody tr')).map(r => ({
        vals: Array.from(r.cells).map(c => c.getAttribute('data-v')), name: r.cells[1].innerText,
        module: r.cells[2].innerText}));""")
    want = [(c, o) for c in d["culprits"] for o in c["outputs"]]
    check(len(got) == len(want), "%s: %d culprit rows for %d" % (tag, len(got), len(want)))
    for (c, o), g in zip(want, got):
        check(num_eq(g["vals"][0], c["op"]) and g["name"] == c["name"] and g["module"] == module_text(c["module"])
              and num_eq(g["vals"][4], o["error_a_units"]) and num_eq(g["vals"][5], o["error_b_units"]),
              "%s: culprit %s shown as %s" % (tag, c["op"], g))
    marks = b.js("return Array.from(document.querySelectorAll('g.mark title')).map(t => t.textContent)")
    for c in d["culprits"]:
        check(any(m.startswith("✗ culprit: op %d %s (%s)" % (c["op"], c["name"], module_text(c["module"]))) for m in marks),
              "%s: culprit op %d not marked on the curve: %s" % (tag, c["op"], marks))
    for c in d.get("call_changes", []):
        check(any(m.startswith("⚑ call change: op %d %s" % (c["op_a"], c["name"])) for m in marks),
              "%s: call change op %d not marked: %s" % (tag, c["op_a"], marks))
    calls = b.js("return Array.from(document.querySelectorAll('section.calls tbody tr')).map(r => [r.cells[4].innerText, r.cells[5].innerText])")
    check(calls == [[c["call_a"], c["call_b"]] for c in d.get("call_changes", [])], "%s: call changes %s" % (tag, calls))
    rows = b.js("return document.querySelectorAll('section.ops tbody tr').length")
    check(rows == sum(max(1, len(o.get("outputs") or [])) for o in d["ops"]), "%s: op rows" % tag)
    if d["culprits"] or d.get("call_changes"):
        check(len(b.js("return Array.from(document.querySelectorAll('svg[role=img] polyline'))")) >= 2,
              "%s: no error curve" % tag)


def kind_capture(b, d, tag):
    rows = b.js("return Array.from(document.querySelectorAll('section.ops tbody tr')).map(r => [r.cells[1].innerText, r.cells[2].innerText])")
    check(rows == [[o["name"], module_text(o.get("module"))] for o in d["ops"]], "%s: op rows %s" % (tag, rows[:3]))
    h = d["header"]
    tensors = {t["id"]: t for t in d["tensors"]}
    got = output_rows(b)
    check(len(got) == len(h["outputs"]), "%s: %d output rows for %d" % (tag, len(got), len(h["outputs"])))
    for i, (o, g) in enumerate(zip(h["outputs"], got)):
        t = tensors[o["$t"]]
        check(g["cells"][0] == o.get("name", "#%d" % i) and num_eq(g["vals"][1], o["$t"])
              and g["cells"][2] == t["dtype"] and g["cells"][3] == shape_text(t["shape"])
              and g["tips"] == [t["sha256"]] and g["cells"][4] == t["sha256"][:16] + "…",
              "%s: output %s shown as %s" % (tag, o, g))
    if "call" in h:
        shown = b.js("const c = document.querySelector('section.outputs table.call td'); return c ? c.innerText : null")
        check(shown is not None and json.loads(shown) == h["call"], "%s: the call shown as %r" % (tag, shown))


def bench_rows(b, section):
    return b.js(r"""
const out = {};
document.querySelectorAll('section.%s tr[data-id]').forEach(r => {
  out[r.getAttribute('data-id')] = {
    words: Array.from(r.querySelectorAll('.v')).map(v => v.getAttribute('data-word')),
    vals: Array.from(r.cells).map(c => c.getAttribute('data-v')),
    cells: Array.from(r.cells).map(c => c.innerText)};
});
return out;
""" % section)


def kind_bench(b, d, tag):
    rows = bench_rows(b, "results")
    check(len(rows) == len(d["results"]), "%s: %d result rows for %d" % (tag, len(rows), len(d["results"])))
    for r in d["results"]:
        g = rows.get(r["id"])
        if not g:
            check(False, "%s: no row for %s" % (tag, r["id"]))
            continue
        check(r["status"] in g["words"], "%s: %s status %s not shown" % (tag, r["id"], r["status"]))
        check(num_eq(g["vals"][2], r.get("value")), "%s: %s value %s != %s" % (tag, r["id"], g["vals"][2], r.get("value")))
        check(num_eq(g["vals"][5], r.get("min")) and num_eq(g["vals"][6], r.get("max")), "%s: %s min/max" % (tag, r["id"]))
        if "spread" in r:
            shown = float(g["cells"][3].replace("±", "").replace("%", "").strip())
            check(abs(shown - 100 * r["spread"]) <= 0.006 * 100 * r["spread"] + 1e-9,
                  "%s: %s spread %s != %s" % (tag, r["id"], g["cells"][3], r["spread"]))
        check(g["cells"][4] == r["unit"], "%s: %s unit" % (tag, r["id"]))
    best = b.js("return Array.from(document.querySelectorAll('section.best tr[data-dtype]')).map(r => [r.getAttribute('data-dtype'), r.cells[1].getAttribute('data-v')])")
    check(len(best) == len(d["best"]), "%s: %d best rows for %d" % (tag, len(best), len(d["best"])))
    for x, g in zip(d["best"], best):
        check(g[0] == x["dtype"] and num_eq(g[1], x["tflops"]), "%s: best %s shown as %s" % (tag, x, g))
    if d["best"]:
        bars = b.js("return document.querySelectorAll('section.best svg rect.bar').length")
        peaks = [r.get("peak") for x in d["best"] for r in d["results"] if r["id"] == x["id"]]
        check(bars == len(d["best"]) + sum(1 for p in peaks if p), "%s: %d bars" % (tag, bars))
        desc = b.js("return document.querySelector('section.best svg desc').textContent")
        for x in d["best"]:
            check(x["dtype"] in desc, "%s: %s not described in the figure" % (tag, x["dtype"]))
    text = b.js("return document.body.innerText")
    for v in d.get("verdicts", []):
        check(v["text"] in text, "%s: verdict %r not shown" % (tag, v["text"]))
    warns = b.js("return Array.from(document.querySelectorAll('p.topo-warning')).map(p => p.innerText)")
    want = d.get("topology", {}).get("warnings", [])
    check([w.lstrip("! ").strip() for w in warns] == want, "%s: topology warnings %s != %s" % (tag, warns, want))
    c = d.get("collectives") or {}
    for k in ("skipped", "error", "version"):
        if isinstance(c.get(k), str):
            check(c[k] in text, "%s: collectives %s %r not shown" % (tag, k, c[k]))


def kind_bench_compare(b, d, tag):
    check_summary(b, d["summary"], tag)
    rows = bench_rows(b, "results")
    check(len(rows) == len(d["results"]), "%s: %d rows for %d" % (tag, len(rows), len(d["results"])))
    for r in d["results"]:
        g = rows.get(r["id"], {"words": [], "vals": [None] * 8})
        check(r["change"] in g["words"], "%s: %s change %s not shown" % (tag, r["id"], r["change"]))
        for col, side in ((2, "before"), (3, "after")):
            s = r[side]
            if s and s["status"] == "ok":
                check(num_eq(g["vals"][col], s.get("value")), "%s: %s %s value" % (tag, r["id"], side))
            elif s:
                check(s["status"] in g["words"], "%s: %s %s status" % (tag, r["id"], side))
        check(num_eq(g["vals"][5], r.get("ratio")) and num_eq(g["vals"][6], r.get("noise")),
              "%s: %s ratio/noise %s" % (tag, r["id"], g["vals"]))
    items = b.js("return Array.from(document.querySelectorAll('section.causes ol li')).map(l => l.innerText)")
    check(len(items) == len(d["causes"]), "%s: %d causes for %d" % (tag, len(items), len(d["causes"])))
    for c, t in zip(d["causes"], items):
        check(c["name"] in t and (c.get("after") or "(absent)") in t, "%s: cause %s shown as %r" % (tag, c["name"], t))
        if c.get("touched_results"):
            check("touches: " + c["touched_results"] in t, "%s: cause %s touches" % (tag, c["name"]))
    text = b.js("return document.body.innerText")
    for n in d["notes"]:
        check(n in text, "%s: note %r not shown" % (tag, n))


FLEET_JS = r"""
const val = c => c ? (c.getAttribute('data-v') !== null ? c.getAttribute('data-v') : c.textContent) : null;
return {
  verdict: (document.querySelector('p.verdict b') || {}).textContent || '',
  groups: Array.from(document.querySelectorAll('section.group')).map(s => ({
    kv: Object.fromEntries(Array.from(s.querySelectorAll(':scope > table.kv tr')).map(r => [r.cells[0].textContent, val(r.cells[1])])),
    odd: Array.from(s.querySelectorAll('article.odd')).map(a => ({
      node: a.querySelector('code.node').textContent, rank: a.querySelector('.rank').textContent,
      words: Array.from(a.querySelectorAll('h4 .v')).map(v => v.getAttribute('data-word')),
      reason: a.querySelector('.reason b') ? a.querySelector('.reason b').textContent : null,
      diff: a.querySelector('pre.diff') ? a.querySelector('pre.diff').textContent : null,
      cases: Array.from(a.querySelectorAll('tr[data-case]')).map(r => Array.from(r.cells).slice(0, 9).map(val)),
      bench: Array.from(a.querySelectorAll('tr.warn')).map(r => Array.from(r.cells).map(val))})),
    votes: Array.from(s.querySelectorAll('tr.vote')).map(r => Array.from(r.cells).map(val)),
    split: Array.from(s.querySelectorAll('tr.split')).map(r => Array.from(r.cells).map(val))})),
  missing: Array.from(document.querySelectorAll('section.missing .rank')).map(r => r.textContent),
};
"""


def kind_fleet(b, d, tag):
    """Every odd node of every group with its classes and evidence, the vote per case,
    the split cases, the missing ranks and the counts: as the fleet document holds them."""
    sm = d["summary"]
    check_summary(b, dict(sm, nodes=d["nodes"], ranks_expected=d["ranks_expected"]), tag)
    g = b.js(FLEET_JS)
    # in fleet compare's own words (src/cli/fleet_out.c): odd and missing ranks of those expected
    bad = sm["odd"] + sm["missing"]
    want = ("no odd node of %d" % d["ranks_expected"] if bad == 0 else
            "%d odd node%s of %d" % (bad, "" if bad == 1 else "s", d["ranks_expected"]))
    check(g["verdict"].startswith(want), "%s: verdict %r, want %r" % (tag, g["verdict"], want))
    check(len(g["groups"]) == len(d["groups"]), "%s: %d groups for %d" % (tag, len(g["groups"]), len(d["groups"])))
    odd_shown = 0
    for grp, got in zip(d["groups"], g["groups"]):
        key = grp["key"]
        check(got["kv"].get("GPU model") == (key.get("model") or "—") and
              got["kv"].get("driver") == (key.get("driver") or "—") and
              num_eq(got["kv"].get("compute units"), key.get("compute_units")) and
              num_eq(got["kv"].get("nodes"), grp["nodes"]) and
              got["kv"].get("majority stack digest") == (grp.get("stack_digest") or "—"),
              "%s: group %s shown as %s" % (tag, key, got["kv"]))
        check(len(got["odd"]) == len(grp["odd"]), "%s: %d odd nodes shown for %d in %s" %
              (tag, len(got["odd"]), len(grp["odd"]), key))
        for o, s in zip(grp["odd"], got["odd"]):
            odd_shown += 1
            check(s["node"] == o["node"] and s["rank"] == str(o["rank"]), "%s: odd node %s shown as %s" % (tag, o["node"], s))
            check(s["words"] == [o["class"]] + [c for c in o["classes"] if c != o["class"]],
                  "%s: classes of %s shown as %s" % (tag, o["node"], s["words"]))
            ev = o["evidence"]
            check(s["reason"] == ev.get("reason"), "%s: reason of %s: %r" % (tag, o["node"], s["reason"]))
            check(s["diff"] == ("".join(l + "\n" for l in ev["diff"]) if "diff" in ev else None),
                  "%s: diff of %s: %r" % (tag, o["node"], s["diff"]))
            cases = ev.get("cases", [])
            for c, r in zip(cases, s["cases"]):
                check(r[:3] == [c["id"], c.get("digest") or "—", c.get("majority_digest") or "—"] and
                      r[4] == (c.get("repeats_differing") or "—") and
                      all(num_eq(r[i], c.get(k)) for i, k in ((3, "nodes_agreeing"), (5, "elements_differing"),
                          (6, "max_bits"), (7, "effective_bits"), (8, "majority_effective_bits"))),
                      "%s: case of %s shown as %s, the document holds %s" % (tag, o["node"], r, c))
            check(len(cases) == len(s["cases"]), "%s: %d cases of %s for %d" % (tag, len(s["cases"]), o["node"], len(cases)))
            bench = ev.get("bench", [])
            check(len(s["bench"]) == len(bench), "%s: bench figures of %s" % (tag, o["node"]))
            for f, r in zip(bench, s["bench"]):
                check(r[0] == f["id"] and all(num_eq(r[i], f.get(k)) for i, k in
                      ((2, "value"), (3, "group_median"), (5, "limit"))), "%s: bench %s of %s" % (tag, r, o["node"]))
        check([v[0] for v in got["votes"]] == [c["id"] for c in grp["cases"]] and
              all(num_eq(v[1], c["voters"]) and num_eq(v[3], c.get("nodes_agreeing")) and
                  v[2] == (c.get("majority_digest") or "—") for v, c in zip(got["votes"], grp["cases"])),
              "%s: votes %s" % (tag, got["votes"][:2]))
        check([v[0] for v in got["split"]] == [c["id"] for c in grp["split"]] and
              all(num_eq(v[2], c["digests"]) and num_eq(v[3], c["largest"]) for v, c in zip(got["split"], grp["split"])),
              "%s: split cases %s" % (tag, got["split"]))
    check(odd_shown == sm["odd"], "%s: %d odd nodes shown, the summary counts %d" % (tag, odd_shown, sm["odd"]))
    check(g["missing"] == [str(r) for r in d["missing"]], "%s: missing ranks %s != %s" % (tag, g["missing"], d["missing"]))


KINDS = {"snapshot": kind_snapshot, "image": kind_image, "results": kind_results, "compare": kind_compare, "doctor": kind_doctor,
         "diff": kind_diff, "matrix": kind_matrix, "capture-compare": kind_capture_compare,
         "bisect": kind_bisect, "capture": kind_capture, "bench": kind_bench,
         "bench-compare": kind_bench_compare, "verify": kind_verify, "fleet": kind_fleet}


def main():
    with Browser(OUT) as b:
        url = b.open(PAGE)
        info = common(b, url, True, KIND)
        if KIND in KINDS:
            KINDS[KIND](b, doc, KIND)
        if KIND == "hostile":
            pwned = b.js("return [window.__gv_pwned === undefined, document.querySelectorAll('[onerror],[onload],iframe,object,embed').length, document.querySelectorAll('script').length]")
            check(pwned[0], "hostile: an injected script ran")
            check(pwned[1] == 0, "hostile: injected elements with handlers exist")
            check(pwned[2] == 1, "hostile: %d script elements (only the sorting script may be one)" % pwned[2])
            svgs = b.js("return Array.from(document.querySelectorAll('svg')).map(s => s.querySelectorAll('script,foreignObject,iframe').length).reduce((a, b) => a + b, 0)")
            check(svgs == 0, "hostile: elements injected into a figure")
            text = b.js("return document.body.textContent")
            for s in json.load(open(EXTRA[0])):  # the hostile strings, shown as text
                check(s in text, "hostile: %r is not shown as text" % s)
        sort_works(b, KIND)
        png = os.path.join(OUT, NAME + ".png")
        b.cdp("Emulation.setDeviceMetricsOverride", {"width": 1280, "height": 900, "deviceScaleFactor": 1,
                                                      "mobile": False})
        b.screenshot(png)
        first_screen(b, KIND + " (1280 px)", 900, [doc] if KIND not in ("multi", "hostile") else None)
        b.cdp("Emulation.clearDeviceMetricsOverride")
        check(png_not_blank(png), "%s: the screenshot is blank" % KIND)
        print_fits(b, KIND)
    with Browser(OUT, js=False) as b:
        url = b.open(PAGE)
        off = common(b, url, False, KIND + " (JavaScript off)")
        check(off["text"] == info["text"] and len(off["figs"]) == len(info["figs"]),
              "%s: the page differs with JavaScript off (%d/%d characters, %d/%d figures)" %
              (KIND, off["text"], info["text"], len(off["figs"]), len(info["figs"])))
        if KIND in KINDS:
            KINDS[KIND](b, doc, KIND + " (JavaScript off)")
        if KIND == "hostile":
            check(b.js("return window.__gv_pwned === undefined"), "hostile: an injected script ran (JS off)")
    if failures:
        for f in failures:
            print("FAIL:", f, file=sys.stderr)
        sys.exit(1)
    print("%s: %d figures, %d characters; screenshot %s" % (KIND, len(info["figs"]), info["text"], png))


main()
