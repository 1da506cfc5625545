/* Running read-only package-manager queries with a timeout, output captured. */
#ifndef GV_PLAN_RUN_H
#define GV_PLAN_RUN_H

#include <stddef.h>

/* Runs argv (no shell), stdin from /dev/null, stderr discarded, stdout
 * captured up to max bytes. Returns the exit status, -1 if it could not run,
 * -2 on timeout (the child is killed). *out is malloc'ed (may be NULL). */
int gv_run_capture(char *const argv[], int timeout_s, size_t max, char **out);

#endif
