/* `rpm --root ROOT -qa`: the one external command a probe runs, with a
 * timeout and an output cap, its environment reduced to PATH and LC_ALL. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "env/pkgdb.h"

#define RPM_OUTPUT_MAX ((size_t)64 << 20)
#define RPM_QF "%{NAME}\\t%|EPOCH?{%{EPOCH}:}:{}|%{VERSION}-%{RELEASE}\\t%{ARCH}\\t%{SOURCERPM}\\n"

static void child(int fd, const char *rpm_bin, const char *root, const char *dbpath)
{
    dup2(fd, STDOUT_FILENO);
    int devnull = open("/dev/null", O_RDWR);
    if (devnull >= 0) {
        dup2(devnull, STDIN_FILENO);
        dup2(devnull, STDERR_FILENO);
    }
    char *const argv[] = {(char *)rpm_bin, (char *)"--root", (char *)root,
                          (char *)"--dbpath", (char *)dbpath, (char *)"-qa",
                          (char *)"--qf", (char *)RPM_QF, NULL};
    char *const envp[] = {(char *)"PATH=/usr/bin:/bin", (char *)"LC_ALL=C", NULL};
    execve(rpm_bin, argv, envp);
    _exit(127);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Read the child's output until EOF, the cap, or the deadline. */
static int drain(int fd, double deadline, char **buf, size_t *len)
{
    size_t cap = 1 << 16;
    *buf = malloc(cap + 1);
    *len = 0;
    if (!*buf)
        return GV_E_NOMEM;
    for (;;) {
        double left = deadline - now_s();
        if (left <= 0)
            return GV_E_TIMEOUT;
        struct pollfd p = {fd, POLLIN, 0};
        int r = poll(&p, 1, (int)(left * 1000) + 1);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return r == 0 ? GV_E_TIMEOUT : GV_E_IO;
        if (*len == cap) {
            if (cap >= RPM_OUTPUT_MAX)
                return GV_E_FORMAT;
            char *nb = realloc(*buf, cap * 2 + 1);
            if (!nb)
                return GV_E_NOMEM;
            *buf = nb;
            cap *= 2;
        }
        ssize_t n = read(fd, *buf + *len, cap - *len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        *len += (size_t)n;
    }
    (*buf)[*len] = '\0';
    return GV_OK;
}

int gv_rpm_query(const char *root, const char *dbpath, const char *rpm_bin, int timeout_s,
                 struct gv_pkg_list *out, struct gv_err *err)
{
    int fds[2];
    memset(out, 0, sizeof *out);
    if (pipe2(fds, O_CLOEXEC) != 0)
        return gv_err_set(err, GV_E_IO, "rpm query: pipe: %s", strerror(errno));
    pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        return gv_err_set(err, GV_E_IO, "rpm query: fork: %s", strerror(errno));
    }
    if (pid == 0)
        child(fds[1], rpm_bin, root, dbpath);
    close(fds[1]);
    char *buf;
    size_t len;
    int rc = drain(fds[0], now_s() + timeout_s, &buf, &len);
    close(fds[0]);
    if (rc)
        kill(pid, SIGKILL);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (rc == GV_OK && !(WIFEXITED(status) && WEXITSTATUS(status) == 0))
        rc = gv_err_set(err, GV_E_IO, "%s --root %s -qa: exited with status %d", rpm_bin, root,
                        WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    else if (rc == GV_E_TIMEOUT)
        gv_err_set(err, rc, "%s --root %s -qa: no answer within %d s (killed)", rpm_bin, root,
                   timeout_s);
    else if (rc)
        gv_err_set(err, rc, "%s --root %s -qa: output unreadable or larger than %zu bytes",
                   rpm_bin, root, RPM_OUTPUT_MAX);
    if (rc == GV_OK)
        rc = gv_rpm_parse(buf, len, out, err);
    free(buf);
    return rc;
}
