/* An index of a tarball's members (name -> offset, size), so that a blob
 * inside an oci-archive or docker-archive is read in place, never extracted:
 * ustar and old headers, GNU long names, pax path and size. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "image/format.h"
#include "image/tarhdr.h"

#define BLOCK 512
#define LONGNAME_MAX 4096
#define PAX_MAX ((size_t)1 << 20)

struct pending {
    char *name;      /* from 'L' or pax path, for the next member */
    long long size;  /* from pax size, -1 when none */
};

/* name + prefix of a ustar header, NUL-terminated. */
static void header_name(const unsigned char *h, char *out, size_t outsz)
{
    char name[101], prefix[156];
    memcpy(name, h, 100);
    name[100] = '\0';
    prefix[0] = '\0';
    if (!memcmp(h + 257, "ustar", 5)) {
        memcpy(prefix, h + 345, 155);
        prefix[155] = '\0';
    }
    if (prefix[0])
        snprintf(out, outsz, "%s/%s", prefix, name);
    else
        snprintf(out, outsz, "%s", name);
}

static char *clean_name(const char *s)
{
    while (s[0] == '.' && s[1] == '/')
        for (s += 2; *s == '/';)
            s++;
    char *n = strdup(s);
    if (!n)
        return NULL;
    size_t len = strlen(n);
    while (len > 0 && n[len - 1] == '/')
        n[--len] = '\0';
    return n;
}

