/* A reader over one blob: a whole file or a region of one (an archive's
 * member), read with pread so that several blobs of one file can be open. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "image/image.h"

struct gv_blob {
    int fd;
    off_t start, len, pos;
    char name[256];
};

int gv_blob_open_fd(int fd, off_t off, off_t len, const char *name, struct gv_blob **out,
                    struct gv_err *err)
{
    *out = NULL;
    if (off < 0 || len < 0)
        return gv_err_set(err, GV_E_USAGE, "%s: negative offset or length", name);
    struct gv_blob *b = calloc(1, sizeof *b);
    if (!b)
        return gv_err_set(err, GV_E_NOMEM, "%s: out of memory", name);
    b->fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
    if (b->fd < 0) {
        free(b);
        return gv_err_set(err, GV_E_IO, "%s: %s", name, strerror(errno));
    }
    b->start = off;
    b->len = len;
    snprintf(b->name, sizeof b->name, "%s", name);
    *out = b;
    return GV_OK;
}

int gv_blob_open_file(const char *path, const char *name, struct gv_blob **out,
                      struct gv_err *err)
{
    *out = NULL;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd < 0)
        return gv_err_set(err, errno == ENOENT ? GV_E_NOTFOUND : GV_E_IO, "%s: %s: %s", name, path,
                          strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return gv_err_set(err, GV_E_FORMAT, "%s: %s: not a regular file", name, path);
    }
    int rc = gv_blob_open_fd(fd, 0, st.st_size, name, out, err);
    close(fd);
    return rc;
}

ssize_t gv_blob_read(struct gv_blob *b, void *buf, size_t n, struct gv_err *err)
{
    off_t left = b->len - b->pos;
    if (left <= 0 || n == 0)
        return 0;
    if ((off_t)n > left)
        n = (size_t)left;
    for (;;) {
        ssize_t r = pread(b->fd, buf, n, b->start + b->pos);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return gv_err_set(err, GV_E_IO, "%s: %s", b->name, strerror(errno));
        if (r == 0)
            return gv_err_set(err, GV_E_FORMAT, "%s: truncated (%lld of %lld bytes)", b->name,
                              (long long)b->pos, (long long)b->len);
        b->pos += r;
        return r;
    }
}

off_t gv_blob_size(const struct gv_blob *b) { return b->len; }
const char *gv_blob_name(const struct gv_blob *b) { return b->name; }

void gv_blob_close(struct gv_blob *b)
{
    if (!b)
        return;
    close(b->fd);
    free(b);
}
