/* The rollback planner: baseline snapshot + current snapshot -> ordered steps.
 *
 * Steps (numbered as in the plan the user reads):
 *   0 preconditions and a backup          4 framework wheels
 *   1 containers: switch the image back   5 environment and loader files
 *   2 GPU packages, one transaction       6 the kernel driver, only if it changed
 *   3 hold / version-lock them            7 gpuvet verify
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/utf8.h"
#include "base/buf.h"
#include "base/json.h"
#include "env/envpolicy.h"
#include "plan/pkg.h"
#include "plan/image_pin.h"
#include "plan/plan.h"

static int collected(const json_t *snap, const char *section)
{
    return json_is_true(gv_json_path(snap, section) ? json_object_get(gv_json_path(snap, section),
                                                                      "collected")
                                                    : NULL);
}

/* ---- step 0 --------------------------------------------------------------- */

static void step_backup(json_t *steps, const json_t *current, const struct gv_plan_opts *o,
                        const char *gpuvet_path)
{
    json_t *s = gv_plan_step(steps, 0, "Preconditions and a backup",
                         "Record the state being replaced, so this rollback can itself be undone.");
    gv_plan_cmd(s, json_pack("{s:s}", "require", "root"));
    gv_plan_cmd(s, json_pack("{s:s}", "mkdir_backup", "/var/backups/gpuvet"));
    /* For a chroot or image (--root), the script runs inside it, where gpuvet
     * may not be installed: those invocations are then optional. */
    int chroot_mode = o->root && strcmp(o->root, "/");
    json_t *snap = gv_plan_argv(chroot_mode || !gpuvet_path ? "gpuvet" : gpuvet_path, "snapshot", "-o",
                            "@BACKUP@/snapshot-before.json", NULL);
    if (chroot_mode || !gpuvet_path)
        json_object_set_new(snap, "optional", json_true());
    gv_plan_cmd(s, snap);
    const char *mgr = gv_json_path_str(current, "packages.manager");
    if (mgr && !strcmp(mgr, "rpm"))
        gv_plan_cmd(s, json_pack("{s:[s,s,s,s], s:s}", "argv", "rpm", "-qa", "--qf",
                             "%{NAME}\\t%{EPOCHNUM}:%{VERSION}-%{RELEASE}\\t%{ARCH}\\n", "stdout",
                             "@BACKUP@/packages.txt"));
    else
        gv_plan_cmd(s, json_pack("{s:[s,s,s], s:s}", "argv", "dpkg-query", "-W",
                             "-f=${Package}\\t${Version}\\t${Architecture}\\n", "stdout",
                             "@BACKUP@/packages.txt"));
    gv_plan_cmd(s, json_pack("{s:[s,s]}", "backup_paths", "/etc/profile.d", "/etc/ld.so.conf.d"));
    if (o->archive_tree) {
        json_t *installs = gv_json_path(current, "stacks.installs");
        size_t i;
        json_t *in;
        json_array_foreach(installs, i, in)
        {
            const char *kind = json_string_value(json_object_get(in, "kind"));
            const char *layout = json_string_value(json_object_get(in, "layout"));
            const char *prefix = json_string_value(json_object_get(in, "prefix"));
            if (kind && layout && prefix && !strcmp(kind, "rocm") && !strcmp(layout, "amd") &&
                gv_valid_plain_path(prefix))
                gv_plan_cmd(s, json_pack("{s:s}", "archive_tree", prefix));
        }
    }
}

/* ---- step 4: framework wheels ------------------------------------------- */

static const char *const wheel_names[] = {"torch", "torchvision", "torchaudio", "triton",
                                          "pytorch-triton-rocm", "pytorch-triton"};

/* The current machine's environment that is the baseline's environment be:
 * the same prefix, or else the same site-packages directory. */
static const json_t *find_env(const json_t *snap, const json_t *be)
{
    static const char *const keys[] = {"prefix", "site_packages"};
    for (size_t k = 0; k < 2; k++) {
        const char *want = json_string_value(json_object_get(be, keys[k]));
        size_t i;
        json_t *e;
        json_array_foreach(gv_json_path(snap, "python.environments"), i, e)
        {
            const char *p = json_string_value(json_object_get(e, keys[k]));
            if (want && p && !strcmp(p, want))
                return e;
        }
    }
    return NULL;
}

