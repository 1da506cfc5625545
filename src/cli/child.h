/* Running this gpuvet again as a child process (verify and ab rerun the
 * suite, ab under another stack), with a modified environment. */
#ifndef GV_CLI_CHILD_H
#define GV_CLI_CHILD_H

/* Runs "/proc/self/exe ARGS..." with environment envp (NULL: inherit),
 * stdout sent to /dev/null when quiet, stderr passed through. Returns the
 * child's exit status, or -1 if it could not be started or was killed. */
int cli_run_self(char *const args[], char *const envp[], int quiet);

#endif
