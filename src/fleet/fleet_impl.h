/* Inside the fleet room: limits on node documents, a string map, the stack
 * diff shared by compare and the judge. */
#ifndef GV_FLEET_FLEET_IMPL_H
#define GV_FLEET_FLEET_IMPL_H

#include <jansson.h>
#include <stddef.h>

#include "base/err.h"

#define GV_FLEET_NODE_MAX_BYTES ((size_t)16 << 20) /* one node document */
#define GV_FLEET_CASE_ID_MAX 200
#define GV_FLEET_CASES_MAX 100000
#define GV_FLEET_REPEATS_MAX 1000
#define GV_FLEET_RANKS_MAX 10000000
#define GV_FLEET_REASON_MAX 1000
#define GV_FLEET_DIFF_MAX 20 /* lines of a stack diff kept */

/* Every document was run with no launcher (launcher "none": each rank 0 of 1,
 * started by hand or by a tool like pdsh on each node into one directory):
 * the nodes are told apart by name, not rank. */
int gv_fleet_by_hand(const json_t *nodes);

/* Reads the regular file name relative to dfd (AT_FDCWD: a path), at most max
 * bytes, a link not followed when nofollow; what names it in messages. */
int gv_fleet_read_at(int dfd, const char *name, int nofollow, const char *what, size_t max,
                     char **data, size_t *len, struct gv_err *err);

/* An open-addressing map from borrowed strings to ints. */
struct gv_fmap {
    const char **keys;
    int *vals;
    size_t cap, n;
};
/* The value slot of key, or NULL when absent. */
int *gv_fmap_get(const struct gv_fmap *m, const char *key);
/* The value slot of key, added with val when absent; NULL when out of memory. */
int *gv_fmap_put(struct gv_fmap *m, const char *key, int val);
void gv_fmap_free(struct gv_fmap *m);

/* Appends to lines (an array) what changed from the stack summary from to
 * to, one string each ("libraries.libhipblaslt.so.0.version: 0.10.0 →
 * 0.12.0"), at most max lines (then "… N more"). */
void gv_fleet_stack_diff(const json_t *from, const json_t *to, json_t *lines, size_t max);

/* The hardware group key of a node ("" when it has no hardware). */
void gv_fleet_group_key(const json_t *node, char *out, size_t outsz);

/* s made fit for a drain reason: printable, no quote or backslash, at most
 * max bytes (cut at a UTF-8 boundary). */
void gv_fleet_reason_clean(char *s, size_t max);

#endif
