/* The port scan's rule tables (src/port/rules_*.c) against their facts
 * (src/kb/port_facts.c) and docs/port.md: every rule has a fact with a why and
 * a source, every fact a rule, every rule its row in the "## Rules" table and
 * every row a rule (the checker is also fed the document with a row dropped,
 * so it is known to catch that). Then the wavefront sizes and API lookups. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/fs.h"
#include "kb/port_facts.h"
#include "port/rules.h"
#include "t.h"

static int has_rule(const char *id)
{
    size_t n;
    const struct port_rule *r = port_rules_cuda(&n);
    for (size_t i = 0; i < n; i++)
        if (!strcmp(r[i].id, id))
            return 1;
    r = port_rules_py(&n);
    for (size_t i = 0; i < n; i++)
        if (!strcmp(r[i].id, id))
            return 1;
    return 0;
}

/* Rows "| `id` |" of the "## Rules" table that name id. */
static int rows(const char *md, const char *id)
{
    const char *p = strstr(md, "\n## Rules\n");
    char want[80];
    snprintf(want, sizeof want, "\n| `%s` |", id);
    int n = 0;
    const char *end = p ? strstr(p + 1, "\n## ") : NULL;
    for (const char *q = p; q && (q = strstr(q + 1, want)) && (!end || q < end);)
        n++;
    return n;
}

static int check_table(const struct port_rule *r, size_t n, const char *md, int loud)
{
    int bad = 0;
    for (size_t i = 0; i < n; i++) {
        const struct gv_port_fact *f = gv_port_fact_find(r[i].id);
        if (!f || !*f->why || !*f->source) {
            bad++;
            if (loud)
                fprintf(stderr, "rule %s has no fact with why and source\n", r[i].id);
        }
        if (rows(md, r[i].id) != 1) {
            bad++;
            if (loud)
                fprintf(stderr, "rule %s: %d rows in docs/port.md\n", r[i].id, rows(md, r[i].id));
        }
        if (!strcmp(r[i].severity, "error") + !strcmp(r[i].severity, "warning") +
                !strcmp(r[i].severity, "note") != 1)
            bad++;
    }
    return bad;
}

static int mismatches(const char *md, int loud)
{
    size_t n;
    const struct port_rule *r = port_rules_cuda(&n);
    int bad = check_table(r, n, md, loud);
    r = port_rules_py(&n);
    bad += check_table(r, n, md, loud);
    const struct gv_port_fact *f = gv_port_facts(&n);
    for (size_t i = 0; i < n; i++)
        if (!has_rule(f[i].rule)) {
            bad++;
            if (loud)
                fprintf(stderr, "fact %s names no rule\n", f[i].rule);
        }
    return bad;
}

static void test_rules_documented(void)
{
    char path[4096], *md;
    size_t len;
    struct gv_err err = {0};
    const char *src = getenv("GV_SRC");
    snprintf(path, sizeof path, "%s/docs/port.md", src ? src : "..");
    T_EQ_INT(gv_read_file(path, 1 << 20, &md, &len, &err), 0);
    T_EQ_INT(mismatches(md, 1), 0);
    /* drop the inline-ptx row: the checker must see it */
    char *row = strstr(md, "\n| `inline-ptx` |");
    T_CHECK(row != NULL);
    if (row)
        row[3] = 'X';
    T_CHECK(mismatches(md, 0) > 0);
    free(md);
}

static void test_wave_sizes(void)
{
    T_EQ_INT(gv_port_wave_size("gfx942"), 64);
    T_EQ_INT(gv_port_wave_size("gfx90a:xnack-"), 64);
    T_EQ_INT(gv_port_wave_size("gfx906"), 64);
    T_EQ_INT(gv_port_wave_size("gfx950"), 64);
    T_EQ_INT(gv_port_wave_size("gfx1100"), 32);
    T_EQ_INT(gv_port_wave_size("gfx1201"), 32);
    T_EQ_INT(gv_port_wave_size("gfx1030"), 32);
    T_EQ_INT(gv_port_wave_size("sm_90"), 32);
    T_EQ_INT(gv_port_wave_size("gfx9ff"), 64);   /* not in the table: by family */
    T_EQ_INT(gv_port_wave_size("gfx1299"), 32);
    T_EQ_INT(gv_port_wave_size("gfx"), 0);
    T_EQ_INT(gv_port_wave_size("vega"), 0);
    T_EQ_INT(gv_port_wave_size("gfx8000000"), 0);
}

static void test_api_table(void)
{
    const struct gv_port_api *a = gv_port_api_find("cuTensorMapEncodeTiled", 22, 0);
    T_CHECK(a && !a->prefix && !a->hip);
    a = gv_port_api_find("cublasLtMatmul", 14, 0);
    T_CHECK(a && a->hip && !strcmp(a->hip, "hipblasLt"));
    a = gv_port_api_find("cublasCreate", 12, 0);
    T_CHECK(a && !strcmp(a->hip, "hipblas"));
    a = gv_port_api_find("nvmlInit", 8, 0);
    T_CHECK(a && !a->hip);
    T_CHECK(gv_port_api_find("mma.h", 5, 1) != NULL);
    T_CHECK(gv_port_api_find("foo/mma.h", 9, 1) == NULL);
    T_CHECK(gv_port_api_find("cutlass/gemm.h", 14, 1) && !gv_port_api_find("cutlass/gemm.h", 14, 1)->hip);
    T_CHECK(gv_port_api_find("cumsum", 6, 0) == NULL);
    size_t n;
    const struct gv_port_api *all = gv_port_apis(&n);
    for (size_t i = 0; i < n; i++)
        T_CHECK(all[i].source && *all[i].source && (all[i].hip || all[i].note));
}

int main(void)
{
    T_RUN(test_rules_documented);
    T_RUN(test_wave_sizes);
    T_RUN(test_api_table);
    return t_done();
}
