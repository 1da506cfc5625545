/* gpuvet report: the renderer table (schema -> renderer), loading inputs,
 * and the page around the sections (style, sorting script, contents). */
#include "report/report.h"

#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/json.h"
#include "base/sha256.h"
#include "capture/gvcap.h"
#include "report/page.h"
#include "report/verdict.h"

/* One entry per document kind. A new kind (probe fingerprints, bench
 * results) is one line here and one gv_render_NAME. */
static const struct renderer {
    const char *schema;
    int version;
    const char *title;
    gv_render_fn render;
    const char *kind; /* the document's "kind", or NULL: any */
} renderers[] = {
    {"gpuvet.compare", 1, "Comparison of two benchmark runs", gv_render_bench_compare, "bench"},
    {"gpuvet.snapshot", 1, "Snapshot", gv_render_snapshot, NULL},
    {"gpuvet.results", 1, "Numerics check", gv_render_results, NULL},
    {"gpuvet.compare", 1, "Comparison of two checks", gv_render_compare, NULL},
    {"gpuvet.diff", 1, "What changed between two snapshots", gv_render_diff, NULL},
    {"gpuvet.doctor", 1, "Doctor", gv_render_doctor, NULL},
    {"gpuvet.capture", 1, "Model capture", gv_render_capture, NULL},
    {"gpuvet.capture-compare", 1, "Comparison of two model captures", gv_render_capture_compare, NULL},
    {"gpuvet.bisect", 1, "Bisect of a model capture", gv_render_bisect, NULL},
    {"gpuvet.matrix", 1, "Version matrix", gv_render_matrix, NULL},
    {"gpuvet.probe", 1, "GEMM route fingerprint", gv_render_probe, NULL},
    {"gpuvet.bench", 1, "Benchmarks", gv_render_bench, NULL},
    {"gpuvet.verify", 1, "Rollback verification", gv_render_verify, NULL},
    {"gpuvet.fleet", 1, "Fleet comparison", gv_render_fleet, NULL},
    {"gpuvet.fleet-history", 1, "The fleet over time", gv_render_fleet_history, NULL},
};
#define NRENDERERS (sizeof renderers / sizeof renderers[0])

static const struct renderer *find(const json_t *doc)
{
    const char *schema = gv_jstr(doc, "schema"), *kind = gv_jstr(doc, "kind");
    for (size_t i = 0; schema && i < NRENDERERS; i++)
        if (!strcmp(renderers[i].schema, schema) &&
            (!renderers[i].kind || (kind && !strcmp(renderers[i].kind, kind))))
            return &renderers[i];
    return NULL;
}

int gv_report_check(const char *path, const json_t *doc, struct gv_err *err)
{
    if (!json_is_object(doc))
        return gv_err_set(err, GV_E_SCHEMA, "%s: not a gpuvet document (not a JSON object)", path);
    const json_t *js = json_object_get(doc, "schema");
    if (!json_is_string(js))
        return gv_err_set(err, GV_E_SCHEMA, "%s: not a gpuvet document (no \"schema\" string)", path);
    const struct renderer *r = find(doc);
    if (!r) {
        struct gv_buf names = {0};
        gv_report_schemas(&names);
        gv_err_set(err, GV_E_SCHEMA, "%s: schema \"%.200s\" is not one gpuvet report renders (%s)", path,
                   json_string_value(js), names.data ? names.data : "");
        gv_buf_free(&names);
        return GV_E_SCHEMA;
    }
    return gv_json_check_schema(doc, r->schema, r->version, path, err);
}

void gv_report_schemas(struct gv_buf *out)
{
    for (size_t i = 0, k = 0; i < NRENDERERS; i++)
        if (!renderers[i].kind) /* a kind of a schema listed on its own */
            gv_buf_printf(out, "%s%s v%d", k++ ? ", " : "", renderers[i].schema,
                          renderers[i].version);
}

static int read_head(const char *path, unsigned char *head, size_t n)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return -1;
    struct stat st;
    ssize_t got = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ? read(fd, head, n) : -1;
    close(fd);
    return got == (ssize_t)n ? 0 : -1;
}

int gv_report_is_sqlite(const char *path)
{
    unsigned char head[16];
    return read_head(path, head, sizeof head) == 0 && !memcmp(head, "SQLite format 3", 16);
}

