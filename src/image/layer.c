/* Applying one layer: a reading thread reads the blob in chunks, hashes it
 * (digest, size), decompresses it (gzip through inflate.c, zstd or none,
 * checked against the magic bytes) and hashes the tar (diff_id) into a small
 * ring of 1 MiB buffers; the calling thread reads the tar from the ring and
 * applies its members to the staging tree through the index (tree.c), writing
 * only with *at() calls under the staging root. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include "base/sha256.h"
#include "image/inflate.h"
#include "image/stage.h"
#include "image/sparse.h"
#include "image/tree.h"

#define RING_N 4
#define RING_BUF (1u << 20)
#define HEAD_MAX 64
/* directories a member may be nested in: real images use a few dozen */
#define MAX_DEPTH 256
#define MAX_DEPTH_TEXT "256"
/* kept ELF files over this size are written sparse (sparse.c) */
#define SPARSE_MIN (1LL << 20)
/* zstd frames needing a window over 64 MiB are refused: memory stays bounded */
#define ZSTD_WINDOW_LOG_MAX 26

struct gv_tsrc {
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    unsigned char *buf[RING_N];
    size_t len[RING_N];
    unsigned long long produced, released; /* buffers */
    int eof, cancel, status;
    struct gv_err err; /* the reader's error */
    /* the consumer's view of the buffer it holds */
    int holding;
    size_t pos;
    /* the reader's side */
    struct gv_blob *blob;
    const struct gv_image_layer *meta;
    const char *label;
    unsigned char *in;
    size_t cap; /* bytes of each buffer: RING_BUF, less for a small blob */
    /* the consumer's digest of the tar (the config's diff_id), over each buffer
     * it is done with: the reader has the decompression and the blob's digest */
    struct gv_sha256 diff;
    int diff_checked, diff_status;
};

struct gv_apply {
    struct gv_image_tree *t;
    int layer;
    const char *label;
    struct gv_image_layer_stats *st;
    unsigned char *head;
};

/* ---- the reading thread ---- */

static unsigned char *ring_slot(struct gv_tsrc *s)
{
    pthread_mutex_lock(&s->mu);
    while (s->produced - s->released == RING_N && !s->cancel)
        pthread_cond_wait(&s->cv, &s->mu);
    unsigned char *b = s->cancel ? NULL : s->buf[s->produced % RING_N];
    pthread_mutex_unlock(&s->mu);
    return b;
}

static void ring_publish(struct gv_tsrc *s, size_t n)
{
    pthread_mutex_lock(&s->mu);
    s->len[s->produced % RING_N] = n;
    s->produced++;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
}

struct out_state {
    unsigned char *slot;
    size_t fill;
};

/* Publishes the slot when full (or flush), takes the next one. 0, or -1 when cancelled. */
static int out_next(struct gv_tsrc *s, struct out_state *o, int flush)
{
    if (o->slot && (o->fill == s->cap || (flush && o->fill))) {
        ring_publish(s, o->fill);
        o->slot = NULL;
        o->fill = 0;
    }
    if (!o->slot && !flush)
        o->slot = ring_slot(s);
    return flush || o->slot ? 0 : -1;
}

static int magic_codec(const unsigned char *p, size_t n)
{
    if (n >= 2 && p[0] == 0x1f && p[1] == 0x8b)
        return GV_CODEC_GZIP;
    if (n >= 4 && p[0] == 0x28 && p[1] == 0xb5 && p[2] == 0x2f && p[3] == 0xfd)
        return GV_CODEC_ZSTD;
    return GV_CODEC_NONE;
}

static const char *codec_name(int c)
{
    return c == GV_CODEC_GZIP ? "gzip" : c == GV_CODEC_ZSTD ? "zstd" : "uncompressed tar";
}

struct dec {
    int codec;
    struct gv_inflate *gz;
    ZSTD_DCtx *zs;
    size_t zs_last; /* ZSTD_decompressStream's last hint: 0 when a frame is complete */
};

