#include "base/fs.h"

#include <errno.h>
#include <signal.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int gv_root_join(char *out, size_t outsz, const char *root, const char *path)
{
    if (!root || !root[0] || (root[0] == '/' && root[1] == '\0'))
        root = "";
    size_t rl = strlen(root);
    while (rl > 0 && root[rl - 1] == '/')
        rl--;
    while (path[0] == '/' && path[1] == '/')
        path++;
    int n = snprintf(out, outsz, "%.*s%s%s", (int)rl, root, path[0] == '/' ? "" : "/", path);
    if (n < 0 || (size_t)n >= outsz)
        return GV_E_USAGE;
    return GV_OK;
}

int gv_read_file(const char *path, size_t max, char **data, size_t *len, struct gv_err *err)
{
    *data = NULL;
    if (len)
        *len = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0)
        return gv_err_set(err, errno == ENOENT ? GV_E_NOTFOUND : GV_E_IO, "%s: %s", path,
                          strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return gv_err_set(err, GV_E_FORMAT, "%s: not a regular file", path);
    }
    /* sysfs/procfs files report size 0 or 4096: read until EOF, capped. */
    size_t cap = st.st_size > 0 && (size_t)st.st_size < max ? (size_t)st.st_size + 1 : 4096;
    if (cap > max + 1)
        cap = max + 1;
    char *buf = malloc(cap + 1);
    if (!buf) {
        close(fd);
        return gv_err_set(err, GV_E_NOMEM, "%s: out of memory", path);
    }
    size_t used = 0;
    for (;;) {
        if (used == cap) {
            if (cap > max) {
                free(buf);
                close(fd);
                return gv_err_set(err, GV_E_FORMAT, "%s: file larger than %zu bytes", path, max);
            }
            size_t ncap = cap * 2 > max + 1 ? max + 1 : cap * 2;
            char *nb = realloc(buf, ncap + 1);
            if (!nb) {
                free(buf);
                close(fd);
                return gv_err_set(err, GV_E_NOMEM, "%s: out of memory", path);
            }
            buf = nb;
            cap = ncap;
        }
        ssize_t r = read(fd, buf + used, cap - used);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            int e = errno;
            free(buf);
            close(fd);
            return gv_err_set(err, GV_E_IO, "%s: %s", path, strerror(e));
        }
        if (r == 0)
            break;
        used += (size_t)r;
    }
    close(fd);
    if (used > max) {
        free(buf);
        return gv_err_set(err, GV_E_FORMAT, "%s: file larger than %zu bytes", path, max);
    }
    buf[used] = '\0';
    *data = buf;
    if (len)
        *len = used;
    return GV_OK;
}

int gv_read_line(const char *path, char *out, size_t outsz, struct gv_err *err)
{
    char *data;
    size_t len;
    int rc = gv_read_file(path, 1 << 16, &data, &len, err);
    if (rc)
        return rc;
    size_t n = strcspn(data, "\n");
    while (n > 0 && (data[n - 1] == ' ' || data[n - 1] == '\t' || data[n - 1] == '\r'))
        n--;
    if (n >= outsz)
        n = outsz - 1;
    memcpy(out, data, n);
    out[n] = '\0';
    free(data);
    return GV_OK;
}

int gv_readlink(const char *path, char *out, size_t outsz)
{
    ssize_t n = readlink(path, out, outsz - 1);
    if (n < 0)
        return errno == ENOENT ? GV_E_NOTFOUND : GV_E_IO;
    out[n] = '\0';
    return GV_OK;
}

/* Lexically append component c to the root-relative path p (handles ".."). */
static int push_component(char *p, size_t psz, const char *c, size_t clen)
{
    if (clen == 0 || (clen == 1 && c[0] == '.'))
        return 0;
    if (clen == 2 && c[0] == '.' && c[1] == '.') {
        char *slash = strrchr(p, '/');
        if (slash)
            *slash = '\0';
        return 0;
    }
    size_t l = strlen(p);
    if (l + 1 + clen + 1 > psz)
        return -1;
    p[l] = '/';
    memcpy(p + l + 1, c, clen);
    p[l + 1 + clen] = '\0';
    return 0;
}

