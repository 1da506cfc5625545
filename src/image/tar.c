/* The tar reader of a layer: ustar, GNU and pax headers, read from a stream.
 * 512-byte headers with their checksum verified; GNU long names ('L', 'K'),
 * pax extended headers ('x': path, linkpath, size; 'g' ignored); members
 * handed to the applier one by one, their content left in the stream for it
 * to read. Names are checked here (gv_tar_clean_name). */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "image/tarhdr.h"
#include "image/tree.h"

#define TAR_BLOCK 512
#define TAR_META_MAX (1 << 20) /* a pax header or GNU long name */

struct tar_ext {
    int has_path, has_link, has_size;
    char path[4096], link[4096];
    long long size;
};

static int read_exact(struct gv_tsrc *s, unsigned char *dst, size_t n, struct gv_err *err)
{
    size_t got = 0;
    while (got < n) {
        const unsigned char *p;
        long r = gv_tsrc_view(s, &p, n - got, err);
        if (r < 0)
            return (int)r;
        if (r == 0)
            return (int)got == 0 ? 1 : 2; /* 1: clean end, 2: cut short */
        memcpy(dst + got, p, (size_t)r);
        got += (size_t)r;
    }
    return 0;
}

static int skip_bytes(struct gv_tsrc *s, long long n, struct gv_err *err)
{
    while (n > 0) {
        const unsigned char *p;
        long r = gv_tsrc_view(s, &p, n > (1 << 20) ? (1 << 20) : (size_t)n, err);
        if (r < 0)
            return (int)r;
        if (r == 0)
            return 2;
        n -= r;
    }
    return 0;
}

/* An octal field (spaces and NULs around), or GNU's base-256 (high bit set).
 * -1 when malformed or too large. */
long long gv_tar_number(const unsigned char *f, size_t n)
{
    if (f[0] & 0x80) {
        if (f[0] != 0x80)
            return -1; /* negative, or more than the bytes we take */
        unsigned long long v = 0;
        for (size_t i = 1; i < n; i++) {
            if (v >> 55)
                return -1;
            v = (v << 8) | f[i];
        }
        return v > (unsigned long long)1 << 62 ? -1 : (long long)v;
    }
    size_t i = 0;
    while (i < n && f[i] == ' ')
        i++;
    long long v = 0;
    int digits = 0;
    for (; i < n && f[i] >= '0' && f[i] <= '7'; i++, digits++) {
        if (v > (1LL << 58))
            return -1;
        v = v * 8 + (f[i] - '0');
    }
    for (; i < n; i++)
        if (f[i] != ' ' && f[i] != '\0')
            return -1;
    return digits ? v : -1;
}

int gv_tar_checksum_ok(const unsigned char *h)
{
    long long want = gv_tar_number(h + 148, 8);
    if (want < 0)
        return 0;
    long long u = 0, sg = 0;
    for (int i = 0; i < TAR_BLOCK; i++) {
        int c = (i >= 148 && i < 156) ? ' ' : h[i];
        u += c;
        sg += (signed char)c;
    }
    return want == u || want == sg;
}

int gv_tar_all_zero(const unsigned char *h)
{
    for (int i = 0; i < TAR_BLOCK; i++)
        if (h[i])
            return 0;
    return 1;
}

static void field_str(char *dst, size_t dstsz, const unsigned char *f, size_t n)
{
    size_t len = strnlen((const char *)f, n);
    if (len >= dstsz)
        len = dstsz - 1;
    memcpy(dst, f, len);
    dst[len] = '\0';
}

int gv_tar_clean_name(char *name)
{
    char *out = name;
    const char *p = name;
    size_t len = strlen(name);
    if (len == 0 || len >= 4096)
        return -1;
    while (*p) {
        while (*p == '/')
            p++;
        const char *end = strchr(p, '/');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        if (n == 0)
            break;
        if (n == 2 && p[0] == '.' && p[1] == '.')
            return -1;
        if (!(n == 1 && p[0] == '.')) {
            if (out != name)
                *out++ = '/';
            memmove(out, p, n);
            out += n;
        }
        p += n;
    }
    *out = '\0';
    return 0;
}