static const char *pkg_version(const json_t *env, const char *name)
{
    return json_string_value(json_object_get(json_object_get(json_object_get(env, "packages"),
                                                             name),
                                             "version"));
}

/* https://download.pytorch.org/whl/<label> from a local version label:
 * 2.2.2+rocm5.7 -> rocm5.7, 2.3.0+cu121 -> cu121, none -> PyPI (NULL). */
static int index_for(const char *version, char *out, size_t outsz)
{
    const char *plus = version ? strchr(version, '+') : NULL;
    if (!plus)
        return 0;
    const char *label = plus + 1;
    if (strncmp(label, "rocm", 4) && strncmp(label, "cu", 2) && strcmp(label, "cpu"))
        return 0;
    for (const char *p = label; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '.'))
            return 0;
    snprintf(out, outsz, "https://download.pytorch.org/whl/%s", label);
    return 1;
}

static int step_wheels(json_t *plan, json_t *steps, const json_t *baseline, const json_t *current,
                       struct gv_err *err)
{
    json_t *s = NULL;
    size_t i;
    json_t *be;
    json_array_foreach(gv_json_path(baseline, "python.environments"), i, be)
    {
        const char *prefix = json_string_value(json_object_get(be, "prefix"));
        if (!prefix || !pkg_version(be, "torch"))
            continue;
        const json_t *ce = find_env(current, be);
        json_t *argv = json_array();
        char index[256] = "";
        int have_index = index_for(pkg_version(be, "torch"), index, sizeof index);
        int changes = 0;
        for (size_t w = 0; w < sizeof wheel_names / sizeof wheel_names[0]; w++) {
            const char *want = pkg_version(be, wheel_names[w]);
            const char *have = ce ? pkg_version(ce, wheel_names[w]) : NULL;
            if (!want || (have && !strcmp(want, have)))
                continue;
            if (!gv_valid_pip_version(want)) {
                json_decref(argv);
                return gv_err_set(err, GV_E_FORMAT,
                                  "baseline: refusing %s version '%s' in %s: not a valid "
                                  "version",
                                  wheel_names[w], want, prefix);
            }
            char spec[300];
            snprintf(spec, sizeof spec, "%s==%s", wheel_names[w], want);
            json_array_append_new(argv, json_string(spec));
            changes++;
        }
        if (!changes) {
            json_decref(argv);
            continue;
        }
        /* The interpreter is the one this machine has for that environment,
         * never a path the baseline names. */
        const char *interp = ce ? json_string_value(json_object_get(ce, "interpreter")) : NULL;
        char subject[64], e1[300];
        snprintf(subject, sizeof subject, "python.environments[%zu]", i);
        if (!ce || !gv_valid_plain_path(interp)) {
            gv_plan_problemf(plan, subject,
                             "install the baseline's wheel versions by hand with that "
                             "environment's own python",
                             ce ? "the environment '%s' has no usable interpreter on this machine"
                                : "no Python environment of this machine matches '%s' (by prefix "
                                  "or site-packages): its wheels are not restored",
                             gv_escape(prefix, e1, sizeof e1));
            json_decref(argv);
            continue;
        }
        if (!s)
            s = gv_plan_step(steps, 4, "Framework wheels back to the baseline versions",
                         "The wheel is built against one ROCm/CUDA release and bundles its own "
                         "libraries: it must match the baseline, from the index of that build.");
        json_t *cmd = json_array();
        json_array_append_new(cmd, json_string(interp));
        json_array_append_new(cmd, json_string("-m"));
        json_array_append_new(cmd, json_string("pip"));
        json_array_append_new(cmd, json_string("install"));
        if (have_index) {
            json_array_append_new(cmd, json_string("--index-url"));
            json_array_append_new(cmd, json_string(index));
        }
        json_array_extend(cmd, argv);
        json_decref(argv);
        gv_plan_cmd(s, json_pack("{s:o}", "argv", cmd));
        gv_plan_note(s, "%s: wheel availability on %s is not checked offline",
                 gv_escape(interp, e1, sizeof e1), have_index ? index : "PyPI");
    }
    return GV_OK;
}

/* ---- step 5: environment and loader files -------------------------------- */