int gv_report_load(const char *path, json_t **doc, struct gv_err *err)
{
    return gv_cap_load_document(path, GV_REPORT_MAX_JSON, doc, err);
}

/* ---------- the page ---------- */

static const char style[] =
    "<style>\n"
    ":root{--good:#1a7f37;--bad:#c62828;--warn:#9a6700;--na:#57606a;--s0:#1f5fa8;--s1:#d26e00;--s2:#2e7d32}\n"
    "body{font:14px/1.45 system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;margin:0 auto;max-width:1100px;"
    "padding:0 16px 48px;color:#1f2328;background:#fff}\n"
    "h1{font-size:1.6em;margin:.8em 0 .2em}h2{font-size:1.3em;border-bottom:2px solid #d0d7de;padding-bottom:.2em;"
    "margin-top:1.6em}h3{font-size:1.08em;margin:1.2em 0 .4em}\n"
    "section.doc{margin-top:1em}.src{color:var(--na);font-size:.9em}\n"
    "p.verdict{border:1px solid #d0d7de;border-left:6px solid var(--na);padding:6px 10px;margin:.5em 0;"
    "overflow-wrap:anywhere}p.verdict.v-bad{border-left-color:var(--bad);color:inherit}"
    "p.verdict.v-good{border-left-color:var(--good);color:inherit}p.verdict.v-na{color:inherit}"
    "p.verdict .exit{color:var(--na)}\n"
    "table{border-collapse:collapse;margin:.4em 0 1em;width:100%;font-size:.92em}\n"
    "th,td{border:1px solid #d0d7de;padding:3px 6px;text-align:left;vertical-align:top;overflow-wrap:break-word}\n"
    "td code,td.long{overflow-wrap:anywhere}section.matrix table{font-size:.85em}\n"
    "th{background:#f6f8fa}td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}\n"
    "table.kv th{width:24%;font-weight:600}caption{text-align:left;font-weight:600;padding:.2em 0}\n"
    "table.sortable th{cursor:pointer}table.sortable th[aria-sort=ascending]::after{content:' \\25B2'}"
    "table.sortable th[aria-sort=descending]::after{content:' \\25BC'}\n"
    "code,pre{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.92em}\n"
    "pre{background:#f6f8fa;padding:6px 8px;white-space:pre-wrap;overflow-wrap:anywhere;margin:.2em 0}\n"
    ".na{color:var(--na)}.v{font-weight:600;white-space:nowrap}.v-good{color:var(--good)}.v-bad{color:var(--bad)}"
    ".v-warn{color:var(--warn)}.v-na{color:var(--na)}p.v{white-space:normal;overflow-wrap:anywhere}\n"
    "tr.bad td:first-child{border-left:4px solid var(--bad)}tr.good td:first-child{border-left:4px solid var(--good)}"
    "tr.warn td:first-child{border-left:4px solid var(--warn)}\n"
    ".finding{border:1px solid #d0d7de;border-left:6px solid var(--na);padding:6px 10px;margin:.6em 0}"
    ".finding.sev-error{border-left-color:var(--bad)}.finding.sev-warning{border-left-color:var(--warn)}\n"
    ".note{color:var(--na);font-style:italic}.summary{display:flex;flex-wrap:wrap;gap:6px;margin:.5em 0;padding:0;"
    "list-style:none}.summary li{border:1px solid #d0d7de;border-radius:4px;padding:2px 8px}\n"
    "figure.fig{margin:.6em 0 1.2em;break-inside:avoid;max-width:760px}"
    ".figs{display:flex;flex-wrap:wrap;gap:0 16px}.figs figure.fig{flex:1 1 360px;max-width:540px}"
    "article.flagged{border-top:1px solid #d0d7de;margin-top:1em}article.flagged h4{margin:.6em 0 .3em}"
    ".flagged table.kv{width:auto;min-width:50%}figcaption{font-size:.9em;color:var(--na)}\n"
    "svg text{font:11px system-ui,sans-serif;fill:#1f2328}svg .tick,svg .cat{fill:#57606a}svg .val{font-size:9px}\n"
    "svg .grid{stroke:#e5e8eb}svg .axisline{stroke:#57606a}svg .bar.s0,svg rect.s0{fill:var(--s0)}"
    "svg .bar.s1,svg rect.s1{fill:url(#gv-hatch);stroke:var(--s1)}svg .bar.s2,svg rect.s2{fill:var(--s2)}\n"
    "svg .hatch-bg{fill:#fbe3c8}svg .hatch{stroke:var(--s1);stroke-width:3}\n"
    "svg .line{fill:none;stroke-width:1.2}svg .line.s0{stroke:var(--s0)}svg .line.s1{stroke:var(--s1);"
    "stroke-dasharray:4 2}svg .line.s2{stroke:var(--s2);stroke-dasharray:1 2}\n"
    "svg use.s0{fill:var(--s0)}svg use.s1{fill:var(--s1)}svg use.s2{fill:var(--s2)}\n"
    "svg .mark line{stroke:var(--bad);stroke-width:1.5}svg .mark.other line{stroke:var(--warn);"
    "stroke-dasharray:5 3}svg .mark text{fill:var(--bad);font-weight:600}svg .mark.other text{fill:var(--warn)}\n"
    "svg .cell.pass rect{fill:var(--good)}svg .cell.fail rect{fill:var(--bad)}svg .cell.unknown rect{fill:#aaa}"
    "svg .cell .x{stroke:#fff;stroke-width:1.4}\n"
    "td.strip{min-width:160px}figure.fig.strip{margin:0;max-width:none}\n"
    "nav.toc ol{margin:.2em 0 .8em}.pair{display:flex;gap:0 16px;align-items:flex-start}"
    ".pair>section{flex:1 1 0;min-width:0}.pair table.kv th{width:34%}\n"
    "@media print{@page{size:A4;margin:14mm 12mm}body{max-width:none;padding:0;font-size:10.5px}"
    "table{font-size:.9em;page-break-inside:auto}tr,figure,.finding{break-inside:avoid}"
    "thead{display:table-header-group}h2,h3{break-after:avoid}nav.toc{display:none}"
    "th,td{padding:2px 4px}td{overflow-wrap:anywhere}a{color:inherit;text-decoration:none}section.matrix table{font-size:.72em}"
    "figure.fig.strip svg{width:50%;height:auto}td.strip{min-width:0}.pair{display:block}}\n"
    "</style>\n";