int gv_root_realpath(const char *root, const char *path, char *out, size_t outsz,
                     struct gv_err *err)
{
    char rest[GV_PATH_MAX * 2];
    char cur[GV_PATH_MAX] = ""; /* root-relative, "" means "/" */
    int links = 0;
    if (snprintf(rest, sizeof rest, "%s", path) >= (int)sizeof rest)
        return gv_err_set(err, GV_E_USAGE, "%s: path too long", path);
    char *p = rest;
    while (*p) {
        while (*p == '/')
            p++;
        if (!*p)
            break;
        size_t clen = strcspn(p, "/");
        char save[GV_PATH_MAX];
        snprintf(save, sizeof save, "%s", cur);
        if (push_component(cur, sizeof cur, p, clen) != 0)
            return gv_err_set(err, GV_E_USAGE, "%s: path too long", path);
        p += clen;
        char host[GV_PATH_MAX];
        if (gv_root_join(host, sizeof host, root, cur[0] ? cur : "/") != 0)
            return gv_err_set(err, GV_E_USAGE, "%s: path too long", path);
        struct stat st;
        if (lstat(host, &st) != 0)
            continue; /* missing: keep the lexical path */
        if (!S_ISLNK(st.st_mode))
            continue;
        if (++links > 40)
            return gv_err_set(err, GV_E_FORMAT, "%s: too many levels of symbolic links", path);
        char target[GV_PATH_MAX];
        if (gv_readlink(host, target, sizeof target) != 0)
            continue;
        char next[GV_PATH_MAX * 2];
        if (snprintf(next, sizeof next, "%s/%s", target, p) >= (int)sizeof next)
            return gv_err_set(err, GV_E_USAGE, "%s: path too long", path);
        if (target[0] == '/')
            cur[0] = '\0';
        else
            snprintf(cur, sizeof cur, "%s", save);
        snprintf(rest, sizeof rest, "%s", next);
        p = rest;
    }
    if (snprintf(out, outsz, "%s", cur[0] ? cur : "/") >= (int)outsz)
        return gv_err_set(err, GV_E_USAGE, "%s: path too long", path);
    return GV_OK;
}

int gv_is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

int gv_is_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

int gv_exists(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0;
}

int gv_mkdirs(const char *path, mode_t mode)
{
    char tmp[GV_PATH_MAX];
    if (snprintf(tmp, sizeof tmp, "%s", path) >= (int)sizeof tmp)
        return GV_E_USAGE;
    for (char *p = tmp + 1; *p; p++) {
        if (*p == '/') {
            *p = '\0';
            if (mkdir(tmp, mode) != 0 && errno != EEXIST)
                return GV_E_IO;
            *p = '/';
        }
    }
    if (mkdir(tmp, mode) != 0 && errno != EEXIST)
        return GV_E_IO;
    return GV_OK;
}

static char stop_stage[32], stop_file[GV_PATH_MAX];

void gv_test_stop_points(const char *stage, const char *file)
{
    snprintf(stop_stage, sizeof stop_stage, "%s", stage ? stage : "");
    snprintf(stop_file, sizeof stop_file, "%s", file ? file : "");
}

void gv_test_stop_point(const char *stage, const char *path)
{
    if (stop_stage[0] && !strcmp(stage, stop_stage) && (!stop_file[0] || strstr(path, stop_file)))
        raise(SIGSTOP);
}

/* Writes data to an existing file that is not a regular one (a terminal,
 * /dev/null, /dev/stdout, a FIFO): renaming over it would replace the device
 * node itself (as root, `-o /dev/null` used to leave a regular file there). */
