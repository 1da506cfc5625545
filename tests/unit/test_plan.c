/* The rollback planner on snapshot inputs written here (the expected steps
 * follow from the inputs and the plan rules, not from running the planner). */
#include <unistd.h>

#include "base/buf.h"
#include "base/json.h"
#include "plan/plan.h"
#include "t.h"

static char tmpdir[256];

#define ROCM_SH_SHA256 "3c57752faf56be7edfb742495e87d24b16c75b9d8227b14c41effb72905d3ce4"

static json_t *pkg(const char *name, const char *ver)
{
    return json_pack("{s:s, s:s, s:s, s:s, s:b, s:b}", "name", name, "version", ver, "arch",
                     "amd64", "state", "installed", "hold", 0, "gpu", 1);
}

static json_t *snap(json_t *items)
{
    return json_pack("{s:s, s:i, s:s, s:{s:b, s:s, s:o}, s:{s:b}, s:{s:b, s:[]}, s:{s:b, s:[]}}",
                     "schema", "gpuvet.snapshot", "schema_version", 1, "root", "/", "packages",
                     "collected", 1, "manager", "dpkg", "items", items, "host", "collected", 1,
                     "python", "collected", 1, "environments", "environment", "collected", 1,
                     "profile_d");
}

static const json_t *step(const json_t *plan, int phase)
{
    size_t i;
    json_t *s;
    json_array_foreach(json_object_get(plan, "steps"), i, s) if (
        json_integer_value(json_object_get(s, "phase")) == phase) return s;
    return NULL;
}

/* The argv of the command of a step that contains word w. */
static const json_t *cmd_with(const json_t *st, const char *w)
{
    size_t i, j;
    json_t *c, *a;
    json_array_foreach(json_object_get(st, "commands"), i, c)
        json_array_foreach(json_object_get(c, "argv"), j, a) if (!strcmp(json_string_value(a), w))
            return json_object_get(c, "argv");
    return NULL;
}

static int argv_has(const json_t *argv, const char *w)
{
    size_t i;
    json_t *a;
    json_array_foreach(argv, i, a) if (!strcmp(json_string_value(a), w)) return 1;
    return 0;
}

static void test_validation(void)
{
    T_CHECK(gv_valid_deb_name("libamdhip64-5"));
    T_CHECK(gv_valid_deb_name("rocm-core5.7.0"));
    T_CHECK(gv_valid_deb_name("libstdc++6"));
    T_CHECK(!gv_valid_deb_name("Rocm"));
    T_CHECK(!gv_valid_deb_name("x"));
    T_CHECK(!gv_valid_deb_name("rocm;rm"));
    T_CHECK(!gv_valid_deb_name("$(reboot)"));
    T_CHECK(!gv_valid_deb_name("-rocm"));
    T_CHECK(gv_valid_deb_version("5.7.1-3"));
    T_CHECK(gv_valid_deb_version("1:6.16.6.30100000-2212064.22.04"));
    T_CHECK(gv_valid_deb_version("6.0.0.60000-91~22.04"));
    T_CHECK(!gv_valid_deb_version("5.7 1"));
    T_CHECK(!gv_valid_deb_version("a:1.0"));
    T_CHECK(!gv_valid_deb_version("1.0'"));
    T_CHECK(gv_valid_pip_version("2.2.2+rocm5.7"));
    T_CHECK(!gv_valid_pip_version("2.2; rm -rf /"));
    T_CHECK(gv_valid_pip_name("pytorch-triton-rocm"));
    T_CHECK(!gv_valid_abs_path("etc/profile.d/x.sh"));
    T_CHECK(!gv_valid_abs_path("/etc/../root/.bashrc"));
    T_CHECK(!gv_valid_abs_path("/etc/x\nrm"));
    T_CHECK(gv_valid_abs_path("/etc/profile.d/rocm.sh"));
}

/* The real shell is the oracle for quoting. */
static void test_quoting(void)
{
    const char *nasty[] = {"plain", "it's", "a'b'c", "$(touch /tmp/gv-pwned)", "`id`", "x\"y",
                           "back\\slash", "; rm -rf / ;", "", "'"};
    for (size_t i = 0; i < sizeof nasty / sizeof nasty[0]; i++) {
        struct gv_buf b = {0};
        gv_buf_add(&b, "printf %s ");
        gv_sh_quote(&b, nasty[i]);
        char *cmd = gv_buf_take(&b);
        char path[300];
        snprintf(path, sizeof path, "%s/q.sh", tmpdir);
        FILE *f = fopen(path, "w");
        fputs(cmd, f);
        fclose(f);
        free(cmd);
        char run[400];
        snprintf(run, sizeof run, "bash %s", path);
        FILE *p = popen(run, "r");
        char out[256] = "";
        size_t n = fread(out, 1, sizeof out - 1, p);
        out[n] = '\0';
        pclose(p);
        T_EQ_STR(out, nasty[i]);
    }
    T_CHECK(access("/tmp/gv-pwned", F_OK) != 0);
}

