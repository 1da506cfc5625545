/* Whole reads and writes on worker sockets (see ipc.h). */
#include "dev/ipc.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>

int gv_ipc_send_all(int fd, const void *p, size_t n)
{
    const char *c = p;
    while (n) {
        ssize_t k = send(fd, c, n, MSG_NOSIGNAL);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return -1;
        c += k;
        n -= (size_t)k;
    }
    return 0;
}

static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int gv_ipc_recv_all(int fd, void *p, size_t n, int timeout_ms)
{
    char *c = p;
    long long deadline = timeout_ms >= 0 ? now_ms() + timeout_ms : 0;
    while (n) {
        if (timeout_ms >= 0) {
            long long left = deadline - now_ms();
            if (left <= 0)
                return -2;
            struct pollfd pf = {fd, POLLIN, 0};
            int r = poll(&pf, 1, left > 1 << 30 ? 1 << 30 : (int)left);
            if (r < 0 && errno == EINTR)
                continue;
            if (r == 0)
                return -2;
            if (r < 0)
                return -1;
        }
        ssize_t k = recv(fd, c, n, 0);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return -1;
        c += k;
        n -= (size_t)k;
    }
    return 0;
}

void gv_ipc_reap(pid_t pid)
{
    if (pid <= 0)
        return;
    kill(pid, SIGKILL);
    while (waitpid(pid, NULL, 0) < 0 && errno == EINTR) {
    }
}