static const json_t *find_by_path(const json_t *arr, const char *path)
{
    size_t i;
    json_t *e;
    json_array_foreach(arr, i, e)
    {
        const char *p = json_string_value(json_object_get(e, "path"));
        if (p && !strcmp(p, path))
            return e;
    }
    return NULL;
}

static int same_dirs(const json_t *a, const json_t *b)
{
    return json_equal(json_object_get(a, "dirs"), json_object_get(b, "dirs"));
}

/* Unchanged: the same recorded digest, or (older snapshots, no digest) the
 * same recorded assignments. */
static int same_profile(const json_t *a, const json_t *b)
{
    const char *x = json_string_value(json_object_get(a, "sha256"));
    const char *y = json_string_value(json_object_get(b, "sha256"));
    if (x && y)
        return !strcmp(x, y);
    return json_equal(json_object_get(a, "sets"), json_object_get(b, "sets"));
}

static json_t *step5(json_t **s, json_t *steps)
{
    if (!*s)
        *s = gv_plan_step(steps, 5, "Environment and loader files as they were",
                      "Files in /etc/profile.d and /etc/ld.so.conf.d that point at the new "
                      "release keep loading it after the packages are back.");
    return *s;
}

static const char restore_by_hand[] = "restore it by hand if you meant it";

/* A variable the baseline records for this file that a plan never writes. */
static const char *unwritable_var(const json_t *e)
{
    const char *name;
    json_t *v;
    json_object_foreach(json_object_get(e, "sets"), name, v)
    {
        if (gv_env_loads_code(name, strlen(name)) || !gv_env_recordable(name, strlen(name)))
            return name;
    }
    return NULL;
}

/* One changed or missing profile file of the baseline: its recorded text,
 * written back byte for byte and digest-checked; or a problem. */
static void restore_profile(json_t *plan, json_t **s, json_t *steps, const json_t *e, size_t i)
{
    char subject[96], e1[300], e2[300], why[160];
    const char *path = json_string_value(json_object_get(e, "path"));
    const json_t *content = json_object_get(e, "content");
    const char *sha = json_string_value(json_object_get(e, "sha256"));
    const char *var = unwritable_var(e);
    snprintf(subject, sizeof subject, "environment.profile_d[%zu]", i);
    if (var) {
        gv_plan_problemf(plan, subject, restore_by_hand,
                         "%s: not restored: %s %s",
                         gv_escape(path, e1, sizeof e1), gv_escape(var, e2, sizeof e2),
                         gv_env_loads_code(var, strlen(var))
                             ? "loads code into every process (or runs it in every shell)"
                             : "is not a variable a snapshot records");
        return;
    }
    if (!json_is_string(content)) {
        const char *withheld = json_string_value(json_object_get(e, "content_withheld"));
        char how[200];
        snprintf(how, sizeof how, "restore it from the backup you made of the baseline%s%s%s",
                 sha ? " (sha256 " : "", sha ? gv_escape(sha, e2, 80) : "", sha ? ")" : "");
        gv_plan_problemf(plan, subject, how,
                         "%s changed, and the baseline holds no text for it to write back (%s)",
                         gv_escape(path, e1, sizeof e1),
                         withheld ? gv_escape(withheld, e2, sizeof e2)
                                  : "a snapshot older than recorded content");
        return;
    }
    const char *text = json_string_value(content);
    size_t len = json_string_length(content);
    json_t *size = json_object_get(e, "size");
    if (!gv_plan_content_ok(text, len, sha, why, sizeof why) ||
        (size && (!json_is_integer(size) || json_integer_value(size) != (json_int_t)len))) {
        if (!why[0])
            snprintf(why, sizeof why, "its length is not its recorded size");
        strncat(subject, ".content", sizeof subject - strlen(subject) - 1);
        gv_plan_problemf(plan, subject, restore_by_hand,
                         "refusing the recorded text of %s: %s", gv_escape(path, e1, sizeof e1),
                         why);
        return;
    }
    gv_plan_cmd(step5(s, steps), json_pack("{s:s, s:O, s:s, s:s}", "write_file", path, "content",
                                           content, "sha256", sha, "mode", "0644"));
}

static void refuse_path(json_t *plan, const char *field, size_t i, const char *path,
                        const char *what)
{
    char subject[96], e1[300];
    snprintf(subject, sizeof subject, "%s[%zu].path", field, i);
    gv_plan_problemf(plan, subject, restore_by_hand, "refusing '%s': %s",
                     gv_escape(path, e1, sizeof e1), what);
}