static void test_package_transaction(void)
{
    json_t *base = snap(json_pack("[o,o,o]", pkg("libamdhip64-5", "5.7.1-3"),
                                  pkg("librocblas0", "5.5.1-5"), pkg("rocminfo", "5.7.1-1")));
    json_t *cur = snap(json_pack("[o,o,o]", pkg("libamdhip64-6", "6.4.3-1"),
                                 pkg("librocblas0", "6.4.4-2"), pkg("rocminfo", "5.7.1-1")));
    struct gv_plan_opts o = {.baseline_path = "/var/lib/gpuvet/base.json", .root = "/",
                             .check_availability = 0, .gpuvet_path = "/usr/bin/gpuvet"};
    json_t *plan = NULL;
    struct gv_err err = {0};
    T_EQ_INT(gv_plan_rollback(base, cur, &o, &plan, &err), 0);
    T_CHECK(json_is_true(json_object_get(plan, "complete")));
    const json_t *s2 = step(plan, 2);
    T_CHECK(s2 != NULL);
    const json_t *inst = cmd_with(s2, "install");
    T_CHECK(inst != NULL);
    /* one transaction: back-versions, new-only packages removed, unchanged untouched */
    T_CHECK(argv_has(inst, "libamdhip64-5=5.7.1-3"));
    T_CHECK(argv_has(inst, "librocblas0=5.5.1-5"));
    T_CHECK(argv_has(inst, "libamdhip64-6-"));
    T_CHECK(!argv_has(inst, "rocminfo=5.7.1-1"));
    T_CHECK(argv_has(inst, "--allow-downgrades"));
    /* no separate removal command anywhere: never remove-then-install */
    T_CHECK(cmd_with(s2, "remove") == NULL && cmd_with(s2, "purge") == NULL);
    /* held: what the transaction puts back; never a package that did not change */
    const json_t *hold = cmd_with(step(plan, 3), "hold");
    T_CHECK(hold && argv_has(hold, "libamdhip64-5") && argv_has(hold, "librocblas0") &&
            !argv_has(hold, "rocminfo"));
    T_EQ_STR(json_string_value(json_object_get(plan, "status")), "complete");
    T_EQ_INT(json_array_size(json_object_get(plan, "not_rolled_back")), 0);
    T_CHECK(step(plan, 6) == NULL); /* no driver change */
    const json_t *ver = cmd_with(step(plan, 7), "verify");
    T_CHECK(ver && argv_has(ver, "/var/lib/gpuvet/base.json"));
    char *sh = gv_plan_render_sh(plan);
    T_CHECK(sh && strstr(sh, "set -euo pipefail") && strstr(sh, "'libamdhip64-6-'"));
    char path[300], cmd[400];
    snprintf(path, sizeof path, "%s/plan.sh", tmpdir);
    FILE *f = fopen(path, "w");
    fputs(sh, f);
    fclose(f);
    snprintf(cmd, sizeof cmd, "bash -n %s", path);
    T_EQ_INT(system(cmd), 0);
    snprintf(cmd, sizeof cmd, "command -v shellcheck >/dev/null && shellcheck -s bash %s", path);
    T_EQ_INT(system(cmd), 0);
    free(sh);
    json_decref(plan);
    json_decref(base);
    json_decref(cur);
}

static json_t *other_pkg(const char *name, const char *ver)
{
    json_t *p = pkg(name, ver);
    json_object_set_new(p, "gpu", json_false());
    return p;
}

/* Issue 36: diff showed python3-torch 1.13 -> 2.6 and the plan said "complete" with no
 * package step, holding a package that had not changed. The distribution's PyTorch goes
 * back in the transaction; every other difference is listed with why, and the plan is
 * "partial", never complete; only what changed is held. */