static int dec_run(struct gv_tsrc *s, struct dec *d, struct out_state *o, const unsigned char *in,
                   size_t n)
{
    if (d->codec == GV_CODEC_NONE) {
        while (n) {
            if (out_next(s, o, 0) != 0)
                return GV_E_USAGE;
            size_t k = s->cap - o->fill < n ? s->cap - o->fill : n;
            memcpy(o->slot + o->fill, in, k);
            o->fill += k;
            in += k;
            n -= k;
        }
        return GV_OK;
    }
    if (d->codec == GV_CODEC_GZIP) {
        while (n) {
            if (out_next(s, o, 0) != 0)
                return GV_E_USAGE;
            unsigned char *p = o->slot + o->fill;
            size_t room = s->cap - o->fill;
            int rc = gv_inflate_feed(d->gz, &in, &n, &p, &room, &s->err);
            o->fill = s->cap - room;
            if (rc != GV_OK)
                return gv_err_prefix(&s->err, "%s", s->label);
        }
        return GV_OK;
    }
    ZSTD_inBuffer zi = {in, n, 0};
    while (zi.pos < zi.size) {
        if (out_next(s, o, 0) != 0)
            return GV_E_USAGE;
        ZSTD_outBuffer zo = {o->slot, s->cap, o->fill};
        size_t r = ZSTD_decompressStream(d->zs, &zo, &zi);
        o->fill = zo.pos;
        if (ZSTD_isError(r))
            return gv_err_set(&s->err, GV_E_FORMAT, "%s: corrupt zstd stream (%s)", s->label,
                              ZSTD_getErrorName(r));
        d->zs_last = r;
    }
    return GV_OK;
}

/* Drains what the decompressor still holds once the input is over. */
static int dec_finish(struct gv_tsrc *s, struct dec *d, struct out_state *o)
{
    if (d->codec == GV_CODEC_GZIP) {
        int done = 0;
        while (!done) {
            if (out_next(s, o, 0) != 0)
                return GV_E_USAGE;
            unsigned char *p = o->slot + o->fill;
            size_t room = s->cap - o->fill;
            int rc = gv_inflate_finish(d->gz, &p, &room, &done, &s->err);
            o->fill = s->cap - room;
            if (rc != GV_OK)
                return gv_err_prefix(&s->err, "%s", s->label);
        }
    } else if (d->codec == GV_CODEC_ZSTD) {
        /* 0: the last frame is complete and flushed (a call now would ask
         * for the next frame's header) */
        while (d->zs_last != 0) {
            if (out_next(s, o, 0) != 0)
                return GV_E_USAGE;
            ZSTD_inBuffer zi = {NULL, 0, 0};
            ZSTD_outBuffer zo = {o->slot, s->cap, o->fill};
            size_t r = ZSTD_decompressStream(d->zs, &zo, &zi);
            int progressed = zo.pos != o->fill;
            o->fill = zo.pos;
            if (ZSTD_isError(r))
                return gv_err_set(&s->err, GV_E_FORMAT, "%s: corrupt zstd stream (%s)",
                                  s->label, ZSTD_getErrorName(r));
            d->zs_last = r;
            if (r != 0 && !progressed)
                return gv_err_set(&s->err, GV_E_FORMAT, "%s: truncated zstd stream", s->label);
        }
    }
    return out_next(s, o, 1);
}

static int hex_eq(const uint8_t digest[32], const char *want)
{
    char hex[65];
    gv_sha256_hex(digest, hex);
    return strncmp(want, "sha256:", 7) == 0 && strcmp(want + 7, hex) == 0;
}

