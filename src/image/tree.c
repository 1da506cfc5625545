/* The staging tree: its directory under the cache, the index of what the
 * layers made, resolution of paths through that index as in a chroot, and
 * removal following no link. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/fs.h"
#include "base/sha256.h"
#include "image/stage.h"
#include "image/tree.h"

#define GV_LINK_DEPTH 40

static uint64_t path_hash(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
    return h;
}

static int index_grow(struct gv_image_tree *t)
{
    size_t nb = t->nbuckets ? t->nbuckets * 2 : 1024;
    struct gv_node **b = calloc(nb, sizeof *b);
    if (!b)
        return -1;
    for (size_t i = 0; i < t->nbuckets; i++) {
        struct gv_node *n = t->buckets[i];
        while (n) {
            struct gv_node *next = n->hnext;
            n->hnext = b[n->hash & (nb - 1)];
            b[n->hash & (nb - 1)] = n;
            n = next;
        }
    }
    free(t->buckets);
    t->buckets = b;
    t->nbuckets = nb;
    return 0;
}

/* The node of path (no leading "/", no link resolved), NULL when none. */
static struct gv_node *index_find(const struct gv_image_tree *t, const char *path, size_t n)
{
    uint64_t h = path_hash(path, n);
    for (struct gv_node *x = t->buckets[h & (t->nbuckets - 1)]; x; x = x->hnext)
        if (x->hash == h && strncmp(x->path, path, n) == 0 && x->path[n] == '\0')
            return x;
    return NULL;
}

static void index_unlink(struct gv_image_tree *t, struct gv_node *node)
{
    struct gv_node **pp = &t->buckets[node->hash & (t->nbuckets - 1)];
    while (*pp && *pp != node)
        pp = &(*pp)->hnext;
    if (*pp)
        *pp = node->hnext;
    t->count--;
}

struct gv_node *gv_tree_child(const struct gv_image_tree *t, const struct gv_node *dir,
                              const char *name)
{
    size_t dl = strlen(dir->path), nl = strlen(name);
    char stackbuf[512];
    char *p = dl + nl + 2 <= sizeof stackbuf ? stackbuf : malloc(dl + nl + 2);
    if (!p)
        return NULL;
    size_t n = 0;
    if (dl) {
        memcpy(p, dir->path, dl);
        p[dl] = '/';
        n = dl + 1;
    }
    memcpy(p + n, name, nl + 1);
    struct gv_node *x = index_find(t, p, n + nl);
    if (p != stackbuf)
        free(p);
    return x;
}

struct gv_node *gv_tree_add(struct gv_image_tree *t, struct gv_node *dir, const char *name,
                            enum gv_node_type type, int layer)
{
    if ((t->count + 1) * 4 > t->nbuckets * 3 && index_grow(t) != 0)
        return NULL;
    struct gv_node *x = calloc(1, sizeof *x);
    size_t dl = dir ? strlen(dir->path) : 0, nl = strlen(name);
    if (!x || !(x->path = malloc(dl + nl + 2))) {
        free(x);
        return NULL;
    }
    size_t n = 0;
    if (dl) {
        memcpy(x->path, dir->path, dl);
        x->path[dl] = '/';
        n = dl + 1;
    }
    memcpy(x->path + n, name, nl + 1);
    x->name = x->path + n;
    x->type = type;
    x->layer = layer;
    x->parent = dir;
    if (dir) {
        x->next = dir->child;
        if (dir->child)
            dir->child->prev = x;
        dir->child = x;
    }
    x->hash = path_hash(x->path, n + nl);
    x->hnext = t->buckets[x->hash & (t->nbuckets - 1)];
    t->buckets[x->hash & (t->nbuckets - 1)] = x;
    t->count++;
    return x;
}

static void node_free(struct gv_image_tree *t, struct gv_node *node)
{
    while (node->child) {
        struct gv_node *c = node->child;
        node->child = c->next;
        node_free(t, c);
    }
    if (t)
        index_unlink(t, node);
    free(node->path);
    free(node->target);
    free(node);
}

static void node_detach(struct gv_node *node)
{
    if (node->prev)
        node->prev->next = node->next;
    else if (node->parent)
        node->parent->child = node->next;
    if (node->next)
        node->next->prev = node->prev;
    node->prev = node->next = NULL;
}