/* Sorting only; the page is complete without it. The policy allows exactly
 * these bytes (between <script> and </script>) by their sha256 (csp_hash). */
static const char script[] =
    "\n"
    "(function(){\n"
    "function key(td,num){if(!td)return num?NaN:'';if(num){var v=td.getAttribute('data-v');"
    "if(v==='inf')return Infinity;if(v==='-inf')return -Infinity;var f=parseFloat(v);return f;}"
    "return td.textContent;}\n"
    "function sort(table,th,col){var num=th.classList.contains('num');var dir=th.getAttribute('aria-sort')"
    "==='ascending'?-1:1;var body=table.tBodies[0];if(!body)return;var rows=Array.prototype.slice.call(body.rows);"
    "rows.forEach(function(r,i){r._i=i;});rows.sort(function(a,b){var x=key(a.cells[col],num),y=key(b.cells[col],num);"
    "if(num){var nx=isNaN(x),ny=isNaN(y);if(nx||ny)return nx===ny?a._i-b._i:(nx?1:-1);"
    "return x===y?a._i-b._i:(x<y?-dir:dir);}var c=x.localeCompare(y);return c?c*dir:a._i-b._i;});"
    "rows.forEach(function(r){body.appendChild(r);});"
    "Array.prototype.forEach.call(th.parentNode.cells,function(h){h.removeAttribute('aria-sort');});"
    "th.setAttribute('aria-sort',dir===1?'ascending':'descending');}\n"
    "Array.prototype.forEach.call(document.querySelectorAll('table.sortable'),function(t){"
    "if(!t.tHead)return;Array.prototype.forEach.call(t.tHead.rows[0].cells,function(th,col){"
    "th.tabIndex=0;th.title='sort by this column';"
    "th.addEventListener('click',function(){sort(t,th,col);});"
    "th.addEventListener('keydown',function(e){if(e.key==='Enter'||e.key===' '){e.preventDefault();sort(t,th,col);}});"
    "});});\n"
    "})();\n";