static int read_all(struct gv_tsrc *s, struct dec *d, struct out_state *o)
{
    struct gv_sha256 blob;
    gv_sha256_init(&blob);
    long long total = 0;
    int first = 1, rc = GV_OK;
    for (;;) {
        ssize_t n = gv_blob_read(s->blob, s->in, s->cap, &s->err);
        if (n < 0)
            return gv_err_prefix(&s->err, "%s", s->label);
        if (n == 0)
            break;
        gv_sha256_update(&blob, s->in, (size_t)n);
        total += n;
        if (first) {
            int found = magic_codec(s->in, (size_t)n);
            if (found != (int)s->meta->codec)
                return gv_err_set(&s->err, GV_E_FORMAT, "%s: the media type says %s, the bytes "
                                  "are %s", s->label, codec_name(s->meta->codec),
                                  codec_name(found));
            first = 0;
        }
        if ((rc = dec_run(s, d, o, s->in, (size_t)n)) != GV_OK)
            return rc;
    }
    if (first && s->meta->codec != GV_CODEC_NONE)
        return gv_err_set(&s->err, GV_E_FORMAT, "%s: an empty blob, the media type says %s",
                          s->label, codec_name(s->meta->codec));
    if ((rc = dec_finish(s, d, o)) != GV_OK)
        return rc;
    uint8_t dg[32];
    gv_sha256_final(&blob, dg);
    if (total != s->meta->size)
        return gv_err_set(&s->err, GV_E_FORMAT, "%s: %lld bytes, the manifest says %lld",
                          s->label, total, s->meta->size);
    if (!hex_eq(dg, s->meta->digest))
        return gv_err_set(&s->err, GV_E_FORMAT, "%s: digest mismatch, the blob was changed",
                          s->label);
    return GV_OK;
}

static void *reader_main(void *arg)
{
    struct gv_tsrc *s = arg;
    struct dec d;
    memset(&d, 0, sizeof d);
    d.codec = (int)s->meta->codec;
    struct out_state o;
    memset(&o, 0, sizeof o);
    int rc = GV_OK;
    if (d.codec == GV_CODEC_GZIP) {
        if ((rc = gv_inflate_start(&d.gz, &s->err)) != GV_OK)
            gv_err_prefix(&s->err, "%s", s->label);
    } else if (d.codec == GV_CODEC_ZSTD) {
        d.zs = ZSTD_createDCtx();
        if (!d.zs)
            rc = gv_err_set(&s->err, GV_E_NOMEM, "%s: cannot start zstd", s->label);
        else
            ZSTD_DCtx_setParameter(d.zs, ZSTD_d_windowLogMax, ZSTD_WINDOW_LOG_MAX);
    }
    if (rc == GV_OK)
        rc = read_all(s, &d, &o);
    gv_inflate_end(d.gz);
    ZSTD_freeDCtx(d.zs);
    pthread_mutex_lock(&s->mu);
    s->status = rc;
    s->eof = 1;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
    return NULL;
}

/* ---- the consumer's side ---- */

/* Every byte of the tar seen: its digest against the config's diff_id (once). */
static int diff_id_check(struct gv_tsrc *s)
{
    if (s->diff_checked)
        return s->diff_status;
    uint8_t dg[32];
    gv_sha256_final(&s->diff, dg);
    s->diff_checked = 1;
    s->diff_status = hex_eq(dg, s->meta->diff_id)
                         ? GV_OK
                         : gv_err_set(&s->err, GV_E_FORMAT, "%s: the uncompressed tar's sha256 "
                                      "is not the config's diff_id %s", s->label,
                                      s->meta->diff_id);
    return s->diff_status;
}

long gv_tsrc_view(struct gv_tsrc *s, const unsigned char **p, size_t max, struct gv_err *err)
{
    pthread_mutex_lock(&s->mu);
    for (;;) {
        if (s->holding) {
            size_t idx = s->released % RING_N;
            if (s->pos < s->len[idx]) {
                size_t n = s->len[idx] - s->pos;
                if (n > max)
                    n = max;
                *p = s->buf[idx] + s->pos;
                s->pos += n;
                pthread_mutex_unlock(&s->mu);
                return (long)n;
            }
            /* the reader leaves this buffer alone until it is released */
            pthread_mutex_unlock(&s->mu);
            gv_sha256_update(&s->diff, s->buf[idx], s->len[idx]);
            pthread_mutex_lock(&s->mu);
            s->holding = 0;
            s->released++;
            pthread_cond_broadcast(&s->cv);
        }
        while (s->produced == s->released && !s->eof)
            pthread_cond_wait(&s->cv, &s->mu);
        if (s->produced == s->released) { /* the reader is done */
            int st = s->status;
            pthread_mutex_unlock(&s->mu);
            if (st == GV_OK)
                st = diff_id_check(s);
            if (st != GV_OK && err)
                *err = s->err;
            return st;
        }
        s->holding = 1;
        s->pos = 0;
    }
}

/* ---- applying members ---- */

