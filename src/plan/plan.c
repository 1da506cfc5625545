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

#include "base/buf.h"
#include "base/json.h"
#include "plan/pkg.h"
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
                gv_valid_abs_path(prefix))
                gv_plan_cmd(s, json_pack("{s:s}", "archive_tree", prefix));
        }
    }
}

/* ---- step 4: framework wheels ------------------------------------------- */

static const char *const wheel_names[] = {"torch", "torchvision", "torchaudio", "triton",
                                          "pytorch-triton-rocm", "pytorch-triton"};

static const json_t *find_env(const json_t *snap, const char *prefix)
{
    size_t i;
    json_t *e;
    json_array_foreach(gv_json_path(snap, "python.environments"), i, e)
    {
        const char *p = json_string_value(json_object_get(e, "prefix"));
        if (p && !strcmp(p, prefix))
            return e;
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
        const char *interp = json_string_value(json_object_get(be, "interpreter"));
        if (!prefix || !pkg_version(be, "torch"))
            continue;
        const json_t *ce = find_env(current, prefix);
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
        if (!s)
            s = gv_plan_step(steps, 4, "Framework wheels back to the baseline versions",
                         "The wheel is built against one ROCm/CUDA release and bundles its own "
                         "libraries: it must match the baseline, from the index of that build.");
        if (!interp || !gv_valid_abs_path(interp)) {
            gv_plan_problem(plan, prefix, "the baseline does not record this environment's interpreter",
                        "run the pip command below with that environment's python");
            interp = "python3";
        }
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
        gv_plan_note(s, "%s: wheel availability on %s is not checked offline", prefix,
                 have_index ? index : "PyPI");
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

static json_t *profile_lines(const json_t *entry, json_t *step)
{
    json_t *lines = json_array();
    json_array_append_new(lines, json_string("# restored by gpuvet plan rollback"));
    const char *name;
    json_t *val;
    json_object_foreach(json_object_get(entry, "sets"), name, val)
    {
        const char *v = json_string_value(val);
        if (!v)
            continue;
        struct gv_buf b = {0};
        gv_buf_printf(&b, "export %s=", name);
        gv_sh_quote(&b, v);
        char *line = gv_buf_take(&b);
        json_array_append_new(lines, json_string(line));
        free(line);
    }
    size_t i;
    json_t *w;
    json_array_foreach(json_object_get(entry, "withheld"), i, w)
        gv_plan_note(step, "%s: %s was withheld from the snapshot (a secret): set it again by hand",
                 json_string_value(json_object_get(entry, "path")), json_string_value(w));
    return lines;
}

static int valid_env_name(const char *s)
{
    if (!s || !*s || (*s >= '0' && *s <= '9'))
        return 0;
    for (; *s; s++)
        if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') ||
              *s == '_'))
            return 0;
    return 1;
}

static int same_sets(const json_t *a, const json_t *b)
{
    return json_equal(json_object_get(a, "sets"), json_object_get(b, "sets"));
}

static int same_dirs(const json_t *a, const json_t *b)
{
    return json_equal(json_object_get(a, "dirs"), json_object_get(b, "dirs"));
}

static json_t *step5(json_t **s, json_t *steps)
{
    if (!*s)
        *s = gv_plan_step(steps, 5, "Environment and loader files as they were",
                      "Files in /etc/profile.d and /etc/ld.so.conf.d that point at the new "
                      "release keep loading it after the packages are back.");
    return *s;
}

