/* Snapshot documents (gpuvet.snapshot): the stack at a glance, the GPU
 * libraries, GPU packages, allowlisted environment and loader choices. */
#include <stdio.h>
#include <string.h>

#include "report/page.h"

/* "not collected: REASON" for a section object that says so, else NULL. */
static const char *not_collected(const json_t *sec, char *out, size_t n)
{
    if (!json_is_object(sec)) {
        snprintf(out, n, "not in the document");
        return out;
    }
    if (json_is_false(json_object_get(sec, "collected"))) {
        const char *r = gv_jstr(sec, "reason");
        snprintf(out, n, "not collected: %s", r ? r : "no reason given");
        return out;
    }
    return NULL;
}

static void kv_row_open(struct gv_page *p, const char *key)
{
    gv_buf_add(p->b, "<tr><th scope=\"row\">");
    gv_html_esc(p->b, key);
    gv_buf_add(p->b, "</th><td>");
}

static void gpus_row(struct gv_page *p, const json_t *gpus)
{
    char nc[600];
    kv_row_open(p, "GPUs");
    if (not_collected(gpus, nc, sizeof nc)) {
        gv_buf_add(p->b, "<span class=\"na\">");
        gv_html_esc(p->b, nc);
        gv_buf_add(p->b, "</span>");
    } else if (!json_array_size(gv_jarr(gpus, "devices"))) {
        gv_buf_add(p->b, "none found (");
        gv_html_esc(p->b, gv_jstr(gpus, "source"));
        gv_buf_add(p->b, ")");
    } else {
        size_t i;
        const json_t *d;
        gv_buf_add(p->b, "<ul>");
        json_array_foreach(gv_jarr(gpus, "devices"), i, d) {
            gv_buf_add(p->b, "<li class=\"gpu\">");
            const char *model = gv_jstr(d, "model");
            gv_html_esc(p->b, model ? model : gv_jstr(d, "vendor"));
            if (!model) {
                gv_buf_add(p->b, " device ");
                gv_html_esc(p->b, gv_jstr(d, "device_id"));
            }
            const char *gfx = gv_jpstr(d, "kfd.gfx_target");
            if (gfx) {
                gv_buf_add(p->b, " · ");
                gv_html_esc(p->b, gfx);
            }
            gv_buf_add(p->b, " · PCI ");
            gv_html_esc(p->b, gv_jstr(d, "pci_address"));
            gv_buf_add(p->b, " · driver ");
            gv_html_esc(p->b, gv_jstr(d, "driver") ? gv_jstr(d, "driver") : "none bound");
            gv_buf_add(p->b, "</li>");
        }
        gv_buf_add(p->b, "</ul>");
    }
    gv_buf_add(p->b, "</td></tr>\n");
}

static void drivers_row(struct gv_page *p, const json_t *drv)
{
    char nc[600];
    kv_row_open(p, "Kernel driver");
    if (not_collected(drv, nc, sizeof nc)) {
        gv_html_esc(p->b, nc);
    } else {
        const char *name;
        const json_t *m;
        int any = 0;
        json_object_foreach((json_t *)gv_jobj(drv, "modules"), name, m) {
            gv_buf_add(p->b, any++ ? "; " : "");
            gv_html_esc(p->b, name);
            if (json_is_true(json_object_get(m, "loaded"))) {
                gv_buf_add(p->b, " ");
                gv_html_esc(p->b, gv_jstr(m, "version") ? gv_jstr(m, "version") : "(in-tree)");
            } else {
                gv_buf_add(p->b, " not loaded");
            }
        }
        const json_t *pk;
        json_object_foreach((json_t *)gv_jobj(drv, "dkms"), name, pk) {
            gv_buf_add(p->b, any++ ? "; " : "");
            gv_buf_add(p->b, "package ");
            gv_html_esc(p->b, name);
            gv_buf_add(p->b, " ");
            gv_html_esc(p->b, gv_jstr(pk, "version"));
        }
        if (!any)
            gv_buf_add(p->b, "none");
    }
    gv_buf_add(p->b, "</td></tr>\n");
}