static int member_err(struct gv_apply *a, const struct gv_member *m, struct gv_err *err,
                      int code, const char *what)
{
    return gv_err_set(err, code, "%s: member %s: %s", a->label, m->name[0] ? m->name : "/",
                      what);
}

static int content_err(struct gv_apply *a, const struct gv_member *m, long r, struct gv_err *err)
{
    if (r < 0)
        return (int)r;
    return member_err(a, m, err, GV_E_FORMAT, "truncated");
}

static int skip_content(struct gv_apply *a, const struct gv_member *m, struct gv_tsrc *s,
                        struct gv_err *err)
{
    long long left = m->size;
    while (left > 0) {
        const unsigned char *p;
        long r = gv_tsrc_view(s, &p, left > RING_BUF ? RING_BUF : (size_t)left, err);
        if (r <= 0)
            return content_err(a, m, r, err);
        left -= r;
    }
    return GV_OK;
}

/* Writes p[0..n), the file's bytes at offset off, leaving the holes sp
 * makes (none without sp). 0, or -1 with errno set. */
static int write_kept(int fd, struct gv_sparse *sp, const unsigned char *p, size_t n,
                      long long off)
{
    if (sp && gv_sparse_feed(sp, p, n) != 0) {
        errno = ENOMEM;
        return -1;
    }
    size_t done = 0;
    while (done < n) {
        int w = 1;
        size_t k = sp ? gv_sparse_run(sp, off + (long long)done, n - done, &w) : n - done;
        while (w && k) {
            ssize_t r = pwrite(fd, p + done, k, (off_t)(off + (long long)done));
            if (r < 0 && errno == EINTR)
                continue;
            if (r <= 0)
                return -1;
            done += (size_t)r;
            k -= (size_t)r;
        }
        done += k;
    }
    return 0;
}

/* Whether a kept file is written sparse (sparse.c): an ELF file with offload
 * bundles to leave out, in a snapshot's staging tree only. */
static int sparse_candidate(const struct gv_apply *a, const struct gv_member *m, size_t hl)
{
    return a->t->mode == GV_STAGE_SNAPSHOT && m->size > SPARSE_MIN && hl >= 4 &&
           memcmp(a->head, "\177ELF", 4) == 0;
}

/* Streams a regular file's content: hashed and written when kept. */
static int file_content(struct gv_apply *a, const struct gv_member *m, struct gv_tsrc *s,
                        int fd, struct gv_node *node, struct gv_err *err)
{
    struct gv_sha256 h;
    gv_sha256_init(&h);
    size_t hl = m->size < HEAD_MAX ? (size_t)m->size : HEAD_MAX;
    size_t got = 0;
    while (got < hl) {
        const unsigned char *p;
        long r = gv_tsrc_view(s, &p, hl - got, err);
        if (r <= 0)
            return content_err(a, m, r, err);
        memcpy(a->head + got, p, (size_t)r);
        got += (size_t)r;
    }
    int keep = a->t->mode == GV_STAGE_FULL || gv_image_keep(node->path, m->size, a->head, hl);
    struct gv_sparse sparse, *sp = NULL;
    if (keep && sparse_candidate(a, m, hl)) {
        gv_sparse_start(&sparse, m->size);
        sp = &sparse;
    }
    if (keep)
        gv_sha256_update(&h, a->head, hl);
    int rc = keep && write_kept(fd, sp, a->head, hl, 0) != 0
                 ? member_err(a, m, err, GV_E_IO, strerror(errno)) : GV_OK;
    long long off = (long long)hl;
    while (!rc && off < m->size) {
        const unsigned char *p;
        long long left = m->size - off;
        long r = gv_tsrc_view(s, &p, left > RING_BUF ? RING_BUF : (size_t)left, err);
        if (r <= 0) {
            rc = content_err(a, m, r, err);
            break;
        }
        if (keep)
            gv_sha256_update(&h, p, (size_t)r);
        if (keep && write_kept(fd, sp, p, (size_t)r, off) != 0)
            rc = member_err(a, m, err, GV_E_IO, strerror(errno));
        off += r;
    }
    if (sp)
        gv_sparse_end(sp);
    if (!rc && (!keep || sp) && ftruncate(fd, m->size) != 0)
        rc = member_err(a, m, err, GV_E_IO, strerror(errno));
    if (rc)
        return rc;
    gv_sha256_final(&h, node->digest);
    node->hashed = keep;
    node->size = m->size;
    return GV_OK;
}

