/* Rollback of a container image (docs/rollback.md, "Images"): the plan is a
 * digest pin, not a package transaction. From a baseline snapshot with an
 * `image` section (docs/image.md) it names the exact reference
 * NAME@sha256:<manifest digest> (for a legacy docker-archive, which has no
 * manifest digest, the image ID sha256:<config>) and the commands of docker,
 * podman, Kubernetes and compose that select it. Verification compares an
 * image's identity with the baseline's, or the GPU libraries a running
 * container's process mapped (/proc/N/maps, hashed through /proc/N/root) with
 * the baseline's libraries. Nothing here changes the system or prints. */
#ifndef GV_PLAN_IMAGE_PIN_H
#define GV_PLAN_IMAGE_PIN_H

#include <jansson.h>

#include "base/err.h"
#include "plan/plan.h"

/* The OCI distribution reference grammar (distribution/reference):
 * [DOMAIN[:PORT]/]COMPONENT(/COMPONENT)*, at most 255 characters. */
int gv_valid_image_name(const char *s);
/* [A-Za-z0-9_][A-Za-z0-9_.-]{0,127} */
int gv_valid_image_tag(const char *s);
/* "sha256:" and 64 lowercase hex digits. */
int gv_valid_sha256_digest(const char *s);

/* Does the snapshot describe an image (an "image" object)? */
int gv_plan_is_image(const json_t *baseline);

/* The digest-pin plan {schema gpuvet.plan, kind "image-pin", complete,
 * problems[], baseline, pin{name, tag, digest, by, reference, why}, engines[],
 * verify[]}. name overrides the name taken from image.tags (NULL: from the
 * tags). A value that is not a valid name, tag or digest is GV_E_FORMAT naming
 * its field; no name at all is an incomplete plan (a problem saying how). */
int gv_plan_image_pin(const json_t *baseline, const struct gv_plan_opts *opts, const char *name,
                      json_t **plan, struct gv_err *err);
/* Renderers of an image-pin plan (gv_plan_render_sh/md call them): NULL when a
 * value fails validation again. The script quotes every value and writes no
 * file. */
char *gv_plan_image_render_sh(const json_t *plan);
char *gv_plan_image_render_md(const json_t *plan);

/* verify --image: the image's identity (cli_image_identity) against the
 * baseline's image section. *report is gpuvet.verify with kind "image",
 * stack_matches, compared ("manifest_digest" or "config_digest"),
 * differences[] (both digests and the tags). */
int gv_verify_image(const json_t *baseline, const json_t *image, const char *baseline_name,
                    json_t **report, struct gv_err *err);
/* verify --pid: every GPU library process pid mapped (env/process.c), hashed
 * through /proc/PID/root, must be one of the baseline's libraries items with
 * the same sha256. *report is gpuvet.verify with kind "process", pid,
 * stack_matches, mapped[], mismatches[], not_in_baseline[]. A process that
 * cannot be read is an error (GV_E_NOTFOUND or GV_E_IO). */
int gv_verify_process(const json_t *baseline, int pid, const char *baseline_name,
                      json_t **report, struct gv_err *err);

#endif