/* "LEN key=value\n" records of a pax extended header. */
static int pax_parse(char *d, size_t n, struct tar_ext *x)
{
    size_t off = 0;
    while (off < n) {
        char *rec = d + off;
        size_t len = 0, i = 0;
        while (off + i < n && rec[i] >= '0' && rec[i] <= '9' && len < n)
            len = len * 10 + (size_t)(rec[i++] - '0');
        if (i == 0 || len <= i + 1 || len > n - off || rec[i] != ' ' || rec[len - 1] != '\n')
            return -1;
        char *key = rec + i + 1;
        char *eq = memchr(key, '=', len - i - 1);
        if (!eq)
            return -1;
        *eq = '\0';
        char *val = eq + 1;
        size_t vlen = (size_t)(rec + len - 1 - val);
        if (memchr(val, '\0', vlen))
            return -1;
        if (strcmp(key, "path") == 0 || strcmp(key, "linkpath") == 0) {
            if (vlen >= sizeof x->path)
                return -1;
            char *dst = key[0] == 'p' ? x->path : x->link;
            memcpy(dst, val, vlen);
            dst[vlen] = '\0';
            *(key[0] == 'p' ? &x->has_path : &x->has_link) = 1;
        } else if (strcmp(key, "size") == 0) {
            long long v = 0;
            if (vlen == 0 || vlen > 18)
                return -1;
            for (size_t k = 0; k < vlen; k++) {
                if (val[k] < '0' || val[k] > '9')
                    return -1;
                v = v * 10 + (val[k] - '0');
            }
            x->size = v;
            x->has_size = 1;
        }
        off += len;
    }
    return 0;
}

/* The content of a meta member ('x', 'L', 'K'), NUL-terminated. */
static int read_meta(struct gv_tsrc *s, long long size, char **out, struct gv_err *err)
{
    *out = malloc((size_t)size + 1);
    if (!*out)
        return GV_E_NOMEM;
    int rc = read_exact(s, (unsigned char *)*out, (size_t)size, err);
    if (rc == 0)
        rc = skip_bytes(s, (TAR_BLOCK - size % TAR_BLOCK) % TAR_BLOCK, err);
    (*out)[size] = '\0';
    return rc;
}

static enum gv_member_type member_type(char flag)
{
    switch (flag) {
    case '0': case '\0': case '7':
        return GV_MEMBER_REG;
    case '1':
        return GV_MEMBER_HARD;
    case '2':
        return GV_MEMBER_SYM;
    case '5':
        return GV_MEMBER_DIR;
    default:
        return GV_MEMBER_OTHER;
    }
}

static int meta_member(struct gv_tsrc *s, const char *label, char flag, long long size,
                       struct tar_ext *x, struct gv_err *err)
{
    if (size > TAR_META_MAX)
        return gv_err_set(err, GV_E_FORMAT, "%s: a '%c' header of %lld bytes (at most %d)", label,
                          flag, size, TAR_META_MAX);
    char *d;
    int rc = read_meta(s, size, &d, err);
    if (rc == 0 && flag == 'x' && pax_parse(d, (size_t)size, x) != 0)
        rc = gv_err_set(err, GV_E_FORMAT, "%s: a malformed pax header", label);
    if (rc == 0 && (flag == 'L' || flag == 'K')) {
        size_t n = strnlen(d, (size_t)size);
        if (n >= sizeof x->path)
            rc = gv_err_set(err, GV_E_FORMAT, "%s: a GNU long name of %zu bytes", label, n);
        else if (flag == 'L' && !x->has_path) {
            memcpy(x->path, d, n + 1);
            x->has_path = 1;
        } else if (flag == 'K' && !x->has_link) {
            memcpy(x->link, d, n + 1);
            x->has_link = 1;
        }
    }
    free(d);
    if (rc > 0)
        return gv_err_set(err, GV_E_FORMAT, "%s: truncated in a '%c' header", label, flag);
    return rc;
}

static int header_name(const unsigned char *h, const struct tar_ext *x, struct gv_member *m)
{
    if (x->has_path) {
        snprintf(m->name, sizeof m->name, "%s", x->path);
    } else {
        char name[101], prefix[156];
        field_str(name, sizeof name, h, 100);
        field_str(prefix, sizeof prefix, h + 345, 155);
        /* POSIX ustar has a prefix; GNU's "ustar  " uses those bytes otherwise */
        if (memcmp(h + 257, "ustar\0", 6) == 0 && prefix[0])
            snprintf(m->name, sizeof m->name, "%s/%s", prefix, name);
        else
            snprintf(m->name, sizeof m->name, "%s", name);
    }
    if (x->has_link)
        snprintf(m->link, sizeof m->link, "%s", x->link);
    else
        field_str(m->link, sizeof m->link, h + 157, 100);
    return m->name[0] ? 0 : -1;
}

