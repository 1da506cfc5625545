/* The staging tree's insides, shared by the layer applier (layer.c), the tar
 * reader (tar.c) and the tree itself (tree.c): an in-memory index of every
 * entry the layers made (path -> type, link target, layer, digest, size), and
 * the on-disk directory it mirrors, written only with *at() calls from the
 * staging root's descriptor. Not part of the room's API (image.h). */
#ifndef GV_IMAGE_TREE_H
#define GV_IMAGE_TREE_H

#include <stddef.h>
#include <stdint.h>

#include "image/image.h"

enum gv_node_type { GV_NODE_DIR, GV_NODE_REG, GV_NODE_SYM };

struct gv_node {
    char *path;         /* inside the tree, no leading "/", "" for the root */
    const char *name;   /* the last component, inside path */
    enum gv_node_type type;
    int layer;          /* the layer that last wrote it, -1: made by none */
    long long size;
    uint8_t digest[32]; /* of a regular file's content, when hashed */
    int hashed;         /* its content was kept (gv_image_keep), so hashed */
    char *target;       /* a symlink's target */
    struct gv_node *parent, *child, *next, *prev; /* directory tree */
    struct gv_node *hnext;                        /* hash chain */
    uint64_t hash;
};

struct gv_image_tree {
    char root[4096];
    int rootfd;
    enum gv_stage_mode mode;
    size_t nlayers;
    struct gv_image_layer_stats *stats;
    struct gv_node *top;
    struct gv_node **buckets;
    size_t nbuckets, count;
    struct gv_node *cached; /* the directory whose descriptor is cachefd */
    int cachefd;
};

/* One member of a layer's tar, as tar.c hands it to the applier. */
enum gv_member_type { GV_MEMBER_REG, GV_MEMBER_HARD, GV_MEMBER_SYM, GV_MEMBER_DIR,
                      GV_MEMBER_OTHER };
struct gv_member {
    enum gv_member_type type;
    char name[4096]; /* checked: no "..", no leading "/" or "./", may be "" (the root) */
    char link[4096]; /* a link's target (hard: a checked name like name) */
    long long size;
    unsigned mode;
};

/* The byte stream of one uncompressed layer, as the tar reader pulls it. */
struct gv_tsrc;
/* Points *p at the next bytes (at most max of them): the count, 0 at the
 * end, or a negative gv_status with err filled. The bytes stay valid until the
 * next call. */
long gv_tsrc_view(struct gv_tsrc *s, const unsigned char **p, size_t max, struct gv_err *err);

/* Reads every member of the tar in s, calling the applier for each: its
 * content (size bytes) is read by the applier with gv_tsrc_view. label names
 * the layer in messages. Stops at the end-of-archive blocks or the end of the
 * stream after the last member. */
struct gv_apply;
int gv_tar_read(struct gv_tsrc *s, const char *label, struct gv_apply *a, struct gv_err *err);
/* The applier's entry (layer.c): applies one member. */
int gv_apply_member(struct gv_apply *a, const struct gv_member *m, struct gv_tsrc *s,
                    struct gv_err *err);
/* Checks and normalises a member name in place: leading "/" and "./" and
 * "." components dropped, "//" collapsed, a trailing "/" dropped. 0 when
 * fine, -1 for a ".." component, an empty name or a name too long. */
int gv_tar_clean_name(char *name);

/* ---- the index (tree.c) ---- */
struct gv_node *gv_tree_child(const struct gv_image_tree *t, const struct gv_node *dir,
                              const char *name);
/* A new node name under dir (not yet in the tree), made in the index only. */
struct gv_node *gv_tree_add(struct gv_image_tree *t, struct gv_node *dir, const char *name,
                            enum gv_node_type type, int layer);
/* Removes node and everything under it from the index and from the disk. */
int gv_tree_remove(struct gv_image_tree *t, struct gv_node *node, struct gv_err *err);
/* Resolves path from dir through the index, as in a chroot: absolute link
 * targets restart at the root. flags: GV_WALK_FOLLOW follows a link in the
 * last component, GV_WALK_CREATE makes missing directories (layer), and
 * GV_WALK_STRICT refuses a ".." that would climb out of the root (else it is
 * clamped). *out: the node, NULL when the last component is missing. On a
 * refusal *why names the link. Returns 0, or a negative gv_status. */
#define GV_WALK_FOLLOW 1
#define GV_WALK_CREATE 2
#define GV_WALK_STRICT 4
int gv_tree_walk(struct gv_image_tree *t, struct gv_node *dir, const char *path, int flags,
                 int layer, struct gv_node **out, char *why, size_t whysz);
/* A descriptor of the directory node (cached: do not close it). */
int gv_tree_dirfd(struct gv_image_tree *t, const struct gv_node *dir);
/* An open descriptor of the directory node, the caller's to close. */
int gv_tree_open_dir(struct gv_image_tree *t, const struct gv_node *dir);
/* Removes name under the directory dirfd on disk, recursively, following no link. */
int gv_tree_rm_at(int dirfd, const char *name);

#endif