static void stacks_row(struct gv_page *p, const json_t *st)
{
    char nc[600];
    kv_row_open(p, "ROCm / CUDA");
    if (not_collected(st, nc, sizeof nc)) {
        gv_html_esc(p->b, nc);
    } else if (!json_array_size(gv_jarr(st, "installs"))) {
        gv_buf_add(p->b, "no GPU software stack found");
    } else {
        size_t i;
        const json_t *s;
        gv_buf_add(p->b, "<ul>");
        json_array_foreach(gv_jarr(st, "installs"), i, s) {
            gv_buf_add(p->b, "<li class=\"stack\">");
            gv_html_escf(p->b, "%s %s", gv_jstr(s, "kind") ? gv_jstr(s, "kind") : "?",
                         gv_jstr(s, "version") ? gv_jstr(s, "version") : "(version unknown)");
            gv_buf_add(p->b, " <span class=\"src\">(");
            gv_html_esc(p->b, gv_jstr(s, "layout"));
            gv_buf_add(p->b, ", ");
            const char *where = gv_jstr(s, "prefix") ? gv_jstr(s, "prefix") : gv_jstr(s, "libdir");
            gv_html_esc(p->b, where);
            if (json_is_true(json_object_get(s, "is_default")))
                gv_buf_add(p->b, ", default");
            gv_buf_add(p->b, ")</span></li>");
        }
        gv_buf_add(p->b, "</ul>");
    }
    gv_buf_add(p->b, "</td></tr>\n");
}

static void torch_row(struct gv_page *p, const json_t *py)
{
    char nc[600];
    kv_row_open(p, "PyTorch");
    if (not_collected(py, nc, sizeof nc)) {
        gv_html_esc(p->b, nc);
    } else {
        size_t i;
        const json_t *e;
        int any = 0;
        json_array_foreach(gv_jarr(py, "environments"), i, e) {
            const json_t *t = gv_jobj(e, "torch");
            if (!t)
                continue;
            gv_buf_add(p->b, any++ ? "<br>" : "");
            gv_buf_add(p->b, "<span class=\"torch\">torch ");
            gv_html_esc(p->b, gv_jstr(t, "version"));
            gv_buf_add(p->b, " · ");
            gv_html_esc(p->b, gv_jstr(t, "build"));
            gv_buf_add(p->b, " build");
            if (gv_jstr(t, "hip")) {
                gv_buf_add(p->b, " · HIP ");
                gv_html_esc(p->b, gv_jstr(t, "hip"));
            }
            if (gv_jstr(t, "cuda")) {
                gv_buf_add(p->b, " · CUDA ");
                gv_html_esc(p->b, gv_jstr(t, "cuda"));
            }
            gv_buf_add(p->b, " <span class=\"src\">(");
            gv_html_esc(p->b, gv_jstr(e, "prefix"));
            gv_buf_add(p->b, ", Python ");
            gv_html_esc(p->b, gv_jstr(e, "python_version"));
            gv_buf_add(p->b, ")</span></span>");
        }
        if (!any)
            gv_buf_add(p->b, "no Python environment with torch");
    }
    gv_buf_add(p->b, "</td></tr>\n");
}

void gv_render_stack(struct gv_page *p, const char *title, const json_t *snap)
{
    char nc[600];
    gv_page_section(p, "stack", title);
    if (not_collected(snap, nc, sizeof nc)) {
        gv_page_note(p, "the snapshot is %s", nc);
        gv_page_end_section(p);
        return;
    }
    gv_buf_add(p->b, "<table class=\"kv glance\">");
    const json_t *host = gv_jobj(snap, "host");
    gv_page_kv(p, "Machine", gv_jpstr(host, "os.pretty_name"));
    gv_page_kv(p, "Linux kernel", gv_jpstr(host, "kernel.release"));
    gv_page_kv(p, "CPU", gv_jpstr(host, "cpu.model"));
    gpus_row(p, gv_jobj(snap, "gpus"));
    drivers_row(p, gv_jobj(snap, "drivers"));
    stacks_row(p, gv_jobj(snap, "stacks"));
    torch_row(p, gv_jobj(snap, "python"));
    gv_page_kv(p, "Root", gv_jstr(snap, "root"));
    gv_buf_add(p->b, "</table>\n");
    gv_page_end_section(p);
}

