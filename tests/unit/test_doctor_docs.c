/* Every doctor rule id in the area tables (src/kb/rules_*.c) has its row in
 * docs/doctor.md ("## Rules"), and every row there names a rule that exists.
 * The checker is also fed the document with a row dropped and with a stale
 * row added, so it is known to catch both. The README's command table states
 * how many rules the doctor has: that number is the number of rules (checked
 * against a README with the number off by one too). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kb/rules.h"
#include "t.h"

/* The ids of the "## Rules" table: rows "| `id` | ...", until the next "## ". */
static size_t doc_ids(const char *md, char ids[][64], size_t max)
{
    const char *p = strstr(md, "\n## Rules\n");
    size_t n = 0;
    while (p && (p = strchr(p + 1, '\n')) && strncmp(p + 1, "## ", 3)) {
        if (strncmp(p + 1, "| `", 3))
            continue;
        const char *id = p + 4;
        size_t len = strcspn(id, "`\n");
        if (n < max && len < 64)
            snprintf(ids[n++], 64, "%.*s", (int)len, id);
    }
    return n;
}

/* Number of mismatches (each named on stderr when loud): rules without a row,
 * rows without a rule, rows twice. */
static int mismatches(const char *md, int loud)
{
    static char ids[256][64];
    size_t n = doc_ids(md, ids, 256);
    int bad = 0;
    const struct gv_rule *r;
    for (size_t i = 0; (r = gv_rule_at(i)); i++) {
        int rows = 0;
        for (size_t k = 0; k < n; k++)
            rows += !strcmp(ids[k], r->id);
        if (rows != 1 && loud)
            fprintf(stderr, "rule %s: %d rows in docs/doctor.md (want 1)\n", r->id, rows);
        bad += rows != 1;
    }
    for (size_t k = 0; k < n; k++) {
        if (!gv_rule_find(ids[k]) && loud)
            fprintf(stderr, "docs/doctor.md documents %s, which is no rule\n", ids[k]);
        bad += !gv_rule_find(ids[k]);
    }
    return bad;
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *s = malloc(1 << 20);
    size_t n = s ? fread(s, 1, (1 << 20) - 1, f) : 0;
    fclose(f);
    if (s)
        s[n] = '\0';
    return s;
}

/* The number the README's doctor row states ("| `gpuvet doctor ...` | N rules ..."), or -1. */
static long readme_rule_count(const char *readme)
{
    const char *row = strstr(readme, "\n| `gpuvet doctor ");
    const char *cell = row ? strstr(row, "` | ") : NULL;
    if (!cell)
        return -1;
    char *end;
    long n = strtol(cell + 4, &end, 10);
    return end != cell + 4 && !strncmp(end, " rules ", 7) ? n : -1;
}

static char *md, *readme;

static void readme_states_rule_count(void)
{
    long n = readme_rule_count(readme);
    if (n != (long)gv_rule_count())
        fprintf(stderr, "README.md says the doctor has %ld rules; it has %zu\n", n,
                gv_rule_count());
    T_EQ_INT(n, (long)gv_rule_count());
}

/* A README whose count is one off, and one without the count, are caught. */
static void catches_wrong_readme_count(void)
{
    char row[128];
    snprintf(row, sizeof row, "\n| `gpuvet doctor [--strict]` | %zu rules from a kb |\n",
             gv_rule_count() + 1);
    T_CHECK(readme_rule_count(row) != (long)gv_rule_count());
    T_EQ_INT(readme_rule_count("\n| `gpuvet doctor [--strict]` | rules from a kb |\n"), -1);
}

static void every_rule_documented(void)
{
    T_CHECK(gv_rule_count() > 0);
    T_EQ_INT(mismatches(md, 1), 0);
}

/* The document without the gpu-access row: one rule undocumented. */
static void catches_missing_row(void)
{
    char *copy = strdup(md);
    char *row = strstr(copy, "\n| `gpu-access` |");
    T_CHECK(row != NULL);
    if (row) {
        char *end = strchr(row + 1, '\n');
        memmove(row, end, strlen(end) + 1);
        T_EQ_INT(mismatches(copy, 0), 1);
    }
    free(copy);
}

/* The document with a row for a rule that is gone: one stale row. */
static void catches_stale_row(void)
{
    const char *stale = "| `gone-rule` | error | a rule that was removed. | gpuvet |\n";
    char *copy = malloc(strlen(md) + strlen(stale) + 1);
    char *at = strstr(md, "| `gpu-access` |");
    T_CHECK(copy && at);
    if (copy && at) {
        size_t head = (size_t)(at - md);
        memcpy(copy, md, head);
        strcpy(copy + head, stale);
        strcat(copy, at);
        T_EQ_INT(mismatches(copy, 0), 1);
    }
    free(copy);
}

static char *slurp_src(const char *name)
{
    const char *src = getenv("GV_SRC");
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", src ? src : "..", name);
    char *s = slurp(path);
    if (!s)
        fprintf(stderr, "cannot read %s\n", path);
    return s;
}

int main(void)
{
    md = slurp_src("docs/doctor.md");
    readme = slurp_src("README.md");
    if (!md || !readme)
        return 1;
    T_RUN(every_rule_documented);
    T_RUN(catches_missing_row);
    T_RUN(catches_stale_row);
    T_RUN(readme_states_rule_count);
    T_RUN(catches_wrong_readme_count);
    free(md);
    free(readme);
    return t_done();
}