/* 'sha256-BASE64' of the script's exact bytes, for script-src. */
static void csp_hash(char out[64])
{
    static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    struct gv_sha256 s;
    uint8_t d[33] = {0};
    gv_sha256_init(&s);
    gv_sha256_update(&s, script, sizeof script - 1);
    gv_sha256_final(&s, d);
    char *o = out + sprintf(out, "'sha256-");
    for (int i = 0; i < 33; i += 3) { /* 32 bytes: 10 groups of 3, then 2 bytes and one '=' */
        uint32_t v = (uint32_t)d[i] << 16 | (uint32_t)d[i + 1] << 8 | d[i + 2];
        *o++ = b64[v >> 18 & 63];
        *o++ = b64[v >> 12 & 63];
        *o++ = i + 1 < 32 ? b64[v >> 6 & 63] : '=';
        *o++ = i + 2 < 32 ? b64[v & 63] : '=';
    }
    *o++ = '\'';
    *o = '\0';
}

/* The verdict of document i in the words of its command (verdict.h), with the exit status the
 * command gave: the first thing on the page. With several documents, each names its section. */
static void verdict_banner(struct gv_buf *b, const struct gv_report_input *in, size_t i, size_t n)
{
    struct gv_doc_verdict v;
    gv_verdict_of(in[i].doc, &v);
    const char *cls = v.status > 0 ? "bad" : v.status == 0 ? "good" : "na";
    gv_buf_printf(b, "<p class=\"verdict v-%s\" data-status=\"%d\">", cls, v.status);
    if (n > 1) {
        gv_buf_printf(b, "<a href=\"#doc%zu\">", i + 1);
        gv_html_esc(b, find(in[i].doc)->title);
        gv_buf_add(b, "</a>: ");
    }
    gv_buf_printf(b, "<span class=\"v v-%s\" data-word=\"%s\"><span aria-hidden=\"true\">%s</span> %s</span> <b>",
                  cls, v.status > 0 ? "fail" : v.status == 0 ? "pass" : "none",
                  v.status > 0 ? "\xe2\x9c\x97" : v.status == 0 ? "\xe2\x9c\x93" : "\xe2\x80\x93",
                  v.status > 0 ? "found something" : v.status == 0 ? "nothing wrong" : "a record");
    gv_html_esc(b, v.head);
    gv_buf_add(b, "</b>");
    if (v.why[0]) {
        gv_buf_add(b, "<span class=\"why\">: ");
        gv_html_esc(b, v.why);
        gv_buf_add(b, "</span>");
    }
    if (v.status >= 0)
        gv_buf_printf(b, " <span class=\"exit\">(the command exits %d)</span>", v.status);
    gv_buf_add(b, "</p>\n");
}

static void page_title(struct gv_buf *b, const struct gv_report_input *in, size_t n, const char *title)
{
    if (title) {
        gv_html_esc(b, title);
        return;
    }
    gv_buf_add(b, "gpuvet report: ");
    for (size_t i = 0; i < n && i < 4; i++) {
        const struct renderer *r = find(in[i].doc);
        if (i)
            gv_buf_add(b, " · ");
        gv_html_esc(b, r ? r->title : "?");
    }
    if (n > 4)
        gv_buf_printf(b, " and %zu more", n - 4);
}