/* ---- a container image's snapshot (docs/image.md) ---- */

/* A JSON array of strings as words ("/bin/bash -l"), escaped; "—" when absent. */
static void words_row(struct gv_page *p, const char *key, const json_t *a)
{
    kv_row_open(p, key);
    size_t i;
    const json_t *w;
    gv_buf_add(p->b, json_array_size(a) ? "<code>" : "—");
    json_array_foreach(a, i, w) {
        gv_buf_add(p->b, i ? " " : "");
        gv_html_esc(p->b, json_is_string(w) ? json_string_value(w) : "?");
    }
    gv_buf_add(p->b, json_array_size(a) ? "</code></td></tr>\n" : "</td></tr>\n");
}

static void image_glance(struct gv_page *p, const json_t *img)
{
    gv_buf_add(p->b, "<table class=\"kv image-glance\">");
    gv_page_kv(p, "Reference", gv_jstr(img, "reference"));
    gv_page_kv(p, "Form", gv_jstr(img, "form"));
    gv_page_kv(p, "Engine", gv_jstr(img, "engine"));
    gv_page_kv(p, "Tag asked", gv_jstr(img, "tag"));
    words_row(p, "Tags", gv_jarr(img, "tags"));
    gv_page_kv(p, "Manifest digest", gv_jstr(img, "manifest_digest"));
    gv_page_kv(p, "Config digest", gv_jstr(img, "config_digest"));
    char plat[256];
    const char *os = gv_jpstr(img, "platform.os"), *arch = gv_jpstr(img, "platform.architecture"),
               *var = gv_jpstr(img, "platform.variant");
    snprintf(plat, sizeof plat, "%s/%s%s%s", os ? os : "?", arch ? arch : "?", var ? "/" : "",
             var ? var : "");
    gv_page_kv(p, "Platform", os || arch ? plat : NULL);
    gv_page_kv(p, "Created", gv_jstr(img, "created"));
    words_row(p, "Entrypoint", gv_jarr(img, "entrypoint"));
    words_row(p, "Cmd", gv_jarr(img, "cmd"));
    gv_page_kv(p, "User", gv_jstr(img, "user"));
    gv_page_kv(p, "Working directory", gv_jstr(img, "working_dir"));
    gv_buf_add(p->b, "</table>\n");
}

static void image_labels(struct gv_page *p, const json_t *labels)
{
    static const char *const heads[] = {"label", "value"};
    gv_page_table(p, "Labels", heads, 2);
    const char *k;
    const json_t *v;
    json_object_foreach((json_t *)labels, k, v) {
        gv_buf_add(p->b, "<tr>");
        gv_html_td_str(p->b, k, NULL);
        gv_html_td_str(p->b, json_string_value(v), NULL);
        gv_buf_add(p->b, "</tr>\n");
    }
    gv_page_table_end(p);
}

/* The variables the container starts with: a value only where the snapshot's
 * policy wrote one; the others say "redacted". */
static void image_env(struct gv_page *p, const json_t *env)
{
    static const char *const heads[] = {"variable", "value"};
    gv_page_table(p, "Environment the container starts with", heads, 2);
    size_t i;
    const json_t *e;
    json_array_foreach(env, i, e) {
        gv_buf_add(p->b, "<tr>");
        gv_html_td_str(p->b, gv_jstr(e, "name"), NULL);
        if (json_is_true(json_object_get(e, "redacted")) || !gv_jstr(e, "value"))
            gv_buf_add(p->b, "<td class=\"na redacted\">redacted</td>");
        else
            gv_html_td_str(p->b, gv_jstr(e, "value"), NULL);
        gv_buf_add(p->b, "</tr>\n");
    }
    gv_page_table_end(p);
}