static int one_member(struct gv_tsrc *s, const char *label, const unsigned char *h,
                      struct tar_ext *x, struct gv_apply *a, struct gv_member *m,
                      struct gv_err *err)
{
    memset(m, 0, offsetof(struct gv_member, name) + 1);
    m->link[0] = '\0';
    if (header_name(h, x, m) != 0)
        return gv_err_set(err, GV_E_FORMAT, "%s: a member with an empty name", label);
    char shown[4200];
    snprintf(shown, sizeof shown, "%s", m->name);
    m->type = member_type((char)h[156]);
    long long mode = gv_tar_number(h + 100, 8);
    m->mode = mode < 0 ? 0644 : (unsigned)mode & 07777;
    m->size = x->has_size ? x->size : gv_tar_number(h + 124, 12);
    if (m->size < 0)
        return gv_err_set(err, GV_E_FORMAT, "%s: member %s: a malformed size", label, shown);
    if (m->size > GV_IMAGE_MEMBER_MAX)
        return gv_err_set(err, GV_E_FORMAT, "%s: member %s: %lld bytes, over the %lld allowed",
                          label, shown, m->size, GV_IMAGE_MEMBER_MAX);
    if (m->type == GV_MEMBER_HARD || m->type == GV_MEMBER_SYM || m->type == GV_MEMBER_DIR)
        m->size = m->type == GV_MEMBER_HARD || m->type == GV_MEMBER_SYM ? 0 : m->size;
    if (gv_tar_clean_name(m->name) != 0)
        return gv_err_set(err, GV_E_FORMAT, "%s: member %s: a name with \"..\", or empty",
                          label, shown);
    if (m->type == GV_MEMBER_HARD && gv_tar_clean_name(m->link) != 0)
        return gv_err_set(err, GV_E_FORMAT, "%s: member %s: a hard link to \"%s\"", label, shown,
                          m->link);
    int rc = gv_apply_member(a, m, s, err);
    if (rc != GV_OK)
        return rc;
    long long pad = (TAR_BLOCK - m->size % TAR_BLOCK) % TAR_BLOCK;
    rc = skip_bytes(s, pad, err);
    if (rc > 0)
        return gv_err_set(err, GV_E_FORMAT, "%s: member %s: truncated", label, shown);
    return rc;
}

int gv_tar_read(struct gv_tsrc *s, const char *label, struct gv_apply *a, struct gv_err *err)
{
    unsigned char h[TAR_BLOCK];
    struct tar_ext *x = calloc(1, sizeof *x);
    struct gv_member *m = malloc(sizeof *m);
    int rc = x && m ? GV_OK : gv_err_set(err, GV_E_NOMEM, "%s: out of memory", label);
    long long members = 0;
    while (rc == GV_OK) {
        int r = read_exact(s, h, TAR_BLOCK, err);
        if (r < 0) {
            rc = r;
            break;
        }
        if (r == 1 && !x->has_path && !x->has_link && !x->has_size)
            break; /* the stream ends after the last member */
        if (r != 0) {
            rc = gv_err_set(err, GV_E_FORMAT, "%s: truncated tar header after %lld members",
                            label, members);
            break;
        }
        if (gv_tar_all_zero(h))
            break; /* end of archive; what follows is drained by the caller */
        if (!gv_tar_checksum_ok(h)) {
            rc = gv_err_set(err, GV_E_FORMAT, "%s: a tar header with a bad checksum after %lld "
                            "members", label, members);
            break;
        }
        char flag = (char)h[156];
        long long size = gv_tar_number(h + 124, 12);
        if (flag == 'x' || flag == 'L' || flag == 'K' || flag == 'g') {
            if (size < 0) {
                rc = gv_err_set(err, GV_E_FORMAT, "%s: a '%c' header with a malformed size",
                                label, flag);
            } else if (flag == 'g') {
                rc = skip_bytes(s, size + (TAR_BLOCK - size % TAR_BLOCK) % TAR_BLOCK, err);
                if (rc > 0)
                    rc = gv_err_set(err, GV_E_FORMAT, "%s: truncated in a 'g' header", label);
            } else {
                rc = meta_member(s, label, flag, size, x, err);
            }
            continue;
        }
        rc = one_member(s, label, h, x, a, m, err);
        memset(x, 0, offsetof(struct tar_ext, path));
        x->path[0] = x->link[0] = '\0';
        members++;
    }
    free(x);
    free(m);
    return rc;
}
