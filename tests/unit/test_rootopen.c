/* The one resolver for paths inside a --root (src/base/fs.c, issue 31):
 * links that point out of the root must resolve inside it, as in a chroot,
 * and openat2 and the walk by hand must give the same answers. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/fs.h"
#include "t.h"

static char tmpdir[256], root[300], host[300];

static void put(const char *dir, const char *rel, const char *text)
{
    char p[600];
    snprintf(p, sizeof p, "%s/%s", dir, rel);
    char *slash = strrchr(p, '/');
    *slash = '\0';
    gv_mkdirs(p, 0755);
    *slash = '/';
    FILE *f = fopen(p, "w");
    T_CHECK(f != NULL);
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

static void link_in_root(const char *target, const char *rel)
{
    char p[600];
    snprintf(p, sizeof p, "%s/%s", root, rel);
    T_EQ_INT(symlink(target, p), 0);
}

static void build_tree(void)
{
    char t[600];
    put(host, "secret", "HOST-SECRET\n");
    put(root, "etc/real.txt", "in-root\n");
    put(root, "usr/marker.txt", "usr\n");
    put(root, "usr/lib/x.txt", "x\n");
    /* the host's absolute path of the secret, also present in the root */
    snprintf(t, sizeof t, "%s/secret", host);
    put(root, t + 1, "root-copy\n");
    link_in_root("/etc/real.txt", "etc/abs");
    link_in_root("real.txt", "etc/rel");
    link_in_root("../../../../../../../etc/real.txt", "etc/up");
    snprintf(t, sizeof t, "%s/secret", host);
    link_in_root(t, "etc/out");
    snprintf(t, sizeof t, "../../../../../../../../..%s/secret", host);
    link_in_root(t, "etc/outrel");
    link_in_root("/etc/shadow-nothere", "etc/shadow-link");
    link_in_root(host, "hostdir");
    link_in_root("/usr/lib", "dirlink");
    link_in_root("loop2", "loop1");
    link_in_root("loop1", "loop2");
    link_in_root("self", "self");
    link_in_root("/proc/self/fd/0", "fdlink");
    /* c0 -> c1 -> ... -> c40 -> /etc/real.txt: opening c1 follows 40 links
     * (the kernel's limit), c0 follows 41 (ELOOP). */
    for (int i = 0; i <= 40; i++) {
        char name[32], to[32];
        snprintf(name, sizeof name, "c%d", i);
        if (i == 40)
            snprintf(to, sizeof to, "/etc/real.txt");
        else
            snprintf(to, sizeof to, "c%d", i + 1);
        link_in_root(to, name);
    }
}

/* What opening path gives: "E<errno>", "D" (a directory), "L" (a link),
 * or the file's first line. */
static void outcome(const char *path, int flags, char *out, size_t outsz)
{
    int fd = gv_root_open(root, path, flags, NULL);
    if (fd < 0) {
        snprintf(out, outsz, "E%d", errno);
        return;
    }
    struct stat st;
    fstat(fd, &st);
    if (S_ISDIR(st.st_mode))
        snprintf(out, outsz, "D");
    else if (S_ISLNK(st.st_mode))
        snprintf(out, outsz, "L");
    else {
        char *data;
        int dfd = (flags & O_PATH) ? -1 : fd;
        if (dfd >= 0 && gv_read_fd(dfd, path, 4096, &data, NULL, NULL) == GV_OK) {
            snprintf(out, outsz, "%.*s", (int)strcspn(data, "\n"), data);
            free(data);
        } else {
            snprintf(out, outsz, "F");
        }
    }
    close(fd);
}

struct ocase {
    const char *path;
    int flags;
    const char *want;
};

static char e_noent[16], e_loop[16], e_notdir[16];