static const char profile_places[] =
    "a plan writes profile settings only to /etc/environment and /etc/profile.d/NAME.sh";
static const char loader_places[] =
    "a plan writes loader configuration only to /etc/ld.so.conf.d/NAME.conf";

static void step_profiles(json_t *plan, json_t **s, json_t *steps, const json_t *baseline,
                          const json_t *current)
{
    size_t i;
    json_t *e;
    const json_t *bp = gv_json_path(baseline, "environment.profile_d");
    const json_t *cp = gv_json_path(current, "environment.profile_d");
    json_array_foreach(bp, i, e)
    {
        const char *path = json_string_value(json_object_get(e, "path"));
        if (!gv_plan_dest_allowed("write_file", path) ||
            gv_plan_dest(path) == GV_DEST_LOADER_CONF) {
            refuse_path(plan, "environment.profile_d", i, path, profile_places);
            continue;
        }
        const json_t *now = find_by_path(cp, path);
        if (!now || !same_profile(e, now))
            restore_profile(plan, s, steps, e, i);
    }
    json_array_foreach(cp, i, e)
    {
        const char *path = json_string_value(json_object_get(e, "path"));
        if (!path || find_by_path(bp, path))
            continue;
        if (gv_plan_dest(path) == GV_DEST_PROFILE_D)
            gv_plan_cmd(step5(s, steps), json_pack("{s:s}", "remove_file", path));
        else if (gv_plan_dest(path) == GV_DEST_ENVIRONMENT)
            gv_plan_problem(plan, "/etc/environment",
                            "it sets variables now that the baseline did not record",
                            "edit it by hand, or restore it from the backup of the baseline");
    }
}

/* Leftovers: GPU library files no package owns that the baseline did not
 * have (e.g. a 6.x library left in a 5.7 directory) are moved into the
 * backup, with the symlinks that name them; only GPU library files in a
 * library directory (the destination policy). */
static int step_leftovers(json_t *plan, json_t **s, json_t *steps, const json_t *baseline,
                          const json_t *current)
{
    int moved = 0;
    size_t i;
    json_t *e;
    const json_t *bl_items = gv_json_path(baseline, "libraries.items");
    json_array_foreach(gv_json_path(current, "libraries.items"), i, e)
    {
        const char *path = json_string_value(json_object_get(e, "path"));
        if (!json_is_true(json_object_get(e, "unowned")) || !path || find_by_path(bl_items, path))
            continue;
        const char *bad = gv_plan_dest_allowed("move_to_backup", path) ? NULL : path;
        size_t j;
        json_t *l;
        json_array_foreach(json_object_get(e, "links"), j, l)
            if (!bad && !gv_plan_dest_allowed("move_to_backup", json_string_value(l)))
                bad = json_string_value(l) ? json_string_value(l) : "(not a string)";
        if (bad) {
            char subject[96], e1[300], e2[300];
            snprintf(subject, sizeof subject, "current libraries.items[%zu]", i);
            gv_plan_problemf(plan, subject, "move it aside by hand if it is a GPU library leftover",
                             "'%s' not moved: '%s' is not a GPU library file in a library "
                             "directory",
                             gv_escape(path, e1, sizeof e1), gv_escape(bad, e2, sizeof e2));
            continue;
        }
        json_t *st = step5(s, steps);
        json_array_foreach(json_object_get(e, "links"), j, l)
        {
            const char *lp = json_string_value(l);
            if (!find_by_path(bl_items, lp))
                gv_plan_cmd(st, json_pack("{s:s}", "move_to_backup", lp));
        }
        gv_plan_cmd(st, json_pack("{s:s}", "move_to_backup", path));
        gv_plan_note(st, "%s is owned by no package and was not there at the baseline: moved to the "
                     "backup, not deleted",
                 path);
        moved = 1;
    }
    return moved;
}

/* The loader lines of one baseline file, or NULL (and a problem) when one
 * is not a plain absolute directory. */
