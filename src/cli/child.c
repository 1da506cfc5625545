#include "cli/child.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

int cli_run_self(char *const args[], char *const envp[], int quiet)
{
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0)
        return -1;
    self[n] = '\0';
    size_t argc = 0;
    while (args[argc])
        argc++;
    char **argv = calloc(argc + 2, sizeof *argv);
    if (!argv)
        return -1;
    argv[0] = self;
    memcpy(argv + 1, args, argc * sizeof *argv);
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        free(argv);
        return -1;
    }
    if (pid == 0) {
        if (quiet) {
            int fd = open("/dev/null", O_WRONLY);
            if (fd >= 0)
                dup2(fd, STDOUT_FILENO);
        }
        execve(self, argv, envp ? envp : environ);
        _exit(127);
    }
    free(argv);
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}
