/* Fuzz target for the rollback planner: a baseline snapshot, then optionally a
 * NUL byte and the current snapshot (else a small built-in one). Whatever the
 * documents hold, every step of the plan obeys the destination policy
 * (issue 31): files are written, removed or moved only where gv_plan_dest
 * allows, a profile file only from recorded text that passes the snapshot's
 * predicate and its digest, a loader file only with plain directories, pip
 * only with an interpreter the current snapshot has; a complete plan renders.
 * A violation aborts. The planner is run without package-manager queries. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "base/json.h"
#include "plan/plan.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char default_current[] =
    "{\"schema\":\"gpuvet.snapshot\",\"schema_version\":1,\"root\":\"/\","
    "\"packages\":{\"collected\":true,\"manager\":\"dpkg\",\"items\":["
    "{\"name\":\"libamdhip64-6\",\"version\":\"6.4.3-1\",\"arch\":\"amd64\",\"state\":\"installed\","
    "\"gpu\":true}]},"
    "\"host\":{\"collected\":true},"
    "\"python\":{\"collected\":true,\"environments\":[{\"prefix\":\"/opt/venv\","
    "\"interpreter\":\"/opt/venv/bin/python3\",\"site_packages\":"
    "\"/opt/venv/lib/python3.11/site-packages\",\"packages\":{\"torch\":{\"version\":"
    "\"2.3.0+rocm6.0\"}}}]},"
    "\"environment\":{\"collected\":true,\"profile_d\":[{\"path\":\"/etc/profile.d/rocm.sh\","
    "\"sets\":{\"ROCM_PATH\":\"/opt/rocm-6.4.0\"},\"sha256\":"
    "\"0000000000000000000000000000000000000000000000000000000000000000\",\"size\":26},"
    "{\"path\":\"/etc/profile.d/hip6.sh\",\"sets\":{\"HIP_PATH\":\"/opt/rocm-6.4.0\"}}]},"
    "\"loader\":{\"collected\":true,\"conf_files\":[{\"path\":\"/etc/ld.so.conf.d/rocm.conf\","
    "\"dirs\":[\"/opt/rocm-6.4.0/lib\"]},{\"path\":\"/etc/ld.so.conf.d/hip6.conf\",\"dirs\":"
    "[\"/opt/rocm-6.4.0/lib64\"]}]},"
    "\"libraries\":{\"collected\":true,\"items\":[{\"name\":\"hip-runtime\",\"path\":"
    "\"/usr/lib/x86_64-linux-gnu/libamdhip64.so.6.4.0\",\"unowned\":true,\"links\":"
    "[\"/usr/lib/x86_64-linux-gnu/libamdhip64.so.6\"]}]}}";

static void violation(const char *what, const json_t *cmd)
{
    char *s = gv_json_dumps(cmd, JSON_COMPACT);
    fprintf(stderr, "fuzz_plan: %s: %s\n", what, s ? s : "?");
    free(s);
    abort();
}

static int current_interpreter(const json_t *current, const char *interp)
{
    size_t i;
    json_t *e;
    json_array_foreach(gv_json_path(current, "python.environments"), i, e)
    {
        const char *p = json_string_value(json_object_get(e, "interpreter"));
        if (p && !strcmp(p, interp))
            return 1;
    }
    return 0;
}

static void check_write(const json_t *cmd, const char *path)
{
    if (!gv_plan_dest_allowed("write_file", path))
        violation("write_file outside the destination policy", cmd);
    const json_t *content = json_object_get(cmd, "content");
    if (content) {
        char why[160];
        if (gv_plan_dest(path) == GV_DEST_LOADER_CONF || !json_is_string(content) ||
            !gv_plan_content_ok(json_string_value(content), json_string_length(content),
                                json_string_value(json_object_get(cmd, "sha256")), why,
                                sizeof why))
            violation("profile text that the policy refuses", cmd);
        return;
    }
    if (gv_plan_dest(path) != GV_DEST_LOADER_CONF)
        violation("a profile file written from anything but its recorded text", cmd);
    size_t i;
    json_t *l;
    json_array_foreach(json_object_get(cmd, "lines"), i, l)
        if (!gv_valid_plain_path(json_string_value(l)))
            violation("a loader line that is not a plain directory", cmd);
}

static void check_cmd(const json_t *cmd, const json_t *current)
{
    const char *p;
    if ((p = json_string_value(json_object_get(cmd, "write_file"))))
        check_write(cmd, p);
    else if (json_object_get(cmd, "write_file"))
        violation("write_file without a path", cmd);
    if ((p = json_string_value(json_object_get(cmd, "remove_file"))) &&
        !gv_plan_dest_allowed("remove_file", p))
        violation("remove_file outside the destination policy", cmd);
    if ((p = json_string_value(json_object_get(cmd, "move_to_backup"))) &&
        !gv_plan_dest_allowed("move_to_backup", p))
        violation("move_to_backup outside the destination policy", cmd);
    const json_t *argv = json_object_get(cmd, "argv");
    const char *a2 = json_string_value(json_array_get(argv, 2));
    if (a2 && !strcmp(a2, "pip") &&
        !current_interpreter(current, json_string_value(json_array_get(argv, 0))))
        violation("pip with an interpreter the current machine does not have", cmd);
}

static void check_plan(const json_t *plan, const json_t *current)
{
    size_t i, j;
    json_t *step, *cmd;
    json_array_foreach(json_object_get(plan, "steps"), i, step)
        json_array_foreach(json_object_get(step, "commands"), j, cmd) check_cmd(cmd, current);
    char *sh = gv_plan_render_sh(plan), *md = gv_plan_render_md(plan);
    if (json_is_true(json_object_get(plan, "complete")) && (!sh || !md))
        violation("a complete plan that does not render", plan);
    free(sh);
    free(md);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const uint8_t *nul = memchr(data, 0, size);
    size_t nb = nul ? (size_t)(nul - data) : size;
    json_t *base = json_loadb((const char *)data, nb, 0, NULL);
    json_t *cur = nul ? json_loadb((const char *)nul + 1, size - nb - 1, 0, NULL)
                      : json_loads(default_current, 0, NULL);
    if (json_is_object(base) && json_is_object(cur)) {
        struct gv_plan_opts o = {.baseline_path = "/var/lib/gpuvet/base.json",
                                 .root = "/",
                                 .check_availability = 0,
                                 .archive_tree = 1,
                                 .gpuvet_path = "/usr/bin/gpuvet"};
        struct gv_err err = {0};
        json_t *plan = NULL;
        if (gv_plan_rollback(base, cur, &o, &plan, &err) == 0) {
            check_plan(plan, cur);
            json_decref(plan);
        }
    }
    json_decref(base);
    json_decref(cur);
    return 0;
}