int gv_report_render(const struct gv_report_input *in, size_t n, const char *title,
                     struct gv_buf *out, struct gv_err *err)
{
    for (size_t i = 0; i < n; i++) {
        int rc = gv_report_check(in[i].path, in[i].doc, err);
        if (rc)
            return rc;
    }
    struct gv_page p = {.b = out};
    char hash[64];
    csp_hash(hash);
    gv_buf_add(out, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
                    "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    gv_buf_printf(out, "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
                       "style-src 'unsafe-inline'; script-src %s; img-src data:\">\n", hash);
    gv_buf_add(out, "<meta name=\"generator\" content=\"gpuvet " GPUVET_VERSION "\">\n<title>");
    page_title(out, in, n, title);
    gv_buf_add(out, "</title>\n");
    gv_buf_add(out, style);
    gv_buf_add(out, "</head>\n<body>\n");
    gv_buf_add(out, gv_svg_defs);
    gv_buf_add(out, "<header><h1 id=\"top\">");
    page_title(out, in, n, title);
    gv_buf_add(out, "</h1><p class=\"src\">Made by gpuvet " GPUVET_VERSION
                    " from the documents below; every number on this page is one they hold.</p>");
    for (size_t i = 0; i < n; i++)
        verdict_banner(out, in, i, n);
    if (n > 1) {
        gv_buf_add(out, "<nav class=\"toc\" aria-label=\"contents\"><ol>");
        for (size_t i = 0; i < n; i++) {
            gv_buf_printf(out, "<li><a href=\"#doc%zu\">", i + 1);
            gv_html_esc(out, find(in[i].doc)->title);
            gv_buf_add(out, "</a> <span class=\"src\">");
            gv_html_esc(out, in[i].path);
            gv_buf_add(out, "</span></li>");
        }
        gv_buf_add(out, "</ol></nav>");
    }
    gv_buf_add(out, "</header>\n<main>\n");
    for (size_t i = 0; i < n; i++) {
        const struct renderer *r = find(in[i].doc);
        p.path = in[i].path;
        gv_buf_printf(out, "<section class=\"doc\" id=\"doc%zu\" data-schema=\"", i + 1);
        gv_html_esc(out, r->schema);
        gv_buf_add(out, "\"><h2>");
        gv_html_esc(out, r->title);
        gv_buf_add(out, "</h2><p class=\"src\">");
        gv_html_esc(out, in[i].path);
        gv_buf_printf(out, " · schema %s v%d", r->schema, r->version);
        const char *created = gv_jstr(in[i].doc, "created");
        if (!created)
            created = gv_jpstr(in[i].doc, "header.created");
        if (created) {
            gv_buf_add(out, " · created <time>");
            gv_html_esc(out, created);
            gv_buf_add(out, "</time>");
        }
        const char *ver = gv_jstr(in[i].doc, "gpuvet_version");
        if (ver) {
            gv_buf_add(out, " · gpuvet ");
            gv_html_esc(out, ver);
        }
        gv_buf_add(out, "</p>\n");
        int rc = r->render(&p, in[i].doc, err);
        if (rc)
            return rc;
        gv_buf_add(out, "</section>\n");
    }
    gv_buf_add(out, "</main>\n");
    gv_buf_add(out, "<script>");
    gv_buf_add(out, script);
    gv_buf_add(out, "</script>\n");
    gv_buf_add(out, "</body></html>\n");
    if (!gv_buf_ok(out))
        return gv_err_set(err, GV_E_NOMEM, "writing the report: out of memory");
    return GV_OK;
}

/* ---------- page parts (page.h) ---------- */

void gv_page_id(struct gv_page *p, char *out, size_t n)
{
    snprintf(out, n, "gv%d", ++p->ids);
}

void gv_page_section(struct gv_page *p, const char *kind, const char *title)
{
    char id[32];
    gv_page_id(p, id, sizeof id);
    gv_buf_printf(p->b, "<section class=\"part %s\" id=\"%s\" aria-labelledby=\"%s-h\"><h3 id=\"%s-h\">", kind,
                  id, id, id);
    gv_html_esc(p->b, title);
    gv_buf_add(p->b, "</h3>\n");
}

void gv_page_end_section(struct gv_page *p)
{
    gv_buf_add(p->b, "</section>\n");
}