static int step_files(json_t *steps, const json_t *baseline, const json_t *current,
                      struct gv_err *err)
{
    json_t *s = NULL;
    int loader_changed = 0;
    size_t i;
    json_t *e;
    const json_t *bp = gv_json_path(baseline, "environment.profile_d");
    const json_t *cp = gv_json_path(current, "environment.profile_d");
    json_array_foreach(bp, i, e)
    {
        const char *path = json_string_value(json_object_get(e, "path"));
        if (!gv_valid_abs_path(path))
            return gv_err_set(err, GV_E_FORMAT, "baseline: refusing profile.d path '%s'",
                              path ? path : "(none)");
        const json_t *now = find_by_path(cp, path);
        if (now && same_sets(e, now))
            continue;
        const char *name;
        json_t *v;
        json_object_foreach(json_object_get(e, "sets"), name, v) if (!valid_env_name(name))
            return gv_err_set(err, GV_E_FORMAT, "baseline: refusing variable name '%s' in %s",
                              name, path);
        json_t *st = step5(&s, steps);
        gv_plan_cmd(st, json_pack("{s:s, s:o, s:s}", "write_file", path, "lines",
                              profile_lines(e, st), "mode", "0644"));
    }
    json_array_foreach(cp, i, e)
    {
        const char *path = json_string_value(json_object_get(e, "path"));
        if (gv_valid_abs_path(path) && !find_by_path(bp, path))
            gv_plan_cmd(step5(&s, steps), json_pack("{s:s}", "remove_file", path));
    }
    /* Leftovers: GPU library files no package owns that the baseline did not
     * have (e.g. a 6.x library left in a 5.7 directory) are moved into the
     * backup, with the symlinks that name them. */
    const json_t *bl_items = gv_json_path(baseline, "libraries.items");
    json_array_foreach(gv_json_path(current, "libraries.items"), i, e)
    {
        const char *path = json_string_value(json_object_get(e, "path"));
        if (!json_is_true(json_object_get(e, "unowned")) || !gv_valid_abs_path(path) ||
            find_by_path(bl_items, path))
            continue;
        json_t *st = step5(&s, steps);
        size_t j;
        json_t *l;
        json_array_foreach(json_object_get(e, "links"), j, l)
        {
            const char *lp = json_string_value(l);
            if (gv_valid_abs_path(lp) && !find_by_path(bl_items, lp))
                gv_plan_cmd(st, json_pack("{s:s}", "move_to_backup", lp));
        }
        gv_plan_cmd(st, json_pack("{s:s}", "move_to_backup", path));
        gv_plan_note(st, "%s is owned by no package and was not there at the baseline: moved to the "
                     "backup, not deleted",
                 path);
        loader_changed = 1;
    }
    const json_t *bl = gv_json_path(baseline, "loader.conf_files");
    const json_t *cl = gv_json_path(current, "loader.conf_files");
    json_array_foreach(bl, i, e)
    {
        const char *path = json_string_value(json_object_get(e, "path"));
        if (!gv_valid_abs_path(path) || !strcmp(path, "/etc/ld.so.conf"))
            continue;
        const json_t *now = find_by_path(cl, path);
        if (now && same_dirs(e, now))
            continue;
        if (!gv_loader_conf_is_gpu(e) && !(now && gv_loader_conf_is_gpu(now)))
            continue; /* the C library's own file, say: not part of the GPU stack */
        json_t *lines = json_array();
        size_t j;
        json_t *d;
        json_array_foreach(json_object_get(e, "dirs"), j, d)
        {
            const char *dir = json_string_value(d);
            if (!gv_valid_abs_path(dir)) {
                json_decref(lines);
                return gv_err_set(err, GV_E_FORMAT, "baseline: refusing loader directory '%s'",
                                  dir ? dir : "(none)");
            }
            json_array_append_new(lines, json_string(dir));
        }
        gv_plan_cmd(step5(&s, steps), json_pack("{s:s, s:o, s:s}", "write_file", path, "lines", lines,
                                            "mode", "0644"));
        loader_changed = 1;
    }
    json_array_foreach(cl, i, e)
    {
        const char *path = json_string_value(json_object_get(e, "path"));
        if (gv_valid_abs_path(path) && strcmp(path, "/etc/ld.so.conf") && !find_by_path(bl, path) &&
            gv_loader_conf_is_gpu(e)) {
            gv_plan_cmd(step5(&s, steps), json_pack("{s:s}", "remove_file", path));
            loader_changed = 1;
        }
    }
    const char *balt = gv_json_path_str(baseline, "stacks.alternatives.rocm.target");
    const char *calt = gv_json_path_str(current, "stacks.alternatives.rocm.target");
    if (balt && (!calt || strcmp(balt, calt))) {
        if (!gv_valid_abs_path(balt))
            return gv_err_set(err, GV_E_FORMAT, "baseline: refusing alternatives target '%s'",
                              balt);
        gv_plan_cmd(step5(&s, steps), gv_plan_argv("update-alternatives", "--set", "rocm", balt, NULL));
    }
    if (loader_changed)
        gv_plan_cmd(step5(&s, steps), gv_plan_argv("ldconfig", NULL));
    const json_t *bld = gv_json_path(baseline, "loader.ld_library_path");
    const json_t *cld = gv_json_path(current, "loader.ld_library_path");
    if (!json_equal(bld, cld) && (bld || cld)) {
        json_t *st = step5(&s, steps);
        char *b = bld ? json_dumps(bld, JSON_COMPACT) : strdup("unset");
        char *c = cld ? json_dumps(cld, JSON_COMPACT) : strdup("unset");
        gv_plan_note(st,
                 "LD_LIBRARY_PATH was %s at the baseline and is %s now: it comes from a shell "
                 "startup file or a job script, which a plan cannot see; set it back there",
                 b, c);
        free(b);
        free(c);
    }
    return GV_OK;
}

/* ---- the whole plan -------------------------------------------------------- */

int gv_plan_rollback(const json_t *baseline, const json_t *current,
                     const struct gv_plan_opts *opts, json_t **out, struct gv_err *err)
{
    *out = NULL;
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
    rc = step_wheels(plan, steps, baseline, current, err);
    if (rc)
        goto fail;
    rc = step_files(steps, baseline, current, err);
    if (rc)
        goto fail;
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
    *out = plan;
    return GV_OK;
fail:
    json_decref(plan);
    return rc;
}