static void image_layers(struct gv_page *p, const json_t *layers)
{
    static const char *const heads[] = {"#layer", "digest", "media type", "#size", "#files",
                                        "#whiteouts", "created by"};
    gv_page_table(p, "Layers", heads, 7);
    size_t i;
    const json_t *l;
    json_array_foreach(layers, i, l) {
        gv_buf_add(p->b, "<tr>");
        gv_html_td_num(p->b, l, "index", 10);
        const char *d = gv_jstr(l, "digest");
        char shortd[32];
        snprintf(shortd, sizeof shortd, "%.19s", d ? d : ""); /* sha256: and 12 digits */
        gv_buf_add(p->b, "<td><code title=\"");
        gv_html_esc(p->b, d);
        gv_buf_add(p->b, "\">");
        gv_html_esc(p->b, d ? shortd : "—");
        gv_buf_add(p->b, "</code></td>");
        gv_html_td_str(p->b, gv_jstr(l, "media_type"), NULL);
        gv_html_td_num(p->b, l, "size", 12);
        gv_html_td_num(p->b, l, "files", 12);
        gv_html_td_num(p->b, l, "whiteouts", 12);
        gv_html_td_str(p->b, gv_jstr(l, "created_by"), NULL);
        gv_buf_add(p->b, "</tr>\n");
    }
    gv_page_table_end(p);
}

static void image(struct gv_page *p, const json_t *img)
{
    char nc[600];
    gv_page_section(p, "image", "Container image");
    if (not_collected(img, nc, sizeof nc)) {
        gv_page_note(p, "the image is %s", nc);
        gv_page_end_section(p);
        return;
    }
    image_glance(p, img);
    image_labels(p, gv_jobj(img, "labels"));
    image_env(p, gv_jarr(img, "env"));
    image_layers(p, gv_jarr(img, "layers"));
    gv_page_end_section(p);
}

/* <td> of an item's "layer" (an image snapshot's pages only). */
static void layer_td(struct gv_page *p, const json_t *it, int of_image)
{
    if (of_image)
        gv_html_td_num(p->b, it, "layer", 10);
}

static void libraries(struct gv_page *p, const json_t *lib, int of_image)
{
    char nc[600];
    gv_page_section(p, "libraries", "GPU libraries");
    if (not_collected(lib, nc, sizeof nc)) {
        gv_page_note(p, "%s", nc);
        gv_page_end_section(p);
        return;
    }
    static const char *const heads[] = {"library", "version", "file", "package", "release",
                                        "#layer"};
    gv_page_table(p, NULL, heads, of_image ? 6 : 5);
    size_t i;
    const json_t *it;
    json_array_foreach(gv_jarr(lib, "items"), i, it) {
        gv_buf_add(p->b, json_is_true(json_object_get(it, "unowned")) ? "<tr class=\"warn\">" : "<tr>");
        gv_html_td_str(p->b, gv_jstr(it, "name"), NULL);
        gv_html_td_str(p->b, gv_jstr(it, "version"), NULL);
        gv_buf_add(p->b, "<td><code>");
        gv_html_esc(p->b, gv_jstr(it, "path"));
        gv_buf_add(p->b, "</code>");
        if (gv_jstr(it, "error")) {
            gv_buf_add(p->b, " <span class=\"v v-bad\">! ");
            gv_html_esc(p->b, gv_jstr(it, "error"));
            gv_buf_add(p->b, "</span>");
        }
        gv_buf_add(p->b, "</td>");
        if (json_is_true(json_object_get(it, "unowned")))
            gv_buf_add(p->b, "<td><span class=\"v v-warn\">! owned by no package</span></td>");
        else
            gv_html_td_str(p->b, gv_jstr(it, "package"), NULL);
        gv_html_td_str(p->b, gv_jstr(it, "rocm_release"), NULL);
        layer_td(p, it, of_image);
        gv_buf_add(p->b, "</tr>\n");
    }
    gv_page_table_end(p);
    gv_page_end_section(p);
}

