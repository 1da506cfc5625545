/* The device-code fixtures of tests/fixtures/make-devcode.sh, built once per
 * build tree under $GV_TEST_TMP/devcode. */
#ifndef GV_TEST_DEVCODE_H
#define GV_TEST_DEVCODE_H

#include "env/offload.h"
#include "t.h"
#include "tools.h"

/* Builds the fixtures; returns 1 if part ("hip" or "cuda") was made, else
 * prints why not and returns 0. */
static __attribute__((unused)) int dc_build(const char *part, char *dir, size_t dirsz)
{
    const char *src = getenv("GV_SRC"), *tmp = getenv("GV_TEST_TMP");
    snprintf(dir, dirsz, "%s/devcode", tmp && *tmp ? tmp : "/tmp");
    if (tl_sh("bash '%s/tests/fixtures/make-devcode.sh' '%s' >&2", src && *src ? src : ".",
              dir) != 0) {
        fprintf(stderr, "make-devcode.sh failed\n");
        return -1;
    }
    char made[600];
    snprintf(made, sizeof made, "%s/made.txt", dir);
    uint8_t *txt;
    size_t n;
    if (tl_read(made, &txt, &n) != 0)
        return -1;
    txt = realloc(txt, n + 1);
    txt[n] = '\0';
    int ok = 0;
    for (char *line = strtok((char *)txt, "\n"); line; line = strtok(NULL, "\n")) {
        if (strcmp(line, part) == 0)
            ok = 1;
        else if (strncmp(line, "missing ", 8) == 0 && strncmp(line + 8, part, strlen(part)) == 0)
            fprintf(stderr, "skipped: %s\n", line);
    }
    free(txt);
    return ok;
}

/* "a b c" == the list (both sorted). */
static __attribute__((unused)) int dc_same_list(char **v, size_t n, const char *want)
{
    char buf[1024], got[1024] = "";
    snprintf(buf, sizeof buf, "%s", want);
    for (size_t i = 0; i < n; i++)
        snprintf(got + strlen(got), sizeof got - strlen(got), "%s%s", i ? " " : "", v[i]);
    if (strcmp(got, want) != 0) {
        fprintf(stderr, "  got [%s], want [%s]\n", got, want);
        return 0;
    }
    return 1;
}

/* Every name in a is in b. */
static __attribute__((unused)) int dc_subset(char **a, size_t na, char **b, size_t nb)
{
    for (size_t i = 0; i < na; i++) {
        int found = 0;
        for (size_t j = 0; j < nb && !found; j++)
            found = strcmp(a[i], b[j]) == 0;
        if (!found)
            return 0;
    }
    return 1;
}

/* A section's bytes, extracted by objcopy (binutils), not by the code under test. */
static __attribute__((unused)) int dc_section(const char *lib, const char *section, const char *out,
                                              uint8_t **data, size_t *len)
{
    if (tl_sh("objcopy -O binary --only-section='%s' '%s' '%s'", section, lib, out) != 0)
        return -1;
    return tl_read(out, data, len);
}

#endif