static int write_special(const char *path, const void *data, size_t len, struct gv_err *err)
{
    int fd = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0)
        return gv_err_set(err, GV_E_IO, "%s: cannot open: %s", path, strerror(errno));
    const char *p = data;
    while (len > 0) {
        ssize_t w = write(fd, p, len);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            int e = w < 0 ? errno : EIO;
            close(fd);
            return gv_err_set(err, GV_E_IO, "%s: write failed: %s", path, strerror(e));
        }
        p += w;
        len -= (size_t)w;
    }
    if (close(fd) != 0)
        return gv_err_set(err, GV_E_IO, "%s: close failed: %s", path, strerror(errno));
    return GV_OK;
}

int gv_write_atomic(const char *path, const void *data, size_t len, mode_t mode,
                    struct gv_err *err)
{
    gv_test_stop_point("atomic-start", path);
    struct stat st;
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
        if (S_ISDIR(st.st_mode))
            return gv_err_set(err, GV_E_USAGE, "%s: is a directory", path);
        return write_special(path, data, len, err);
    }
    char tmp[GV_PATH_MAX];
    if (snprintf(tmp, sizeof tmp, "%s.tmp.XXXXXX", path) >= (int)sizeof tmp)
        return gv_err_set(err, GV_E_USAGE, "%s: path too long", path);
    int fd = mkstemp(tmp);
    if (fd < 0)
        return gv_err_set(err, GV_E_IO, "%s: cannot create temporary file: %s", path,
                          strerror(errno));
    gv_test_stop_point("atomic-created", path);
    const char *p = data;
    size_t left = len, half = len / 2;
    while (left > 0) {
        ssize_t w = write(fd, p, left > len - half ? left - (len - half) : left);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            int e = errno;
            close(fd);
            unlink(tmp);
            return gv_err_set(err, GV_E_IO, "%s: write failed: %s", path, strerror(e));
        }
        p += w;
        left -= (size_t)w;
        if (left == len - half && half)
            gv_test_stop_point("atomic-half", path);
    }
    gv_test_stop_point("atomic-written", path);
    if (fchmod(fd, mode) != 0 || fsync(fd) != 0) {
        int e = errno;
        close(fd);
        unlink(tmp);
        return gv_err_set(err, GV_E_IO, "%s: fsync failed: %s", path, strerror(e));
    }
    if (close(fd) != 0) {
        int e = errno;
        unlink(tmp);
        return gv_err_set(err, GV_E_IO, "%s: close failed: %s", path, strerror(e));
    }
    gv_test_stop_point("atomic-synced", path);
    if (rename(tmp, path) != 0) {
        int e = errno;
        unlink(tmp);
        return gv_err_set(err, GV_E_IO, "%s: rename failed: %s", path, strerror(e));
    }
    gv_test_stop_point("atomic-renamed", path);
    char dir[GV_PATH_MAX];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash == dir)
        slash[1] = '\0';
    else if (slash)
        *slash = '\0';
    else
        snprintf(dir, sizeof dir, ".");
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
        fsync(dfd);
        close(dfd);
    }
    return GV_OK;
}

int gv_cache_dir(char *out, size_t outsz, const char *sub, struct gv_err *err)
{
    const char *xdg = getenv("XDG_CACHE_HOME");
    const char *home = getenv("HOME");
    int n;
    if (xdg && xdg[0] == '/')
        n = snprintf(out, outsz, "%s/gpuvet%s%s", xdg, sub ? "/" : "", sub ? sub : "");
    else if (home && home[0])
        n = snprintf(out, outsz, "%s/.cache/gpuvet%s%s", home, sub ? "/" : "", sub ? sub : "");
    else
        return gv_err_set(err, GV_E_NOTFOUND, "no cache directory: neither XDG_CACHE_HOME nor HOME is set");
    if (n < 0 || (size_t)n >= outsz)
        return gv_err_set(err, GV_E_USAGE, "cache directory path too long");
    if (gv_mkdirs(out, 0755) != 0)
        return gv_err_set(err, GV_E_IO, "%s: cannot create cache directory: %s", out, strerror(errno));
    return GV_OK;
}