static void gpu_packages(struct gv_page *p, const json_t *pk, int of_image)
{
    char nc[600];
    gv_page_section(p, "packages", "GPU packages");
    if (not_collected(pk, nc, sizeof nc)) {
        gv_page_note(p, "%s", nc);
        gv_page_end_section(p);
        return;
    }
    static const char *const heads[] = {"package", "version", "architecture", "state", "held",
                                        "#layer"};
    gv_page_table(p, NULL, heads, of_image ? 6 : 5);
    size_t i;
    const json_t *it;
    json_array_foreach(gv_jarr(pk, "items"), i, it) {
        if (!json_is_true(json_object_get(it, "gpu")))
            continue;
        gv_buf_add(p->b, "<tr>");
        gv_html_td_str(p->b, gv_jstr(it, "name"), NULL);
        gv_html_td_str(p->b, gv_jstr(it, "version"), NULL);
        gv_html_td_str(p->b, gv_jstr(it, "arch"), NULL);
        gv_html_td_str(p->b, gv_jstr(it, "state"), NULL);
        gv_html_td_str(p->b, json_is_true(json_object_get(it, "hold")) ? "held" : "", NULL);
        layer_td(p, it, of_image);
        gv_buf_add(p->b, "</tr>\n");
    }
    gv_page_table_end(p);
    double count, gpu;
    if (gv_jnum(pk, "count", &count) && gv_jnum(pk, "gpu_count", &gpu)) {
        char t[32], g[32];
        gv_fmt_num(t, sizeof t, count, 10);
        gv_fmt_num(g, sizeof g, gpu, 10);
        gv_page_note(p, "%s GPU packages of %s installed (%s)", g, t,
                     gv_jstr(pk, "manager") ? gv_jstr(pk, "manager") : "package manager");
    }
    gv_page_end_section(p);
}

static void environment(struct gv_page *p, const json_t *env)
{
    char nc[600];
    gv_page_section(p, "environment", "Environment (allowlisted variables)");
    if (not_collected(env, nc, sizeof nc)) {
        gv_page_note(p, "%s", nc);
        gv_page_end_section(p);
        return;
    }
    static const char *const heads[] = {"variable", "value"};
    gv_page_table(p, NULL, heads, 2);
    const json_t *vars = json_object_get(env, "variables");
    const char *k;
    const json_t *v;
    size_t i;
    if (json_is_object(vars)) {
        json_object_foreach((json_t *)vars, k, v) {
            gv_buf_add(p->b, "<tr>");
            gv_html_td_str(p->b, k, NULL);
            gv_buf_add(p->b, "<td><code>");
            gv_html_json(p->b, json_is_object(v) && json_object_get(v, "value") ? json_object_get(v, "value") : v);
            gv_buf_add(p->b, "</code></td></tr>\n");
        }
    } else {
        json_array_foreach(vars, i, v) {
            gv_buf_add(p->b, "<tr>");
            gv_html_td_str(p->b, gv_jstr(v, "name"), NULL);
            gv_buf_add(p->b, "<td><code>");
            gv_html_json(p->b, json_object_get(v, "value"));
            gv_buf_add(p->b, "</code></td></tr>\n");
        }
    }
    gv_page_table_end(p);
    gv_page_end_section(p);
}

int gv_render_snapshot(struct gv_page *p, const json_t *doc, struct gv_err *err)
{
    (void)err;
    gv_render_stack(p, "Stack at a glance", doc);
    const json_t *img = gv_jobj(doc, "image");
    if (img)
        image(p, img);
    libraries(p, gv_jobj(doc, "libraries"), img != NULL);
    gpu_packages(p, gv_jobj(doc, "packages"), img != NULL);
    environment(p, gv_jobj(doc, "environment"));
    return GV_OK;
}