static const struct word {
    const char *word, *sym, *cls;
} words[] = {
    {"pass", "\xe2\x9c\x93", "good"},           {"identical", "=", "good"},
    {"noise", "\xe2\x89\x88", "good"},          {"rounding", "\xe2\x89\x88", "good"},
    {"equally_accurate", "\xe2\x89\x88", "good"}, {"improved", "\xe2\x96\xb2", "good"},
    {"cleared_with_module", "\xe2\x89\x88", "good"},
    {"more_accurate", "\xe2\x96\xb2", "good"},  {"newly_passing", "\xe2\x9c\x93", "good"},
    {"fail", "\xe2\x9c\x97", "bad"},            {"degraded", "\xe2\x96\xbc", "bad"},
    {"newly_failing", "\xe2\x9c\x97", "bad"},   {"still_failing", "\xe2\x9c\x97", "bad"},
    {"beyond_rounding", "\xe2\x9c\x97", "bad"}, {"less_accurate", "\xe2\x9c\x97", "bad"},
    {"error", "!", "bad"},                      {"inputs_differ", "!", "bad"},
    {"replay_failed", "!", "bad"},              {"warning", "!", "warn"},
    {"different", "\xe2\x89\xa0", "warn"},      {"differs_not_kept", "\xe2\x89\xa0", "warn"},
    {"skipped", "\xe2\x80\x93", "na"},          {"not_run", "\xe2\x80\x93", "na"},
    {"not_replayed", "\xe2\x80\x93", "na"},     {"missing_before", "?", "na"},
    {"missing_after", "?", "na"},               {"info", "i", "na"},
    {"cases", "#", "na"},                       {"nondeterministic", "\xe2\x89\xa0", "warn"},
    {"ok", "\xe2\x9c\x93", "good"},             {"failed", "\xe2\x9c\x97", "bad"},
    {"timeout", "!", "bad"},                    {"unsupported", "\xe2\x80\x93", "na"},
    {"regressed", "\xe2\x96\xbc", "bad"},       {"within_noise", "\xe2\x89\x88", "good"},
    {"newly_ok", "\xe2\x9c\x93", "good"},       {"not_comparable", "\xe2\x89\xa0", "warn"},
    {"only_before", "?", "na"},                 {"only_after", "?", "na"},
};

const char *gv_page_word_class(const char *word)
{
    for (size_t i = 0; word && i < sizeof words / sizeof words[0]; i++)
        if (!strcmp(words[i].word, word))
            return words[i].cls;
    return "na";
}

void gv_page_verdict(struct gv_page *p, const char *word)
{
    const char *sym = "?", *cls = "na";
    for (size_t i = 0; word && i < sizeof words / sizeof words[0]; i++)
        if (!strcmp(words[i].word, word)) {
            sym = words[i].sym;
            cls = words[i].cls;
        }
    gv_buf_printf(p->b, "<span class=\"v v-%s\" data-word=\"", cls);
    gv_html_esc(p->b, word ? word : "");
    gv_buf_printf(p->b, "\"><span aria-hidden=\"true\">%s</span> ", sym);
    gv_page_label(p, word ? word : "unknown");
    gv_buf_add(p->b, "</span>");
}

void gv_page_label(struct gv_page *p, const char *key)
{
    char t[256];
    snprintf(t, sizeof t, "%s", key ? key : "");
    for (char *c = t; *c; c++)
        if (*c == '_')
            *c = ' ';
    gv_html_esc(p->b, t);
}

void gv_page_kv(struct gv_page *p, const char *key, const char *value)
{
    gv_buf_add(p->b, "<tr><th scope=\"row\">");
    gv_html_esc(p->b, key);
    gv_buf_add(p->b, "</th>");
    gv_html_td_str(p->b, value, NULL);
    gv_buf_add(p->b, "</tr>\n");
}

void gv_page_note(struct gv_page *p, const char *fmt, ...)
{
    char msg[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    gv_buf_add(p->b, "<p class=\"note\">");
    gv_html_esc(p->b, msg);
    gv_buf_add(p->b, "</p>\n");
}

void gv_page_table(struct gv_page *p, const char *caption, const char *const *heads, size_t n)
{
    gv_buf_add(p->b, "<table class=\"sortable\">");
    if (caption) {
        gv_buf_add(p->b, "<caption>");
        gv_html_esc(p->b, caption);
        gv_buf_add(p->b, "</caption>");
    }
    gv_buf_add(p->b, "<thead><tr>");
    for (size_t i = 0; i < n; i++) {
        int num = heads[i][0] == '#';
        gv_buf_printf(p->b, "<th scope=\"col\"%s>", num ? " class=\"num\"" : "");
        gv_html_esc(p->b, heads[i] + num);
        gv_buf_add(p->b, "</th>");
    }
    gv_buf_add(p->b, "</tr></thead><tbody>\n");
}

void gv_page_table_end(struct gv_page *p)
{
    gv_buf_add(p->b, "</tbody></table>\n");
}