static json_t *loader_lines(json_t *plan, const json_t *e, size_t i)
{
    json_t *lines = json_array();
    size_t j;
    json_t *d;
    json_array_foreach(json_object_get(e, "dirs"), j, d)
    {
        const char *dir = json_string_value(d);
        if (!gv_valid_plain_path(dir)) {
            char subject[96], e1[300];
            snprintf(subject, sizeof subject, "loader.conf_files[%zu].dirs[%zu]", i, j);
            gv_plan_problemf(plan, subject, restore_by_hand,
                             "refusing loader directory '%s': not a plain absolute directory",
                             gv_escape(dir, e1, sizeof e1));
            json_decref(lines);
            return NULL;
        }
        json_array_append_new(lines, json_string(dir));
    }
    return lines;
}

static int step_loader(json_t *plan, json_t **s, json_t *steps, const json_t *baseline,
                       const json_t *current)
{
    int changed = 0;
    size_t i;
    json_t *e;
    const json_t *bl = gv_json_path(baseline, "loader.conf_files");
    const json_t *cl = gv_json_path(current, "loader.conf_files");
    json_array_foreach(bl, i, e)
    {
        const char *path = json_string_value(json_object_get(e, "path"));
        if (!path || !strcmp(path, "/etc/ld.so.conf"))
            continue;
        const json_t *now = find_by_path(cl, path);
        if (now && same_dirs(e, now))
            continue;
        if (!gv_loader_conf_is_gpu(e) && !(now && gv_loader_conf_is_gpu(now)))
            continue; /* the C library's own file, say: not part of the GPU stack */
        if (gv_plan_dest(path) != GV_DEST_LOADER_CONF) {
            refuse_path(plan, "loader.conf_files", i, path, loader_places);
            continue;
        }
        json_t *lines = loader_lines(plan, e, i);
        if (!lines)
            continue;
        gv_plan_cmd(step5(s, steps), json_pack("{s:s, s:o, s:s}", "write_file", path, "lines",
                                               lines, "mode", "0644"));
        changed = 1;
    }
    json_array_foreach(cl, i, e)
    {
        const char *path = json_string_value(json_object_get(e, "path"));
        if (!path || !strcmp(path, "/etc/ld.so.conf") || find_by_path(bl, path) ||
            !gv_loader_conf_is_gpu(e))
            continue;
        if (gv_plan_dest(path) != GV_DEST_LOADER_CONF) {
            refuse_path(plan, "current loader.conf_files", i, path, loader_places);
            continue;
        }
        gv_plan_cmd(step5(s, steps), json_pack("{s:s}", "remove_file", path));
        changed = 1;
    }
    return changed;
}

static void step_files(json_t *plan, json_t *steps, const json_t *baseline, const json_t *current)
{
    json_t *s = NULL;
    step_profiles(plan, &s, steps, baseline, current);
    int loader_changed = step_leftovers(plan, &s, steps, baseline, current);
    loader_changed |= step_loader(plan, &s, steps, baseline, current);
    const char *balt = gv_json_path_str(baseline, "stacks.alternatives.rocm.target");
    const char *calt = gv_json_path_str(current, "stacks.alternatives.rocm.target");
    if (balt && (!calt || strcmp(balt, calt))) {
        char e1[300];
        if (!gv_valid_plain_path(balt))
            gv_plan_problemf(plan, "stacks.alternatives.rocm.target", restore_by_hand,
                             "refusing alternatives target '%s': not a plain absolute path",
                             gv_escape(balt, e1, sizeof e1));
        else
            gv_plan_cmd(step5(&s, steps),
                        gv_plan_argv("update-alternatives", "--set", "rocm", balt, NULL));
    }
    if (loader_changed)
        gv_plan_cmd(step5(&s, steps), gv_plan_argv("ldconfig", NULL));
    const json_t *bld = gv_json_path(baseline, "loader.ld_library_path");
    const json_t *cld = gv_json_path(current, "loader.ld_library_path");
    if (!json_equal(bld, cld) && (bld || cld)) {
        json_t *st = step5(&s, steps);
        char *b = bld ? gv_json_dumps(bld, JSON_COMPACT | JSON_ENSURE_ASCII) : strdup("unset");
        char *c = cld ? gv_json_dumps(cld, JSON_COMPACT | JSON_ENSURE_ASCII) : strdup("unset");
        gv_plan_note(st,
                 "LD_LIBRARY_PATH was %s at the baseline and is %s now: it comes from a shell "
                 "startup file or a job script, which a plan cannot see; set it back there",
                 b ? b : "?", c ? c : "?");
        free(b);
        free(c);
    }
}