/* The parent directory node of name (made when missing), and the last component. */
static int parent_of(struct gv_apply *a, const struct gv_member *m, const char *name,
                     struct gv_node **dir, const char **leaf, struct gv_err *err)
{
    const char *slash = strrchr(name, '/');
    *leaf = slash ? slash + 1 : name;
    size_t depth = 0;
    for (const char *c = name; *c; c++)
        depth += *c == '/';
    if (depth >= MAX_DEPTH) /* removing the tree holds a descriptor per level */
        return member_err(a, m, err, GV_E_FORMAT, "nested deeper than " MAX_DEPTH_TEXT
                          " directories");
    if (!slash) {
        *dir = a->t->top;
        return GV_OK;
    }
    char parent[4096];
    memcpy(parent, name, (size_t)(slash - name));
    parent[slash - name] = '\0';
    char why[1024];
    int rc = gv_tree_walk(a->t, a->t->top, parent, GV_WALK_FOLLOW | GV_WALK_CREATE |
                          GV_WALK_STRICT, a->layer, dir, why, sizeof why);
    if (rc != GV_OK || !*dir)
        return member_err(a, m, err, rc == GV_E_NOMEM ? GV_E_NOMEM : GV_E_FORMAT,
                          why[0] ? why : "its directory cannot be made");
    return GV_OK;
}

/* Empties dir of what lower layers made; this layer's entries stay, whatever
 * their order in the tar, with the directories that hold them. */
static int opaque(struct gv_apply *a, struct gv_node *dir, struct gv_err *err)
{
    struct gv_node *c = dir->child;
    while (c) {
        struct gv_node *next = c->next;
        int rc = GV_OK;
        if (c->type == GV_NODE_DIR)
            rc = opaque(a, c, err);
        if (rc == GV_OK && c->layer < a->layer && !c->child)
            rc = gv_tree_remove(a->t, c, err);
        if (rc != GV_OK)
            return rc;
        c = next;
    }
    return GV_OK;
}

