#include "base/fs.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
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

/* The display name of root + path in messages: the host path as before. */
static void shown(char *out, size_t outsz, const char *root, const char *path)
{
    if (gv_root_join(out, outsz, root, path) != 0)
        snprintf(out, outsz, "%s", path);
}

int gv_read_fd(int fd, const char *name, size_t max, char **data, size_t *len,
               struct gv_err *err)
{
    *data = NULL;
    if (len)
        *len = 0;
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
        return gv_err_set(err, GV_E_FORMAT, "%s: not a regular file", name);
    /* sysfs/procfs files report size 0 or 4096: read until EOF, capped. */
    size_t cap = st.st_size > 0 && (size_t)st.st_size < max ? (size_t)st.st_size + 1 : 4096;
    if (cap > max + 1)
        cap = max + 1;
    char *buf = malloc(cap + 1);
    if (!buf)
        return gv_err_set(err, GV_E_NOMEM, "%s: out of memory", name);
    size_t used = 0;
    for (;;) {
        if (used == cap) {
            if (cap > max) {
                free(buf);
                return gv_err_set(err, GV_E_FORMAT, "%s: file larger than %zu bytes", name, max);
            }
            size_t ncap = cap * 2 > max + 1 ? max + 1 : cap * 2;
            char *nb = realloc(buf, ncap + 1);
            if (!nb) {
                free(buf);
                return gv_err_set(err, GV_E_NOMEM, "%s: out of memory", name);
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
            return gv_err_set(err, GV_E_IO, "%s: %s", name, strerror(e));
        }
        if (r == 0)
            break;
        used += (size_t)r;
    }
    if (used > max) {
        free(buf);
        return gv_err_set(err, GV_E_FORMAT, "%s: file larger than %zu bytes", name, max);
    }
    buf[used] = '\0';
    *data = buf;
    if (len)
        *len = used;
    return GV_OK;
}

int gv_root_read_file(const char *root, const char *path, size_t max, char **data, size_t *len,
                      struct gv_err *err)
{
    *data = NULL;
    if (len)
        *len = 0;
    char name[GV_PATH_MAX];
    shown(name, sizeof name, root, path);
    int fd = gv_root_open(root, path, O_RDONLY | O_NONBLOCK | O_NOCTTY, NULL);
    if (fd < 0)
        return gv_err_set(err, errno == ENOENT || errno == ENOTDIR ? GV_E_NOTFOUND : GV_E_IO,
                          "%s: %s", name, strerror(errno));
    int rc = gv_read_fd(fd, name, max, data, len, err);
    close(fd);
    return rc;
}

int gv_read_file(const char *path, size_t max, char **data, size_t *len, struct gv_err *err)
{
    return gv_root_read_file(NULL, path, max, data, len, err);
}

int gv_root_read_line(const char *root, const char *path, char *out, size_t outsz,
                      struct gv_err *err)
{
    char *data;
    size_t len;
    out[0] = '\0';
    int rc = gv_root_read_file(root, path, 1 << 16, &data, &len, err);
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

int gv_read_line(const char *path, char *out, size_t outsz, struct gv_err *err)
{
    return gv_root_read_line(NULL, path, out, outsz, err);
}

int gv_readlink(const char *path, char *out, size_t outsz)
{
    ssize_t n = readlink(path, out, outsz - 1);
    if (n < 0)
        return errno == ENOENT ? GV_E_NOTFOUND : GV_E_IO;
    out[n] = '\0';
    return GV_OK;
}

/* ---- one resolver for paths inside a root (issue 31) ----
 *
 * A document's root tree may hold any symlink. Every path below a --root is
 * resolved here, as a chroot into the root would see it: absolute targets
 * restart at the root, ".." stops at it, at most GV_ROOT_MAX_LINKS links
 * (ELOOP), procfs magic links refused. The kernel does it with openat2
 * (RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS); where that is missing or
 * blocked (ENOSYS, EPERM from seccomp) the walk below does the same by hand,
 * one component at a time with O_PATH | O_NOFOLLOW from the directory
 * already reached, so nothing outside the root is ever looked up. The walk
 * also gives the resolved path (gv_root_realpath). */

#define GV_ROOT_MAX_LINKS 40

#ifndef RESOLVE_NO_MAGICLINKS
#define RESOLVE_NO_MAGICLINKS 0x02
#endif
#ifndef RESOLVE_IN_ROOT
#define RESOLVE_IN_ROOT 0x10
#endif
#ifndef PROC_SUPER_MAGIC
#define PROC_SUPER_MAGIC 0x9fa0
#endif

struct open_how_ {
    uint64_t flags;
    uint64_t mode;
    uint64_t resolve;
};

/* Read and set from the hashing threads too (src/env/filehash.c). */
static atomic_int force_walk; /* tests only: gv_root_test_force_walk */
static atomic_int no_openat2; /* the kernel has no openat2 (ENOSYS): stop asking */

void gv_root_test_force_walk(int on) { force_walk = on; }

static int is_live(const char *root)
{
    return !root || !root[0] || (root[0] == '/' && root[1] == '\0');
}

struct walk {
    int rootfd;
    int dirfd;             /* O_PATH fd of cur; may be rootfd */
    char cur[GV_PATH_MAX]; /* root-relative path of dirfd, "" = the root */
    int links;
};

static void walk_set_dir(struct walk *w, int fd)
{
    if (w->dirfd >= 0 && w->dirfd != w->rootfd)
        close(w->dirfd);
    w->dirfd = fd;
}

/* dirfd := cur, opened again from the root one plain directory at a time
 * (after ".." popped a component: never openat(dirfd, "..")). */
static int walk_reopen(struct walk *w)
{
    walk_set_dir(w, w->rootfd);
    char tmp[GV_PATH_MAX];
    snprintf(tmp, sizeof tmp, "%s", w->cur);
    for (char *save = NULL, *c = strtok_r(tmp, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
        int fd = openat(w->dirfd, c, O_PATH | O_NOFOLLOW | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
            return errno;
        walk_set_dir(w, fd);
    }
    return 0;
}

/* A procfs link other than those directly in /proc (self, mounts, net...):
 * /proc/PID/{exe,cwd,root,fd/N,ns/X} jump anywhere; openat2 refuses them
 * with RESOLVE_NO_MAGICLINKS, and so does the walk. */
static int is_magic_link(int linkfd, int parentfd)
{
    struct statfs fs;
    struct stat st;
    if (fstatfs(linkfd, &fs) != 0 || (unsigned long)fs.f_type != PROC_SUPER_MAGIC)
        return 0;
    return fstat(parentfd, &st) != 0 || st.st_ino != 1;
}

/* Resolves path from w's root. On 0: w->dirfd holds the last component,
 * named last ("." when the path ends at a directory); a symlink there is
 * followed unless nofollow. Else an errno value; *stop is then where the
 * walk stopped in rest (the component that could not be opened). */
static int walk_path(struct walk *w, const char *path, int nofollow, char *last, size_t lastsz,
                     char *rest, size_t restsz, char **stop)
{
    if (snprintf(rest, restsz, "%s", path) >= (int)restsz)
        return ENAMETOOLONG;
    char *p = rest;
    *stop = NULL;
    for (;;) {
        while (*p == '/')
            p++;
        if (!*p) {
            snprintf(last, lastsz, ".");
            return 0;
        }
        size_t clen = strcspn(p, "/");
        if (clen > NAME_MAX)
            return ENAMETOOLONG;
        char name[NAME_MAX + 1];
        memcpy(name, p, clen);
        name[clen] = '\0';
        char *after = p + clen;
        const char *q = after;
        while (*q == '/')
            q++;
        int is_last = *q == '\0', trailing = *after == '/';
        if (!strcmp(name, ".")) {
            p = after;
            continue;
        }
        if (!strcmp(name, "..")) {
            char *slash = strrchr(w->cur, '/');
            if (slash) {
                *slash = '\0';
                int e = walk_reopen(w);
                if (e)
                    return e;
            }
            p = after;
            continue;
        }
        int fd = openat(w->dirfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0) {
            *stop = p;
            return errno;
        }
        struct stat st;
        if (fstat(fd, &st) != 0) {
            int e = errno;
            close(fd);
            *stop = p;
            return e;
        }
        if (S_ISLNK(st.st_mode) && (!is_last || trailing || !nofollow)) {
            char target[GV_PATH_MAX];
            ssize_t n = is_magic_link(fd, w->dirfd) ? -1 : readlinkat(fd, "", target, sizeof target - 1);
            close(fd);
            if (n < 0 || ++w->links > GV_ROOT_MAX_LINKS) {
                *stop = p;
                return ELOOP;
            }
            if (n == 0) {
                *stop = p;
                return ENOENT;
            }
            target[n] = '\0';
            char next[GV_PATH_MAX * 2];
            if (snprintf(next, sizeof next, "%s%s", target, after) >= (int)sizeof next)
                return ENAMETOOLONG;
            if (target[0] == '/') {
                walk_set_dir(w, w->rootfd);
                w->cur[0] = '\0';
            }
            snprintf(rest, restsz, "%s", next);
            p = rest;
            continue;
        }
        if (is_last && !trailing) {
            close(fd);
            snprintf(last, lastsz, "%s", name);
            return 0;
        }
        if (!S_ISDIR(st.st_mode)) {
            close(fd);
            *stop = p;
            return ENOTDIR;
        }
        size_t l = strlen(w->cur);
        if (l + 1 + clen + 1 > sizeof w->cur) {
            close(fd);
            return ENAMETOOLONG;
        }
        w->cur[l] = '/';
        memcpy(w->cur + l + 1, name, clen + 1);
        walk_set_dir(w, fd);
        p = after;
    }
}

static int root_dirfd(const char *root)
{
    return open(is_live(root) ? "/" : root, O_PATH | O_DIRECTORY | O_CLOEXEC);
}

static int walk_open(int rootfd, const char *path, int flags)
{
    struct walk w = {.rootfd = rootfd, .dirfd = rootfd};
    char last[NAME_MAX + 1], rest[GV_PATH_MAX * 2], *stop;
    int e = walk_path(&w, path, (flags & O_NOFOLLOW) != 0, last, sizeof last, rest, sizeof rest,
                      &stop);
    int fd = -1;
    if (!e) {
        fd = openat(w.dirfd, last, flags | O_NOFOLLOW | O_CLOEXEC);
        e = fd < 0 ? errno : 0;
    }
    walk_set_dir(&w, rootfd);
    errno = e;
    return fd;
}

static int kernel_open(int rootfd, const char *path, int flags)
{
    struct open_how_ how = {.flags = (uint64_t)(flags | O_CLOEXEC),
                            .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS};
    for (int tries = 0; tries < 8; tries++) {
        long fd = syscall(SYS_openat2, rootfd, path, &how, sizeof how);
        if (fd >= 0 || errno != EAGAIN) /* EAGAIN: a rename raced the lookup */
            return (int)fd;
    }
    return -1;
}

int gv_root_open(const char *root, const char *path, int flags, struct gv_err *err)
{
    if (is_live(root)) {
        int fd = open(path, flags | O_CLOEXEC);
        if (fd < 0 && err)
            gv_err_set(err, errno == ENOENT ? GV_E_NOTFOUND : GV_E_IO, "%s: %s", path,
                       strerror(errno));
        return fd;
    }
    if (!path[0])
        path = "/"; /* openat2 has no AT_EMPTY_PATH: "" is the root itself */
    int rootfd = root_dirfd(root);
    int fd = -1, e;
    if (rootfd < 0) {
        e = errno;
    } else {
        fd = -1;
        e = ENOSYS;
        if (!force_walk && !no_openat2) {
            fd = kernel_open(rootfd, path, flags);
            e = fd < 0 ? errno : 0;
            if (e == ENOSYS)
                no_openat2 = 1;
        }
        if (fd < 0 && (e == ENOSYS || e == EPERM)) {
            fd = walk_open(rootfd, path, flags);
            e = fd < 0 ? errno : 0;
        }
        close(rootfd);
    }
    if (fd < 0 && err) {
        char name[GV_PATH_MAX];
        shown(name, sizeof name, root, path);
        gv_err_set(err, e == ENOENT ? GV_E_NOTFOUND : e == ELOOP ? GV_E_FORMAT : GV_E_IO,
                   "%s: %s", name, strerror(e));
    }
    errno = e;
    return fd;
}

int gv_root_stat(const char *root, const char *path, struct stat *st, int nofollow)
{
    if (is_live(root))
        return nofollow ? lstat(path, st) : stat(path, st);
    int fd = gv_root_open(root, path, O_PATH | (nofollow ? O_NOFOLLOW : 0), NULL);
    if (fd < 0)
        return -1;
    int rc = fstat(fd, st);
    int e = errno;
    close(fd);
    errno = e;
    return rc;
}

int gv_root_is_dir(const char *root, const char *path)
{
    struct stat st;
    return gv_root_stat(root, path, &st, 0) == 0 && S_ISDIR(st.st_mode);
}

int gv_root_is_file(const char *root, const char *path)
{
    struct stat st;
    return gv_root_stat(root, path, &st, 0) == 0 && S_ISREG(st.st_mode);
}

int gv_root_exists(const char *root, const char *path)
{
    struct stat st;
    return gv_root_stat(root, path, &st, 1) == 0;
}

int gv_root_readlink(const char *root, const char *path, char *out, size_t outsz)
{
    if (is_live(root))
        return gv_readlink(path, out, outsz);
    int fd = gv_root_open(root, path, O_PATH | O_NOFOLLOW, NULL);
    if (fd < 0)
        return errno == ENOENT ? GV_E_NOTFOUND : GV_E_IO;
    ssize_t n = readlinkat(fd, "", out, outsz - 1);
    close(fd);
    if (n < 0)
        return GV_E_IO;
    out[n] = '\0';
    return GV_OK;
}

DIR *gv_root_opendir(const char *root, const char *path)
{
    int fd = gv_root_open(root, path, O_RDONLY | O_DIRECTORY | O_NONBLOCK, NULL);
    if (fd < 0)
        return NULL;
    DIR *d = fdopendir(fd);
    if (!d) {
        int e = errno;
        close(fd);
        errno = e;
    }
    return d;
}

int gv_root_scandir(const char *root, const char *path, struct dirent ***names,
                    int (*filter)(const struct dirent *),
                    int (*compar)(const struct dirent **, const struct dirent **))
{
    int fd = gv_root_open(root, path, O_RDONLY | O_DIRECTORY | O_NONBLOCK, NULL);
    if (fd < 0)
        return -1;
    int n = scandirat(fd, ".", names, filter, compar);
    int e = errno;
    close(fd);
    errno = e;
    return n;
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
    int rootfd = root_dirfd(root);
    if (rootfd < 0)
        return gv_err_set(err, GV_E_NOTFOUND, "%s: %s", root, strerror(errno));
    struct walk w = {.rootfd = rootfd, .dirfd = rootfd};
    char last[NAME_MAX + 1], rest[GV_PATH_MAX * 2], *stop;
    int e = walk_path(&w, path, 0, last, sizeof last, rest, sizeof rest, &stop);
    walk_set_dir(&w, rootfd);
    close(rootfd);
    int rc = GV_OK;
    if (e == ELOOP)
        return gv_err_set(err, GV_E_FORMAT, "%s: too many levels of symbolic links", path);
    if (e == ENAMETOOLONG || (e && !stop))
        return gv_err_set(err, GV_E_USAGE, "%s: path too long", path);
    if (!e && push_component(w.cur, sizeof w.cur, last, strlen(last)) != 0)
        rc = GV_E_USAGE;
    /* A component that is missing (or not a directory): the rest is kept as
     * it is written, ".." taken lexically. */
    for (const char *p = e ? stop : ""; !rc && *p;) {
        while (*p == '/')
            p++;
        size_t clen = strcspn(p, "/");
        if (push_component(w.cur, sizeof w.cur, p, clen) != 0)
            rc = GV_E_USAGE;
        p += clen;
    }
    if (rc || snprintf(out, outsz, "%s", w.cur[0] ? w.cur : "/") >= (int)outsz)
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
