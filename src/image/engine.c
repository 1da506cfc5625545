/* podman:/docker: references: the engine's own export of the image into a
 * private directory of gpuvet's cache (`podman image save --format oci-archive
 * -o FILE NAME`, `docker save -o FILE NAME`), run with execvp and a fixed
 * argument list (never a shell), its output kept for the message, under a
 * time limit. The export is read as a tarball and removed on close. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/fs.h"
#include "image/format.h"

/* An export of a multi-GB image takes minutes; one that hangs is stopped. */
#define EXPORT_TIMEOUT_S 1800

static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The child: stdin /dev/null, stdout and stderr to the pipe, then argv. */
static void child(char *const argv[], int wfd)
{
    int nul = open("/dev/null", O_RDONLY);
    if (nul >= 0)
        dup2(nul, 0);
    dup2(wfd, 1);
    dup2(wfd, 2);
    execvp(argv[0], argv);
    dprintf(2, "cannot run %s: %s", argv[0], strerror(errno));
    _exit(127);
}

/* Keeps the last bytes of the child's output, printable. */
static void keep(char *tail, size_t tailsz, const char *buf, size_t n)
{
    size_t have = strlen(tail);
    for (size_t i = 0; i < n; i++) {
        if (have + 1 >= tailsz) {
            memmove(tail, tail + tailsz / 2, have - tailsz / 2 + 1);
            have = strlen(tail);
        }
        char c = buf[i];
        tail[have++] = (c == '\n' || c == '\t') ? ' ' : (c < 0x20 || c == 0x7f) ? '?' : c;
        tail[have] = '\0';
    }
}

/* Runs argv to completion (or the time limit); tail gets its last output. */
static int run(char *const argv[], char *tail, size_t tailsz, int *status, struct gv_err *err)
{
    int p[2];
    tail[0] = '\0';
    if (pipe2(p, O_CLOEXEC) != 0)
        return gv_err_set(err, GV_E_IO, "%s: pipe: %s", argv[0], strerror(errno));
    pid_t pid = fork();
    if (pid < 0) {
        close(p[0]);
        close(p[1]);
        return gv_err_set(err, GV_E_IO, "%s: fork: %s", argv[0], strerror(errno));
    }
    if (pid == 0)
        child(argv, p[1]);
    close(p[1]);
    long long deadline = now_ms() + EXPORT_TIMEOUT_S * 1000LL;
    int timed_out = 0;
    for (;;) {
        long long left = deadline - now_ms();
        if (left <= 0) {
            timed_out = 1;
            kill(pid, SIGKILL);
            break;
        }
        struct pollfd pf = {p[0], POLLIN, 0};
        int r = poll(&pf, 1, left > 60000 ? 60000 : (int)left);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            continue;
        char buf[4096];
        ssize_t n = read(p[0], buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        keep(tail, tailsz, buf, (size_t)n);
    }
    close(p[0]);
    while (waitpid(pid, status, 0) < 0 && errno == EINTR)
        ;
    if (timed_out)
        return gv_err_set(err, GV_E_TIMEOUT, "%s save: no result after %d s", argv[0],
                          EXPORT_TIMEOUT_S);
    return GV_OK;
}

int gv_engine_export(const char *engine, const char *name, char *file, size_t filesz,
                     struct gv_err *err)
{
    char dir[GV_PATH_MAX];
    int rc = gv_cache_dir(dir, sizeof dir, "images", err);
    if (rc != GV_OK)
        return rc;
    char tmpl[GV_PATH_MAX + 32];
    snprintf(tmpl, sizeof tmpl, "%s/export-XXXXXX", dir);
    if (!mkdtemp(tmpl))
        return gv_err_set(err, GV_E_IO, "%s: %s", tmpl, strerror(errno));
    snprintf(file, filesz, "%s/image.tar", tmpl);
    /* execvp's argv is char *const[]: the literals are not written to */
    char *podman[] = {(char *)"podman", (char *)"image", (char *)"save", (char *)"--format",
                      (char *)"oci-archive", (char *)"-o", file, (char *)name, NULL};
    char *docker[] = {(char *)"docker", (char *)"save", (char *)"-o", file, (char *)name, NULL};
    char *const *argv = !strcmp(engine, "podman") ? podman : docker;
    char tail[1024];
    int status = 0;
    rc = run(argv, tail, sizeof tail, &status, err);
    if (rc == GV_OK && !(WIFEXITED(status) && WEXITSTATUS(status) == 0))
        rc = gv_err_set(err, GV_E_IO, "%s save %.300s failed (%s %d): %s", engine, name,
                        WIFEXITED(status) ? "exit status" : "signal",
                        WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status),
                        tail[0] ? tail : "no output");
    if (rc != GV_OK)
        gv_engine_export_remove(file);
    return rc;
}

void gv_engine_export_remove(const char *file)
{
    if (!file || !file[0])
        return;
    unlink(file);
    char dir[GV_PATH_MAX];
    snprintf(dir, sizeof dir, "%s", file);
    char *slash = strrchr(dir, '/');
    if (slash) {
        *slash = '\0';
        rmdir(dir);
    }
}