static int whiteout(struct gv_apply *a, const struct gv_member *m, struct gv_node *dir,
                    const char *leaf, struct gv_err *err)
{
    a->st->whiteouts++;
    if (strcmp(leaf, ".wh..wh..opq") == 0)
        return opaque(a, dir, err);
    if (strncmp(leaf, ".wh..wh.", 8) == 0) { /* aufs bookkeeping (.wh..wh.plnk) */
        a->st->whiteouts--;
        a->st->skipped++;
        return GV_OK;
    }
    const char *name = leaf + 4;
    if (!name[0] || strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
        return member_err(a, m, err, GV_E_FORMAT, "a whiteout of no name");
    struct gv_node *victim = gv_tree_child(a->t, dir, name);
    if (!victim)
        return member_err(a, m, err, GV_E_FORMAT, "a whiteout of a file no lower layer has");
    if (victim->layer == a->layer)
        return GV_OK; /* this layer made it again: it stays */
    return gv_tree_remove(a->t, victim, err);
}

static int make_reg(struct gv_apply *a, const struct gv_member *m, struct gv_tsrc *s,
                    struct gv_node *dir, const char *leaf, struct gv_err *err)
{
    int dfd = gv_tree_dirfd(a->t, dir);
    unsigned mode = (m->mode & 0111) ? 0755 : 0644;
    int fd = dfd < 0 ? -1 : openat(dfd, leaf, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
                                                   O_CLOEXEC, mode);
    if (fd < 0)
        return member_err(a, m, err, GV_E_IO, strerror(errno));
    struct gv_node *node = gv_tree_add(a->t, dir, leaf, GV_NODE_REG, a->layer);
    int rc = node ? file_content(a, m, s, fd, node, err)
                  : member_err(a, m, err, GV_E_NOMEM, "out of memory");
    close(fd);
    if (rc == GV_OK) {
        a->st->bytes += m->size;
        a->st->files++;
    }
    return rc;
}

static int make_sym(struct gv_apply *a, const struct gv_member *m, struct gv_node *dir,
                    const char *leaf, struct gv_err *err)
{
    int dfd = gv_tree_dirfd(a->t, dir);
    if (!m->link[0])
        return member_err(a, m, err, GV_E_FORMAT, "a symlink to nothing");
    if (dfd < 0 || symlinkat(m->link, dfd, leaf) != 0)
        return member_err(a, m, err, GV_E_IO, strerror(errno));
    struct gv_node *node = gv_tree_add(a->t, dir, leaf, GV_NODE_SYM, a->layer);
    if (!node || !(node->target = strdup(m->link)))
        return member_err(a, m, err, GV_E_NOMEM, "out of memory");
    a->st->files++;
    return GV_OK;
}

static int make_hard(struct gv_apply *a, const struct gv_member *m, struct gv_node *dir,
                     const char *leaf, struct gv_err *err)
{
    struct gv_node *target = NULL;
    char why[1024];
    int rc = gv_tree_walk(a->t, a->t->top, m->link, GV_WALK_STRICT, a->layer, &target, why,
                          sizeof why);
    if (rc == GV_OK && target && target->type == GV_NODE_SYM) {
        /* a hard link to a symlink: the same link again */
        struct gv_member sym = *m;
        snprintf(sym.link, sizeof sym.link, "%s", target->target);
        return make_sym(a, &sym, dir, leaf, err);
    }
    if (rc != GV_OK || !target || target->type != GV_NODE_REG) {
        char msg[5200];
        snprintf(msg, sizeof msg, "a hard link to %s, which is no regular file here", m->link);
        return member_err(a, m, err, GV_E_FORMAT, msg);
    }
    int tfd = gv_tree_open_dir(a->t, target->parent);
    int dfd = gv_tree_dirfd(a->t, dir);
    if (tfd < 0 || dfd < 0 || linkat(tfd, target->name, dfd, leaf, 0) != 0) {
        int e = errno;
        if (tfd >= 0)
            close(tfd);
        return member_err(a, m, err, GV_E_IO, strerror(e));
    }
    close(tfd);
    struct gv_node *node = gv_tree_add(a->t, dir, leaf, GV_NODE_REG, a->layer);
    if (!node)
        return member_err(a, m, err, GV_E_NOMEM, "out of memory");
    memcpy(node->digest, target->digest, sizeof node->digest);
    node->hashed = target->hashed;
    node->size = target->size;
    a->st->files++;
    return GV_OK;
}

static int make_dir(struct gv_apply *a, const struct gv_member *m, struct gv_node *dir,
                    const char *leaf, struct gv_err *err)
{
    int dfd = gv_tree_dirfd(a->t, dir);
    if (dfd < 0 || mkdirat(dfd, leaf, 0755) != 0)
        return member_err(a, m, err, GV_E_IO, strerror(errno));
    if (!gv_tree_add(a->t, dir, leaf, GV_NODE_DIR, a->layer))
        return member_err(a, m, err, GV_E_NOMEM, "out of memory");
    a->st->files++;
    return GV_OK;
}

int gv_apply_member(struct gv_apply *a, const struct gv_member *m, struct gv_tsrc *s,
                    struct gv_err *err)
{
    if (m->type == GV_MEMBER_OTHER) { /* devices, FIFOs, and kinds we do not make */
        a->st->skipped++;
        return skip_content(a, m, s, err);
    }
    if (!m->name[0]) { /* the root itself ("./") */
        if (m->type != GV_MEMBER_DIR)
            return member_err(a, m, err, GV_E_FORMAT, "an empty name");
        return skip_content(a, m, s, err);
    }
    struct gv_node *dir;
    const char *leaf;
    int rc = parent_of(a, m, m->name, &dir, &leaf, err);
    if (rc != GV_OK)
        return rc;
    if (strncmp(leaf, ".wh.", 4) == 0) {
        rc = whiteout(a, m, dir, leaf, err);
        return rc == GV_OK ? skip_content(a, m, s, err) : rc;
    }
    struct gv_node *old = gv_tree_child(a->t, dir, leaf);
    if (old && old->type == GV_NODE_DIR && m->type == GV_MEMBER_DIR) {
        old->layer = a->layer;
        a->st->files++;
        return skip_content(a, m, s, err);
    }
    if (old && m->type == GV_MEMBER_HARD && old->type == GV_NODE_REG) {
        struct gv_node *target = NULL;
        char why[256];
        if (gv_tree_walk(a->t, a->t->top, m->link, 0, a->layer, &target, why, sizeof why) ==
                GV_OK && target == old)
            return GV_OK; /* a link to itself */
    }
    if (old && (rc = gv_tree_remove(a->t, old, err)) != GV_OK)
        return rc;
    switch (m->type) {
    case GV_MEMBER_REG:
        return make_reg(a, m, s, dir, leaf, err);
    case GV_MEMBER_HARD:
        return make_hard(a, m, dir, leaf, err);
    case GV_MEMBER_SYM:
        return make_sym(a, m, dir, leaf, err);
    case GV_MEMBER_DIR:
        rc = make_dir(a, m, dir, leaf, err);
        return rc == GV_OK ? skip_content(a, m, s, err) : rc;
    default:
        return skip_content(a, m, s, err);
    }
}

/* ---- one layer ---- */

static int tsrc_start(struct gv_tsrc *s, struct gv_blob *b, const struct gv_image_layer *meta,
                      const char *label)
{
    memset(s, 0, sizeof *s);
    s->blob = b;
    s->meta = meta;
    s->label = label;
    gv_sha256_init(&s->diff);
    off_t bsz = gv_blob_size(b);
    s->cap = bsz >= (off_t)RING_BUF ? RING_BUF : bsz < (64 << 10) ? (64 << 10) : (size_t)bsz;
    s->in = malloc(s->cap);
    int ok = s->in != NULL;
    for (int i = 0; i < RING_N; i++)
        ok = ok && (s->buf[i] = malloc(s->cap)) != NULL;
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->cv, NULL);
    if (!ok || pthread_create(&s->thread, NULL, reader_main, s) != 0)
        return -1;
    return 0;
}

