/* The environment of an inspected root (issue 31): what a login inside the
 * image gets from its /etc/environment, never the environment of the process
 * running gpuvet. Under --root the command passes this as the probes' envp
 * (struct gv_probe_ctx), so the recorded variables and the loader's
 * LD_LIBRARY_PATH are the image's. */
#ifndef GV_ENV_ROOTENV_H
#define GV_ENV_ROOTENV_H

#include <stddef.h>

#include "base/err.h"

#define GV_ROOTENV_FILE_MAX (1 << 20) /* larger files are not read */
#define GV_ROOTENV_VALUE_MAX 8192     /* longer values are skipped */

/* The variables of ROOT/etc/environment, read through gv_root_read_file (links
 * resolve inside root, as in a chroot), parsed by gv_rootenv_parse. *envp is
 * a new NULL-terminated "NAME=VALUE" list; it is empty when the file is
 * absent or cannot be read (not a regular file, too large, unreadable): the
 * environment section reports such a file itself. Fails only for memory. */
int gv_rootenv_read(const char *root, char ***envp, struct gv_err *err);

/* pam_env's /etc/environment format, text of len bytes: one NAME=VALUE a
 * line, optional leading "export ", the value optionally in one pair of
 * single or double quotes (taken literally inside: no escapes, no $
 * expansion); blank lines and lines starting with '#' are skipped, as are
 * invalid ones: a NAME that is not a shell name ([A-Za-z_][A-Za-z0-9_]*, at
 * most 256 bytes), no '=' right after it, an unmatched quote, a NUL byte, a
 * value over GV_ROOTENV_VALUE_MAX bytes. Blanks (and a CR) around the line
 * are dropped. A name set twice keeps its last value. The last line needs
 * no newline. */
int gv_rootenv_parse(const char *text, size_t len, char ***envp, struct gv_err *err);

/* Frees a list from the functions above (NULL is fine). */
void gv_rootenv_free(char **envp);

#endif