static void test_says_what_it_leaves(void)
{
    json_t *base = snap(json_pack("[o,o,o,o,o]", other_pkg("python3-torch", "1.13.1+dfsg-4"),
                                  other_pkg("libtorch1.13", "1.13.1+dfsg-4"),
                                  pkg("rocminfo", "5.7.1-1"), other_pkg("zlib1g", "1:1.2.13-1"),
                                  other_pkg("libgone1", "1.0-1")));
    json_t *cur = snap(json_pack("[o,o,o,o,o]", other_pkg("python3-torch", "2.6.0+dfsg-7"),
                                 other_pkg("libtorch2.6", "2.6.0+dfsg-7"),
                                 pkg("rocminfo", "5.7.1-1"), other_pkg("zlib1g", "1:1.3-1"),
                                 other_pkg("libnew2", "2.0-1")));
    struct gv_plan_opts o = {.baseline_path = "/b.json", .root = "/", .check_availability = 0};
    json_t *plan = NULL;
    struct gv_err err = {0};
    T_EQ_INT(gv_plan_rollback(base, cur, &o, &plan, &err), 0);
    const json_t *inst = cmd_with(step(plan, 2), "install");
    T_CHECK(inst && argv_has(inst, "python3-torch=1.13.1+dfsg-4") &&
            argv_has(inst, "libtorch1.13=1.13.1+dfsg-4") && argv_has(inst, "libtorch2.6-"));
    T_CHECK(inst && !argv_has(inst, "zlib1g=1:1.2.13-1") && !argv_has(inst, "rocminfo=5.7.1-1"));
    const json_t *hold = cmd_with(step(plan, 3), "hold");
    T_CHECK(hold && argv_has(hold, "python3-torch") && !argv_has(hold, "rocminfo"));
    T_CHECK(!json_is_true(json_object_get(plan, "complete")));
    T_EQ_STR(json_string_value(json_object_get(plan, "status")), "partial");
    const json_t *left = json_object_get(plan, "not_rolled_back");
    T_EQ_INT(json_array_size(left), 3); /* zlib1g changed, libgone1 removed, libnew2 added */
    int seen = 0;
    size_t i;
    json_t *d;
    json_array_foreach(left, i, d) {
        const char *sub = json_string_value(json_object_get(d, "subject"));
        const char *b = json_string_value(json_object_get(d, "before"));
        const char *a = json_string_value(json_object_get(d, "after"));
        T_CHECK(strstr(json_string_value(json_object_get(d, "why")), "outside the GPU stack"));
        if (!strcmp(sub, "zlib1g")) {
            seen |= 1;
            T_CHECK(b && a && !strcmp(b, "1:1.2.13-1") && !strcmp(a, "1:1.3-1"));
        } else if (!strcmp(sub, "libgone1")) {
            seen |= 2;
            T_CHECK(b && !a);
        } else if (!strcmp(sub, "libnew2")) {
            seen |= 4;
            T_CHECK(!b && a);
        }
    }
    T_EQ_INT(seen, 7);
    char *sh = gv_plan_render_sh(plan), *md = gv_plan_render_md(plan);
    T_CHECK(sh && strstr(sh, "# PARTIAL: 3 differences are not rolled back") &&
            strstr(sh, "#   zlib1g 1:1.2.13-1 -> 1:1.3-1"));
    T_CHECK(md && strstr(md, "Status: **partial") && !strstr(md, "**complete**"));
    free(sh);
    free(md);
    json_decref(plan);
    json_decref(base);
    json_decref(cur);
}

static void test_refuses_bad_names(void)
{
    json_t *base = snap(json_pack("[o]", pkg("rocm;reboot", "1.0")));
    json_t *cur = snap(json_pack("[]"));
    struct gv_plan_opts o = {.root = "/", .check_availability = 0};
    json_t *plan = NULL;
    struct gv_err err = {0};
    T_EQ_INT(gv_plan_rollback(base, cur, &o, &plan, &err), GV_E_FORMAT);
    T_CHECK(strstr(err.msg, "rocm;reboot") != NULL);
    T_CHECK(plan == NULL);
    json_decref(base);
    base = snap(json_pack("[o]", pkg("rocm-core", "6.0.0'$(id)")));
    T_EQ_INT(gv_plan_rollback(base, cur, &o, &plan, &err), GV_E_FORMAT);
    json_decref(base);
    json_decref(cur);
}

