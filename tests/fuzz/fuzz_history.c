/* Fuzz target: the history recorder's parsers: a document's columns
 * (gv_history_extract, on any JSON) and the password removal of database URLs
 * (gv_url_redact), with an oracle: a password planted in a URL built from the
 * input never survives redaction. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/history.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_url(const char *text)
{
    char out[2048];
    gv_url_redact(text, out, sizeof out);
    /* a URL with the input as user, host and query around a known password */
    static const char secret[] = "Zq7secretPw";
    if (strstr(text, secret))
        return; /* the input itself may say it, outside any password */
    char url[1400];
    char part[300];
    snprintf(part, sizeof part, "%.299s", text);
    for (char *p = part; *p; p++) /* keep the input inside the URL's parts */
        if (*p == '@' || *p == '/' || *p == ':' || *p == '?' || *p == '#' || *p == '&' ||
            *p == ' ' || *p == '=')
            *p = 'x';
    snprintf(url, sizeof url, "postgresql://%s:%s@%s/db", part, secret, part);
    gv_url_redact(url, out, sizeof out);
    if (strstr(out, secret))
        abort();
    snprintf(url, sizeof url, "postgres://%s:%s@%s/db?x=1", part, secret, part);
    gv_url_redact(url, out, sizeof out);
    if (strstr(out, secret))
        abort();
    snprintf(url, sizeof url, "postgresql://%s:%s@/db?host=/tmp/%s", part, secret, part);
    gv_url_redact(url, out, sizeof out);
    if (strstr(out, secret))
        abort();
    snprintf(url, sizeof url, "postgresql://%s@h/db?password=%s&sslmode=%s", part, secret, part);
    gv_url_redact(url, out, sizeof out);
    if (strstr(out, secret))
        abort();
    snprintf(url, sizeof url, "host=%s password=%s dbname=%s", part, secret, part);
    gv_url_redact(url, out, sizeof out);
    if (strstr(out, secret))
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    check_url(text);
    json_error_t je;
    json_t *doc = json_loadb((const char *)data, size, 0, &je);
    if (doc) {
        struct gv_run_cols *c = malloc(sizeof *c);
        struct gv_history_ident id = {"fuzzhost", ""};
        struct gv_err err = {0};
        if (c && gv_history_extract(doc, &id, c, "fuzz.json", &err) == GV_OK) {
            if (!c->machine_key[0] || !c->stack_key[0] || !c->kind[0])
                abort();
            (void)gv_history_doc_snapshot(doc);
        }
        free(c);
        json_decref(doc);
    }
    free(text);
    return 0;
}
