/* TEMPORARY (delete at the merge of the fleet's documents half, F1): weak
 * stand-ins for the fleet.h functions that node.c and reference.c define, so
 * that the run half builds and links on its own. The node-name check and the
 * stack digest are the real thing (the run needs them to name files and to
 * fill stack_digest); the rest say they are not built. */
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "base/json.h"
#include "base/sha256.h"
#include "fleet/fleet.h"

__attribute__((weak)) int gv_fleet_node_name_ok(const char *name)
{
    size_t n = name ? strlen(name) : 0;
    if (n < 1 || n > GV_FLEET_NODE_NAME_MAX || !strcmp(name, ".") || !strcmp(name, ".."))
        return 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)name[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '_' || c == '-'))
            return 0;
    }
    return 1;
}

__attribute__((weak)) int gv_fleet_stack_digest(const json_t *stack, char out[72],
                                                struct gv_err *err)
{
    char *s = gv_json_dumps(stack, JSON_SORT_KEYS | JSON_COMPACT | JSON_ENSURE_ASCII);
    if (!s)
        return gv_err_set(err, GV_E_NOMEM, "stack digest: out of memory");
    char hex[65];
    gv_sha256_buf_hex(s, strlen(s), hex);
    free(s);
    memcpy(out, "sha256:", 7);
    memcpy(out + 7, hex, 65);
    return GV_OK;
}

__attribute__((weak)) int gv_fleet_node_check(const json_t *node, const char *what,
                                              struct gv_err *err)
{
    (void)node;
    return gv_err_set(err, GV_E_UNSUPPORTED, "%s: node documents cannot be checked: not built "
                      "yet", what);
}

__attribute__((weak)) int gv_fleet_judge(const json_t *ref, const json_t *node, json_t **verdict,
                                         struct gv_err *err)
{
    (void)ref, (void)node;
    *verdict = NULL;
    return gv_err_set(err, GV_E_UNSUPPORTED, "judging against a reference: not built yet");
}
