/* Issue 31 in base: gv_redact (every message's passwords) and the memory budget
 * for documents (base/json.h). */
#include <jansson.h>
#include <stdlib.h>
#include <unistd.h>

#include "base/err.h"
#include "base/json.h"
#include "t.h"

static void test_redact(void)
{
    char out[256];
    gv_redact("postgresql://u:secretpw@127.0.0.1/x: No such file or directory", out, sizeof out);
    T_EQ_STR(out, "postgresql://u:***@127.0.0.1/x: No such file or directory");
    gv_redact("--db=postgres://a:b:c@h@host:5/db?password=zz&sslmode=require", out, sizeof out);
    T_EQ_STR(out, "--db=postgres://a:***@host:5/db?password=***&sslmode=require");
    gv_redact("host=/run/pg password=hunter2 user=x", out, sizeof out);
    T_EQ_STR(out, "host=/run/pg password=*** user=x");
    gv_redact("postgresql://u@h/db and https://example.org/a:b@c", out, sizeof out);
    T_EQ_STR(out, "postgresql://u@h/db and https://example.org/a:b@c");
    gv_redact("mypassword=x", out, sizeof out); /* not a password= key */
    T_EQ_STR(out, "mypassword=x");
    gv_redact("a://u:p@h", out, 8); /* truncated, still terminated, no secret */
    T_EQ_STR(out, "a://u:*");
    struct gv_err err = {0};
    gv_err_set(&err, GV_E_IO, "%s: cannot open", "postgresql://me:letmein@db/x");
    T_EQ_STR(err.msg, "postgresql://me:***@db/x: cannot open");
    gv_err_prefix(&err, "reading %s", "file:x?password=letmein");
    T_CHECK(strstr(err.msg, "letmein") == NULL);
}

static void test_budget(void)
{
    char path[] = "/tmp/gv-test-bounds-XXXXXX";
    int fd = mkstemp(path);
    T_CHECK(fd >= 0);
    FILE *f = fdopen(fd, "w");
    fputs("{\"x\":[", f);
    for (int i = 0; i < 100000; i++)
        fputs(i ? ",{}" : "{}", f);
    fputs("]}", f);
    fclose(f);

    size_t held0 = gv_json_held();
    json_t *doc = NULL;
    struct gv_err err = {0};
    gv_json_set_budget(held0 + ((size_t)1 << 20)); /* 1 MB more than now: too little */
    T_EQ_INT(gv_json_read_file(path, 1 << 20, &doc, &err), GV_E_NOMEM);
    T_CHECK(doc == NULL);
    T_CHECK(strstr(err.msg, path) && strstr(err.msg, "needs more than"));
    T_EQ_INT(gv_json_held(), held0); /* what the parse built is freed */

    gv_json_set_budget(0); /* the default: enough */
    T_EQ_INT(gv_json_read_file(path, 1 << 20, &doc, &err), GV_OK);
    T_CHECK(gv_json_held() > held0 + 100000 * 32);
    /* a second document gets what the first left */
    gv_json_set_budget(gv_json_held() + ((size_t)1 << 20));
    json_t *doc2 = NULL;
    T_EQ_INT(gv_json_read_file(path, 1 << 20, &doc2, &err), GV_E_NOMEM);
    T_CHECK(strstr(err.msg, "loaded before") != NULL);
    /* building values is never refused, only loading */
    json_t *built = json_array();
    for (int i = 0; i < 100000; i++)
        T_CHECK(json_array_append_new(built, json_object()) == 0 || (i = 100000, 0));
    json_decref(built);
    json_decref(doc);
    T_EQ_INT(gv_json_held(), held0);
    gv_json_set_budget(0);
    unlink(path);
}

/* Serialising hands the string over: dumping a document many times (a history
 * import of many files, a worker's every message) leaves the count where it was,
 * so a later load is not refused for memory the command no longer holds. */
static void test_dumps_uncounted(void)
{
    json_t *doc = json_pack("{s:[i,i,i], s:s}", "a", 1, 2, 3, "b", "some text to dump");
    size_t held0 = gv_json_held();
    for (int i = 0; i < 10000; i++) {
        char *s = gv_json_dumps(doc, JSON_COMPACT);
        T_CHECK(s != NULL);
        free(s);
    }
    T_EQ_INT(gv_json_held(), held0);
    json_decref(doc);
}

int main(void)
{
    T_RUN(test_redact);
    T_RUN(test_budget);
    T_RUN(test_dumps_uncounted);
    return t_done();
}