static void check_cases(void)
{
    const struct ocase cases[] = {
        {"/etc/real.txt", O_RDONLY, "in-root"},
        {"etc/real.txt", O_RDONLY, "in-root"},
        {"/etc/abs", O_RDONLY, "in-root"},
        {"/etc/rel", O_RDONLY, "in-root"},
        {"/etc/up", O_RDONLY, "in-root"},
        {"/../../../etc/real.txt", O_RDONLY, "in-root"},
        {"/etc/out", O_RDONLY, "root-copy"},    /* the root's file of that name */
        {"/etc/outrel", O_RDONLY, "root-copy"}, /* ".." stops at the root */
        {"/etc/shadow-link", O_RDONLY, e_noent},
        {"/hostdir/secret", O_RDONLY, "root-copy"},
        {"/hostdir", O_RDONLY | O_DIRECTORY, "D"},
        {"/dirlink/x.txt", O_RDONLY, "x"},
        {"/dirlink/../marker.txt", O_RDONLY, "usr"}, /* ".." of where the link led */
        {"/dirlink/", O_RDONLY, "D"},
        {"/etc/abs/", O_RDONLY, e_notdir},
        {"/etc/real.txt/x", O_RDONLY, e_notdir},
        {"/nothere/x", O_RDONLY, e_noent},
        {"/loop1", O_RDONLY, e_loop},
        {"/self", O_RDONLY, e_loop},
        {"/c1", O_RDONLY, "in-root"},
        {"/c0", O_RDONLY, e_loop},
        {"/fdlink", O_RDONLY, e_noent},
        {"/", O_RDONLY | O_DIRECTORY, "D"},
        {"", O_PATH, "D"},
        {"/etc/abs", O_PATH | O_NOFOLLOW, "L"},
        {"/etc/abs", O_RDONLY | O_NOFOLLOW, e_loop},
        {"/dirlink/../../../etc/abs", O_RDONLY, "in-root"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char kern[256], walk[256];
        gv_root_test_force_walk(0);
        outcome(cases[i].path, cases[i].flags, kern, sizeof kern);
        gv_root_test_force_walk(1);
        outcome(cases[i].path, cases[i].flags, walk, sizeof walk);
        gv_root_test_force_walk(0);
        if (strcmp(kern, cases[i].want) || strcmp(walk, cases[i].want))
            fprintf(stderr, "case %s (flags %#x): kernel %s, walk %s, want %s\n", cases[i].path,
                    cases[i].flags, kern, walk, cases[i].want);
        T_EQ_STR(kern, cases[i].want);
        T_EQ_STR(walk, cases[i].want);
        T_CHECK(strstr(kern, "HOST-SECRET") == NULL && strstr(walk, "HOST-SECRET") == NULL);
    }
}

static void check_realpath(void)
{
    const char *cases[][2] = {
        {"/etc/abs", "/etc/real.txt"},
        {"/etc/up", "/etc/real.txt"},
        {"/dirlink/../marker.txt", "/usr/marker.txt"},
        {"/../..", "/"},
        {"/c1", "/etc/real.txt"},
        {"/nothere/a/../b", "/nothere/b"},
    };
    char out[GV_PATH_MAX];
    struct gv_err err = {0};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        T_EQ_INT(gv_root_realpath(root, cases[i][0], out, sizeof out, &err), GV_OK);
        T_EQ_STR(out, cases[i][1]);
    }
    /* a link out of the root names the root's path, never the host's */
    char want[600];
    snprintf(want, sizeof want, "%s/secret", host);
    T_EQ_INT(gv_root_realpath(root, "/etc/outrel", out, sizeof out, &err), GV_OK);
    T_EQ_STR(out, want);
    T_EQ_INT(gv_root_realpath(root, "/c0", out, sizeof out, &err), GV_E_FORMAT);
    T_EQ_INT(gv_root_realpath(root, "/loop1", out, sizeof out, &err), GV_E_FORMAT);
}

static void check_helpers(void)
{
    for (int walk = 0; walk <= 1; walk++) {
        gv_root_test_force_walk(walk);
        char *data = NULL, line[64], target[256];
        struct gv_err err = {0};
        T_EQ_INT(gv_root_read_file(root, "/etc/out", 1024, &data, NULL, &err), GV_OK);
        T_EQ_STR(data, "root-copy\n");
        free(data);
        T_EQ_INT(gv_root_read_file(root, "/etc/shadow-link", 1024, &data, NULL, &err),
                 GV_E_NOTFOUND);
        T_EQ_INT(gv_root_read_line(root, "/etc/up", line, sizeof line, &err), GV_OK);
        T_EQ_STR(line, "in-root");
        T_EQ_INT(gv_root_readlink(root, "/dirlink/../../etc/abs", target, sizeof target), GV_OK);
        T_EQ_STR(target, "/etc/real.txt");
        T_CHECK(gv_root_is_dir(root, "/hostdir"));
        T_CHECK(gv_root_is_file(root, "/hostdir/secret"));
        T_CHECK(!gv_root_is_file(root, "/etc/shadow-link"));
        T_CHECK(gv_root_exists(root, "/etc/shadow-link")); /* the link itself */
        /* listing a directory linked out of the root lists the root's */
        struct dirent **names;
        int n = gv_root_scandir(root, "/hostdir", &names, NULL, alphasort);
        T_EQ_INT(n, 3); /* ".", "..", "secret" */
        for (int i = 0; i < n; i++)
            free(names[i]);
        if (n >= 0)
            free(names);
        put(root, "hostonly/.keep", "");
        DIR *d = gv_root_opendir(root, "/etc/../hostonly");
        T_CHECK(d != NULL);
        if (d)
            closedir(d);
        gv_root_test_force_walk(0);
    }
    /* the live machine: plain paths, as before */
    char p[600], *data = NULL;
    snprintf(p, sizeof p, "%s/secret", host);
    T_EQ_INT(gv_root_read_file("/", p, 1024, &data, NULL, NULL), GV_OK);
    T_EQ_STR(data, "HOST-SECRET\n");
    free(data);
    T_EQ_INT(gv_read_file(p, 1024, &data, NULL, NULL), GV_OK);
    free(data);
}

int main(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/gv-rootopen-XXXXXX");
    if (!mkdtemp(tmpdir))
        return 1;
    snprintf(root, sizeof root, "%s/root", tmpdir);
    snprintf(host, sizeof host, "%s/host", tmpdir);
    snprintf(e_noent, sizeof e_noent, "E%d", ENOENT);
    snprintf(e_loop, sizeof e_loop, "E%d", ELOOP);
    snprintf(e_notdir, sizeof e_notdir, "E%d", ENOTDIR);
    gv_mkdirs(root, 0755);
    gv_mkdirs(host, 0755);
    build_tree();
    long r = syscall(SYS_openat2, AT_FDCWD, "/", NULL, (size_t)0);
    if (r < 0 && errno == ENOSYS)
        fprintf(stderr, "note: no openat2 here, both runs walk by hand\n");
    T_RUN(check_cases);
    T_RUN(check_realpath);
    T_RUN(check_helpers);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
    system(cmd);
    return t_done();
}