/* ---- the whole plan -------------------------------------------------------- */

/* "complete" only when the plan takes back every difference it saw: problems make it
 * "incomplete" (nothing is generated), differences it leaves out "partial". */
static void set_status(json_t *plan)
{
    int problems = json_array_size(json_object_get(plan, "problems")) > 0;
    int left = json_array_size(json_object_get(plan, "not_rolled_back")) > 0;
    json_object_set_new(plan, "status", json_string(problems ? "incomplete"
                                                    : left   ? "partial"
                                                             : "complete"));
    if (problems || left)
        json_object_set_new(plan, "complete", json_false());
}

int gv_plan_rollback(const json_t *baseline, const json_t *current,
                     const struct gv_plan_opts *opts, json_t **out, struct gv_err *err)
{
    *out = NULL;
    if (gv_plan_is_image(baseline)) /* an image goes back by its digest */
        return gv_plan_image_pin(baseline, opts, NULL, out, err);
    if (!collected(baseline, "packages"))
        return gv_err_set(err, GV_E_FORMAT,
                          "baseline: packages were not collected, so there is nothing to go "
                          "back to");
    if (!collected(current, "packages"))
        return gv_err_set(err, GV_E_FORMAT, "current state: packages were not collected");
    json_t *plan = json_pack("{s:s, s:i, s:s, s:b, s:s, s:[], s:[]}", "schema", GV_PLAN_SCHEMA,
                             "schema_version", GV_PLAN_SCHEMA_VERSION, "kind", "rollback",
                             "complete", 1, "baseline", opts->baseline_path ? opts->baseline_path
                                                                            : "",
                             "problems", "steps");
    json_object_set(plan, "baseline_created", json_object_get(baseline, "created")
                                                  ? json_object_get(baseline, "created")
                                                  : json_null());
    json_t *steps = json_object_get(plan, "steps");
    int rc;

    step_backup(steps, current, opts, opts->gpuvet_path);

    if (json_is_true(gv_json_path(current, "host.container.inside"))) {
        json_t *s = gv_plan_step(steps, 1, "Inside a container: switch back to the old image",
                             "A container's GPU user space comes from its image. Rolling back "
                             "means starting the container from the image tag you used at the "
                             "baseline; changing packages inside it would be lost on restart.");
        const char *rt = gv_json_path_str(current, "host.container.runtime");
        gv_plan_note(s, "container runtime: %s; the host only needs a compatible kernel driver",
                 rt ? rt : "unknown");
        gv_plan_note(s, "stop here: no package, wheel or file inside the container is changed");
        json_object_set_new(plan, "container", json_true());
        *out = plan;
        return GV_OK;
    }

    rc = gv_plan_packages(plan, steps, baseline, current, opts, err);
    if (rc)
        goto fail;
    gv_plan_not_rolled_back(plan, baseline, current);
    rc = step_wheels(plan, steps, baseline, current, err);
    if (rc)
        goto fail;
    step_files(plan, steps, baseline, current);
    rc = gv_plan_driver(plan, steps, baseline, current, opts, err);
    if (rc)
        goto fail;

    json_t *v = gv_plan_step(steps, 7, "Verify",
                         "Prove the machine matches the baseline again: the GPU stack has no "
                         "difference, no leftovers on the loader path.");
    int chroot_mode = opts->root && strcmp(opts->root, "/");
    const char *base = opts->baseline_path && gv_valid_abs_path(opts->baseline_path)
                           ? opts->baseline_path
                           : NULL;
    if (chroot_mode) {
        gv_plan_note(v, "this plan runs inside %s: verify it from the host with 'gpuvet verify "
                    "--root %s --baseline %s'",
                 opts->root, opts->root, base ? base : "<the baseline snapshot>");
    } else if (base) {
        json_t *cmd = gv_plan_argv(opts->gpuvet_path ? opts->gpuvet_path : "gpuvet", "verify",
                               "--baseline", base, NULL);
        if (!opts->gpuvet_path)
            json_object_set_new(cmd, "optional", json_true());
        gv_plan_cmd(v, cmd);
    } else {
        gv_plan_note(v, "run: gpuvet verify --baseline <the baseline snapshot>");
    }
    set_status(plan);
    *out = plan;
    return GV_OK;
fail:
    json_decref(plan);
    return rc;
}