int gv_tree_rm_at(int at, const char *name)
{
    if (unlinkat(at, name, 0) == 0 || errno == ENOENT)
        return 0;
    if (errno != EISDIR && errno != EPERM)
        return -1;
    int fd = openat(at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return -1;
    DIR *d = fdopendir(fd);
    if (!d) {
        close(fd);
        return -1;
    }
    int rc = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        if (gv_tree_rm_at(dirfd(d), e->d_name) != 0)
            rc = -1;
    }
    closedir(d);
    if (unlinkat(at, name, AT_REMOVEDIR) != 0 && errno != ENOENT)
        rc = -1;
    return rc;
}

static void cache_drop(struct gv_image_tree *t)
{
    if (t->cachefd >= 0 && t->cachefd != t->rootfd)
        close(t->cachefd);
    t->cachefd = -1;
    t->cached = NULL;
}

int gv_tree_open_dir(struct gv_image_tree *t, const struct gv_node *dir)
{
    int fd = dup(t->rootfd);
    const char *p = dir->path;
    char comp[256];
    while (fd >= 0 && *p) {
        const char *slash = strchr(p, '/');
        size_t n = slash ? (size_t)(slash - p) : strlen(p);
        if (n >= sizeof comp) {
            close(fd);
            errno = ENAMETOOLONG;
            return -1;
        }
        memcpy(comp, p, n);
        comp[n] = '\0';
        int next = openat(fd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        close(fd);
        fd = next;
        p += n + (slash ? 1 : 0);
    }
    return fd;
}

int gv_tree_dirfd(struct gv_image_tree *t, const struct gv_node *dir)
{
    if (dir == t->top)
        return t->rootfd;
    if (t->cached == dir)
        return t->cachefd;
    cache_drop(t);
    int fd = gv_tree_open_dir(t, dir);
    if (fd >= 0) {
        t->cachefd = fd;
        t->cached = (struct gv_node *)dir;
    }
    return fd;
}

int gv_tree_remove(struct gv_image_tree *t, struct gv_node *node, struct gv_err *err)
{
    cache_drop(t);
    int fd = gv_tree_open_dir(t, node->parent);
    if (fd < 0 || gv_tree_rm_at(fd, node->name) != 0) {
        int e = errno;
        if (fd >= 0)
            close(fd);
        return gv_err_set(err, GV_E_IO, "%s: cannot remove: %s", node->path, strerror(e));
    }
    close(fd);
    node_detach(node);
    node_free(t, node);
    return GV_OK;
}

static int make_dir(struct gv_image_tree *t, struct gv_node *dir, const char *name, int layer,
                    struct gv_node **out)
{
    int fd = gv_tree_dirfd(t, dir);
    if (fd < 0 || (mkdirat(fd, name, 0755) != 0 && errno != EEXIST))
        return GV_E_IO;
    *out = gv_tree_add(t, dir, name, GV_NODE_DIR, layer);
    return *out ? GV_OK : GV_E_NOMEM;
}

static int walk(struct gv_image_tree *t, struct gv_node *cur, const char *path, int flags,
                int layer, int depth, struct gv_node **out, char *why, size_t whysz)
{
    *out = NULL;
    if (path[0] == '/')
        cur = t->top;
    const char *p = path;
    char comp[256];
    while (*p) {
        while (*p == '/')
            p++;
        if (!*p)
            break;
        const char *end = strchr(p, '/');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        const char *rest = p + n;
        while (*rest == '/')
            rest++;
        int last = *rest == '\0';
        if (n >= sizeof comp) {
            snprintf(why, whysz, "a name over 255 bytes");
            return GV_E_FORMAT;
        }
        memcpy(comp, p, n);
        comp[n] = '\0';
        p = rest;
        if (strcmp(comp, ".") == 0)
            continue;
        if (strcmp(comp, "..") == 0) {
            if (cur == t->top) {
                if (flags & GV_WALK_STRICT) {
                    snprintf(why, whysz, "\"..\" climbs out of the root");
                    return GV_E_FORMAT;
                }
                continue;
            }
            cur = cur->parent;
            continue;
        }
        struct gv_node *c = gv_tree_child(t, cur, comp);
        if (!c) {
            if (last && !(flags & GV_WALK_CREATE))
                return GV_OK;
            if (!(flags & GV_WALK_CREATE))
                return GV_E_NOTFOUND;
            int rc = make_dir(t, cur, comp, layer, &c);
            if (rc != GV_OK) {
                snprintf(why, whysz, "cannot make directory %s/%s: %s", cur->path, comp,
                         strerror(errno));
                return rc;
            }
        }
        if (c->type == GV_NODE_SYM && (!last || (flags & GV_WALK_FOLLOW))) {
            if (depth >= GV_LINK_DEPTH) {
                snprintf(why, whysz, "too many levels of links at /%s", c->path);
                return GV_E_FORMAT;
            }
            struct gv_node *r;
            int rc = walk(t, cur, c->target, flags | GV_WALK_FOLLOW, layer, depth + 1, &r, why,
                          whysz);
            if (rc != GV_OK) {
                if (rc == GV_E_FORMAT && strncmp(why, "link", 4) != 0) {
                    char inner[512];
                    snprintf(inner, sizeof inner, "%s", why);
                    snprintf(why, whysz, "link /%s -> %s: %s", c->path, c->target, inner);
                }
                return rc;
            }
            if (!r && !last)
                return GV_E_NOTFOUND;
            c = r;
            if (!c)
                return GV_OK;
        }
        if (!last && c->type != GV_NODE_DIR) {
            snprintf(why, whysz, "/%s is not a directory", c->path);
            return GV_E_NOTFOUND;
        }
        cur = c;
    }
    *out = cur;
    return GV_OK;
}

int gv_tree_walk(struct gv_image_tree *t, struct gv_node *dir, const char *path, int flags,
                 int layer, struct gv_node **out, char *why, size_t whysz)
{
    why[0] = '\0';
    return walk(t, dir, path, flags, layer, 0, out, why, whysz);
}

int gv_stage_begin(enum gv_stage_mode mode, const char *parent, size_t nlayers,
                   struct gv_image_tree **out, struct gv_err *err)
{
    *out = NULL;
    struct gv_image_tree *t = calloc(1, sizeof *t);
    if (!t)
        return gv_err_set(err, GV_E_NOMEM, "staging tree: out of memory");
    t->rootfd = t->cachefd = -1;
    t->mode = mode;
    t->nlayers = nlayers;
    char dir[4096];
    if (parent)
        snprintf(dir, sizeof dir, "%s", parent);
    else if (gv_cache_dir(dir, sizeof dir, "images", err) != GV_OK) {
        free(t);
        return err ? err->code : GV_E_IO;
    }
    int n = snprintf(t->root, sizeof t->root, "%s/stage-XXXXXX", dir);
    if (n < 0 || (size_t)n >= sizeof t->root || !mkdtemp(t->root)) {
        int rc = gv_err_set(err, GV_E_IO, "%s: cannot make a staging directory: %s", dir,
                            strerror(errno));
        free(t);
        return rc;
    }
    t->rootfd = open(t->root, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    t->stats = calloc(nlayers ? nlayers : 1, sizeof *t->stats);
    if (t->rootfd < 0 || !t->stats || index_grow(t) != 0 ||
        !(t->top = gv_tree_add(t, NULL, "", GV_NODE_DIR, -1))) {
        int rc = gv_err_set(err, GV_E_IO, "%s: cannot open the staging directory", t->root);
        gv_image_tree_free(t, 0);
        return rc;
    }
    *out = t;
    return GV_OK;
}

const char *gv_image_tree_root(const struct gv_image_tree *t) { return t->root; }

static struct gv_node *lookup(const struct gv_image_tree *t, const char *path)
{
    struct gv_node *n = NULL;
    char why[256];
    if (gv_tree_walk((struct gv_image_tree *)t, t->top, path, GV_WALK_FOLLOW, -1, &n, why,
                     sizeof why) != GV_OK)
        return NULL;
    return n;
}

int gv_image_tree_digest(const struct gv_image_tree *t, const char *path, char hex[65])
{
    const struct gv_node *n = lookup(t, path);
    if (!n || n->type != GV_NODE_REG || !n->hashed)
        return 0;
    gv_sha256_hex(n->digest, hex);
    return 1;
}

int gv_image_tree_layer(const struct gv_image_tree *t, const char *path)
{
    const struct gv_node *n = lookup(t, path);
    return n ? n->layer : -1;
}

const struct gv_image_layer_stats *gv_image_tree_stats(const struct gv_image_tree *t, size_t i)
{
    return i < t->nlayers ? &t->stats[i] : NULL;
}

void gv_image_tree_free(struct gv_image_tree *t, int keep)
{
    if (!t)
        return;
    cache_drop(t);
    if (!keep && t->rootfd >= 0) {
        DIR *d = fdopendir(dup(t->rootfd));
        struct dirent *e;
        while (d && (e = readdir(d)) != NULL)
            if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
                gv_tree_rm_at(dirfd(d), e->d_name);
        if (d)
            closedir(d);
    }
    if (!keep && t->root[0])
        rmdir(t->root);
    if (t->rootfd >= 0)
        close(t->rootfd);
    if (t->top)
        node_free(NULL, t->top);
    free(t->buckets);
    free(t->stats);
    free(t);
}
