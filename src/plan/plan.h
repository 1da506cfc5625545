/* Rollback planning: from a baseline snapshot and the current one, an ordered
 * plan for every layer (packages in one transaction, holds, framework wheels,
 * environment and loader files, the kernel driver, then verification). Plans
 * are data (JSON, schema gpuvet.plan v1); renderers turn them into a shell
 * script or Markdown. Nothing here changes the system: package managers are
 * only queried, read-only, to prove every target version can be installed. */
#ifndef GV_PLAN_PLAN_H
#define GV_PLAN_PLAN_H

#include <jansson.h>

#include "base/err.h"

#define GV_PLAN_SCHEMA "gpuvet.plan"
#define GV_PLAN_SCHEMA_VERSION 1

struct gv_plan_opts {
    const char *baseline_path; /* named in the verification step */
    const char *root;          /* where package-manager queries run; "/" live */
    int check_availability;    /* query apt/dnf and local caches (default 1) */
    int archive_tree;          /* step 0 also archives the ROCm tree being replaced */
    const char *gpuvet_path;   /* absolute path of this gpuvet, used in steps 0 and 7 */
};

/* Builds the plan. GV_OK even when the plan is incomplete: then
 * plan["complete"] is false and plan["problems"] says what is missing and how
 * to get it. Errors are for unusable input (e.g. no package data). */
int gv_plan_rollback(const json_t *baseline, const json_t *current,
                     const struct gv_plan_opts *opts, json_t **plan, struct gv_err *err);

/* Renderers: malloc'ed text. The shell form quotes every value, validates
 * package names and versions again, stops at the first error and is safe to
 * run twice. */
char *gv_plan_render_sh(const json_t *plan);
char *gv_plan_render_md(const json_t *plan);

/* Validation used by the planner and the renderers. */
int gv_valid_deb_name(const char *s);     /* Debian policy 5.6.1 */
int gv_valid_deb_version(const char *s);  /* [epoch:]upstream[-revision] */
int gv_valid_rpm_name(const char *s);
int gv_valid_pip_name(const char *s);     /* PEP 508 name */
int gv_valid_pip_version(const char *s);  /* PEP 440, with a local label */
int gv_valid_abs_path(const char *s);     /* absolute, no control characters, no ".." */
/* Appends s to buf single-quoted for POSIX sh ('it'\''s): the one quoting
 * function of the renderers. Returns -1 (nothing appended) for NULL or a value
 * with a newline or another control character other than tab. */
struct gv_buf;
int gv_sh_quote(struct gv_buf *buf, const char *s);

/* The one destination policy: every file a plan writes, removes or moves
 * aside is one of these, judged from its path alone. Paths must be plain
 * (gv_valid_plain_path); NAME is a plain file name, not hidden. */
enum gv_dest {
    GV_DEST_NONE = 0,
    GV_DEST_ENVIRONMENT = 1, /* /etc/environment */
    GV_DEST_PROFILE_D = 2,   /* /etc/profile.d/NAME.sh */
    GV_DEST_LOADER_CONF = 4, /* /etc/ld.so.conf.d/NAME.conf */
    GV_DEST_GPU_LIBRARY = 8, /* a GPU library file or link (env/libnames) in a library dir */
};
enum gv_dest gv_plan_dest(const char *path);
/* May a command of this kind ("write_file", "remove_file", "move_to_backup")
 * touch path? Profile files are written, never /etc/environment removed;
 * only GPU library files are moved aside. */
int gv_plan_dest_allowed(const char *cmd, const char *path);
/* Absolute and normalised: components of [A-Za-z0-9._+@-] only, no empty,
 * "." or ".." component, no trailing '/'. Also what a loader directory must be. */
int gv_valid_plain_path(const char *s);
/* A profile file's recorded content may be written back: it passes
 * gv_env_profile_restorable and its sha256 is the recorded one. */
int gv_plan_content_ok(const char *content, size_t len, const char *sha256, char *why,
                       size_t whysz);

#endif