/* Stops the reader (when cancel) or waits for its end; frees the ring. */
static void tsrc_stop(struct gv_tsrc *s, int started, int cancel)
{
    if (started) {
        pthread_mutex_lock(&s->mu);
        if (cancel)
            s->cancel = 1;
        pthread_cond_broadcast(&s->cv);
        pthread_mutex_unlock(&s->mu);
        pthread_join(s->thread, NULL);
    }
    pthread_mutex_destroy(&s->mu);
    pthread_cond_destroy(&s->cv);
    for (int i = 0; i < RING_N; i++)
        free(s->buf[i]);
    free(s->in);
}

/* Reads what follows the end-of-archive blocks, so that the digests see it all. */
static int drain(struct gv_tsrc *s, struct gv_err *err)
{
    const unsigned char *p;
    long r;
    while ((r = gv_tsrc_view(s, &p, RING_BUF, err)) > 0)
        ;
    return (int)r;
}

int gv_stage_apply(struct gv_image_tree *t, size_t index, const struct gv_image_layer *meta,
                   struct gv_blob *b, struct gv_err *err)
{
    if (index >= t->nlayers)
        return gv_err_set(err, GV_E_USAGE, "layer %zu: the tree has %zu layers", index,
                          t->nlayers);
    char label[128];
    snprintf(label, sizeof label, "layer %zu (%.19s…)", index, meta->digest);
    struct gv_tsrc *s = malloc(sizeof *s);
    unsigned char head[HEAD_MAX];
    struct gv_apply a = {t, (int)index, label, &t->stats[index], head};
    if (!s)
        return gv_err_set(err, GV_E_NOMEM, "%s: out of memory", label);
    int rc;
    if (tsrc_start(s, b, meta, label) != 0) {
        tsrc_stop(s, 0, 1);
        free(s);
        return gv_err_set(err, GV_E_NOMEM, "%s: cannot start the reader", label);
    }
    rc = gv_tar_read(s, label, &a, err);
    if (rc == GV_OK) {
        rc = drain(s, err);
    } else if (rc != GV_E_NOMEM) {
        /* a broken stream (corrupt, changed) explains a broken tar better */
        struct gv_err why = {0};
        if (drain(s, &why) < 0)
            *err = why;
    }
    tsrc_stop(s, 1, rc != GV_OK);
    free(s);
    return rc;
}