static int read_exact(gv_tar_pread_fn rd, void *ctx, void *buf, size_t len, off_t off)
{
    size_t got = 0;
    while (got < len) {
        ssize_t r = rd(ctx, (char *)buf + got, len - got, off + (off_t)got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        got += (size_t)r;
    }
    return 0;
}

/* The pax records "LEN key=value\n" of data[0..len): path and size. */
static int pax_parse(const char *data, size_t len, struct pending *p)
{
    size_t i = 0;
    while (i < len) {
        size_t j = i, rl = 0;
        while (j < len && data[j] >= '0' && data[j] <= '9' && rl < len)
            rl = rl * 10 + (size_t)(data[j++] - '0');
        if (j >= len || data[j] != ' ' || rl == 0 || rl > len - i)
            return -1;
        const char *kv = data + j + 1, *end = data + i + rl;
        if (end[-1] != '\n')
            return -1;
        const char *eq = memchr(kv, '=', (size_t)(end - kv));
        if (!eq)
            return -1;
        size_t klen = (size_t)(eq - kv), vlen = (size_t)(end - 1 - eq - 1);
        if (klen == 4 && !memcmp(kv, "path", 4)) {
            free(p->name);
            p->name = strndup(eq + 1, vlen);
            if (!p->name || strlen(p->name) != vlen)
                return -1;
        } else if (klen == 4 && !memcmp(kv, "size", 4)) {
            long long v = 0;
            if (vlen == 0 || vlen > 18)
                return -1;
            for (size_t k = 0; k < vlen; k++) {
                char c = eq[1 + k];
                if (c < '0' || c > '9')
                    return -1;
                v = v * 10 + (c - '0');
            }
            p->size = v;
        }
        i += rl;
    }
    return 0;
}

static int add_member(struct gv_tarindex *t, size_t *cap, char *name, off_t off, off_t size,
                      char type)
{
    if (t->n == *cap) {
        size_t nc = *cap ? *cap * 2 : 16;
        struct gv_tar_member *m = realloc(t->m, nc * sizeof *m);
        if (!m)
            return -1;
        t->m = m;
        *cap = nc;
    }
    t->m[t->n++] = (struct gv_tar_member){name, off, size, type};
    return 0;
}

/* The data of a 'L' or 'x' member, whole (bounded), NUL-terminated. */
static int read_meta(gv_tar_pread_fn rd, void *ctx, off_t off, long long size, size_t max,
                     char **out)
{
    if (size < 0 || (unsigned long long)size > max)
        return -1;
    char *buf = malloc((size_t)size + 1);
    if (!buf)
        return -1;
    if (read_exact(rd, ctx, buf, (size_t)size, off) != 0) {
        free(buf);
        return -1;
    }
    buf[size] = '\0';
    *out = buf;
    return 0;
}

static int meta_member(gv_tar_pread_fn rd, void *ctx, const unsigned char *h, off_t data,
                       long long size, struct pending *p)
{
    char *buf = NULL;
    size_t max = h[156] == 'L' ? LONGNAME_MAX : PAX_MAX;
    if (read_meta(rd, ctx, data, size, max, &buf) != 0)
        return -1;
    int rc = 0;
    if (h[156] == 'L') {
        free(p->name);
        p->name = buf; /* its own NUL ends it */
        return 0;
    }
    if (h[156] == 'x')
        rc = pax_parse(buf, (size_t)size, p);
    free(buf);
    return rc;
}

int gv_tarindex_build(gv_tar_pread_fn rd, void *ctx, off_t total, const char *what,
                      struct gv_tarindex *out, struct gv_err *err)
{
    memset(out, 0, sizeof *out);
    size_t cap = 0;
    struct pending p = {NULL, -1};
    unsigned char h[BLOCK];
    off_t off = 0;
    int rc = GV_OK;
    char name[LONGNAME_MAX + 160] = "";
    for (;;) {
        if (off + BLOCK > total) {
            if (off == total && out->n > 0)
                break; /* no end-of-archive blocks: accepted, as tar does */
            if (off == 0) {
                rc = gv_err_set(err, GV_E_FORMAT, "%s: not a tar archive (%lld bytes)", what,
                                (long long)total);
                break;
            }
            rc = gv_err_set(err, GV_E_FORMAT, "%s: truncated tar header at byte %lld%s%s", what,
                            (long long)off, name[0] ? " after member " : "", name);
            break;
        }
        if (read_exact(rd, ctx, h, BLOCK, off) != 0) {
            rc = gv_err_set(err, GV_E_IO, "%s: cannot read byte %lld: %s", what, (long long)off,
                            strerror(errno ? errno : EIO));
            break;
        }
        if (gv_tar_all_zero(h))
            break;
        if (!gv_tar_checksum_ok(h)) {
            rc = gv_err_set(err, GV_E_FORMAT, "%s: not a tar archive (bad header checksum at byte %lld)",
                            what, (long long)off);
            break;
        }
        long long size = gv_tar_number(h + 124, 12);
        char type = h[156] ? (char)h[156] : '0';
        header_name(h, name, sizeof name);
        if (p.name)
            snprintf(name, sizeof name, "%s", p.name);
        if (p.size >= 0 && type != 'x' && type != 'L' && type != 'g')
            size = p.size;
        if (size < 0) {
            rc = gv_err_set(err, GV_E_FORMAT, "%s: member %s: bad size field", what, name);
            break;
        }
        off_t data = off + BLOCK;
        if (size > total - data) {
            rc = gv_err_set(err, GV_E_FORMAT,
                            "%s: truncated: member %s needs %lld bytes, %lld left", what, name,
                            size, (long long)(total - data));
            break;
        }
        if (type == 'L' || type == 'x') {
            if (meta_member(rd, ctx, h, data, size, &p) != 0) {
                rc = gv_err_set(err, GV_E_FORMAT, "%s: bad %s header at byte %lld", what,
                                type == 'L' ? "GNU long name" : "pax", (long long)off);
                break;
            }
        } else if (type != 'g') {
            if (out->n >= GV_TAR_MEMBERS_MAX) {
                rc = gv_err_set(err, GV_E_FORMAT, "%s: more than %d members", what,
                                GV_TAR_MEMBERS_MAX);
                break;
            }
            char *n = clean_name(name);
            if (!n || add_member(out, &cap, n, data, (type == '0' || type == '7') ? size : 0,
                                 type == '7' ? '0' : type) != 0) {
                free(n);
                rc = gv_err_set(err, GV_E_NOMEM, "%s: out of memory", what);
                break;
            }
            free(p.name);
            p.name = NULL;
            p.size = -1;
        }
        off = data + ((size + BLOCK - 1) / BLOCK) * BLOCK;
    }
    free(p.name);
    if (rc != GV_OK)
        gv_tarindex_free(out);
    return rc;
}

static ssize_t fd_pread(void *ctx, void *buf, size_t len, off_t off)
{
    return pread(*(int *)ctx, buf, len, off);
}

int gv_tarindex_build_fd(int fd, const char *what, struct gv_tarindex *out, struct gv_err *err)
{
    struct stat st;
    if (fstat(fd, &st) != 0)
        return gv_err_set(err, GV_E_IO, "%s: %s", what, strerror(errno));
    return gv_tarindex_build(fd_pread, &fd, st.st_size, what, out, err);
}

struct memsrc {
    const unsigned char *p;
    size_t len;
};

static ssize_t mem_pread(void *ctx, void *buf, size_t len, off_t off)
{
    const struct memsrc *m = ctx;
    if (off < 0 || (size_t)off >= m->len)
        return 0;
    if (len > m->len - (size_t)off)
        len = m->len - (size_t)off;
    memcpy(buf, m->p + off, len);
    return (ssize_t)len;
}

int gv_tarindex_build_mem(const void *data, size_t len, const char *what, struct gv_tarindex *out,
                          struct gv_err *err)
{
    struct memsrc m = {data, len};
    return gv_tarindex_build(mem_pread, &m, (off_t)len, what, out, err);
}

const struct gv_tar_member *gv_tarindex_find(const struct gv_tarindex *t, const char *name)
{
    for (size_t i = t->n; i-- > 0;)
        if (!strcmp(t->m[i].name, name))
            return &t->m[i];
    return NULL;
}

void gv_tarindex_free(struct gv_tarindex *t)
{
    for (size_t i = 0; i < t->n; i++)
        free(t->m[i].name);
    free(t->m);
    t->m = NULL;
    t->n = 0;
}