static void test_container_stops(void)
{
    json_t *base = snap(json_pack("[o]", pkg("libamdhip64-5", "5.7.1-3")));
    json_t *cur = snap(json_pack("[o]", pkg("libamdhip64-6", "6.4.3-1")));
    json_object_set_new(json_object_get(cur, "host"), "container",
                        json_pack("{s:b, s:s}", "inside", 1, "runtime", "docker"));
    struct gv_plan_opts o = {.root = "/", .check_availability = 0};
    json_t *plan = NULL;
    struct gv_err err = {0};
    T_EQ_INT(gv_plan_rollback(base, cur, &o, &plan, &err), 0);
    T_CHECK(step(plan, 1) != NULL);
    T_CHECK(step(plan, 2) == NULL && step(plan, 4) == NULL && step(plan, 5) == NULL);
    json_decref(plan);
    json_decref(base);
    json_decref(cur);
}

static void test_wheels_and_files(void)
{
    json_t *base = snap(json_pack("[]"));
    json_t *cur = snap(json_pack("[]"));
    json_array_append_new(
        gv_json_path(base, "python.environments"),
        json_pack("{s:s, s:s, s:{s:{s:s}, s:{s:s}}}", "prefix", "/opt/venv", "interpreter",
                  "/opt/venv/bin/python3", "packages", "torch", "version", "2.2.2+rocm5.7",
                  "torchvision", "version", "0.17.2+rocm5.7"));
    json_array_append_new(
        gv_json_path(cur, "python.environments"),
        json_pack("{s:s, s:s, s:{s:{s:s}, s:{s:s}}}", "prefix", "/opt/venv", "interpreter",
                  "/opt/venv/bin/python3", "packages", "torch", "version", "2.3.0+rocm6.0",
                  "torchvision", "version", "0.17.2+rocm5.7"));
    /* sha256 of "export ROCM_PATH=/opt/rocm-5.7.0\n" (sha256sum) */
    json_array_append_new(
        gv_json_path(base, "environment.profile_d"),
        json_pack("{s:s, s:{s:s}, s:s, s:s}", "path", "/etc/profile.d/rocm.sh", "sets",
                  "ROCM_PATH", "/opt/rocm-5.7.0", "content", "export ROCM_PATH=/opt/rocm-5.7.0\n",
                  "sha256", ROCM_SH_SHA256));
    json_array_append_new(gv_json_path(cur, "environment.profile_d"),
                          json_pack("{s:s, s:{s:s}}", "path", "/etc/profile.d/rocm.sh", "sets",
                                    "ROCM_PATH", "/opt/rocm-6.0.0"));
    json_array_append_new(gv_json_path(cur, "environment.profile_d"),
                          json_pack("{s:s, s:{s:s}}", "path", "/etc/profile.d/hip6.sh", "sets",
                                    "HIP_PATH", "/opt/rocm-6.0.0"));
    struct gv_plan_opts o = {.root = "/", .check_availability = 0};
    json_t *plan = NULL;
    struct gv_err err = {0};
    T_EQ_INT(gv_plan_rollback(base, cur, &o, &plan, &err), 0);
    const json_t *pip = cmd_with(step(plan, 4), "pip");
    T_CHECK(pip && argv_has(pip, "torch==2.2.2+rocm5.7") &&
            argv_has(pip, "https://download.pytorch.org/whl/rocm5.7") &&
            argv_has(pip, "/opt/venv/bin/python3"));
    T_CHECK(pip && !argv_has(pip, "torchvision==0.17.2+rocm5.7")); /* unchanged */
    char *sh = gv_plan_render_sh(plan);
    /* the recorded text, byte for byte, then its digest checked */
    T_CHECK(sh && strstr(sh, "printf '%s\\n' 'export ROCM_PATH=/opt/rocm-5.7.0'\n} > "
                             "'/etc/profile.d/rocm.sh.gpuvet-new'"));
    T_CHECK(sh && strstr(sh, ROCM_SH_SHA256));
    T_CHECK(sh && strstr(sh, "rm -f '/etc/profile.d/hip6.sh'"));
    free(sh);
    char *md = gv_plan_render_md(plan);
    T_CHECK(md && strstr(md, "## Step 4"));
    free(md);
    json_decref(plan);
    json_decref(base);
    json_decref(cur);
}

int main(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/gv-test-plan-XXXXXX");
    if (!mkdtemp(tmpdir))
        return 1;
    T_RUN(test_validation);
    T_RUN(test_quoting);
    T_RUN(test_package_transaction);
    T_RUN(test_says_what_it_leaves);
    T_RUN(test_refuses_bad_names);
    T_RUN(test_container_stops);
    T_RUN(test_wheels_and_files);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
    if (system(cmd) != 0)
        return 1;
    return t_done();
}
