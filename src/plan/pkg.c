/* apt and dnf adapters: what to install, remove and hold, and whether the
 * package manager can actually do it (read-only queries and a simulation). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/fs.h"
#include "base/json.h"
#include "base/utf8.h"
#include "plan/pkg.h"
#include "plan/run.h"

/* Kernel driver packages are handled by step 6, not by the user-space transaction. */
static int is_driver_pkg(const char *name)
{
    static const char *const prefixes[] = {"amdgpu-dkms", "nvidia-dkms", "nvidia-kernel-dkms",
                                           "nvidia-kernel-open-dkms", "kmod-nvidia"};
    for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++)
        if (!strncmp(name, prefixes[i], strlen(prefixes[i])))
            return 1;
    return 0;
}

static int is_rpm(const json_t *snap)
{
    const char *m = gv_json_path_str(snap, "packages.manager");
    return m && !strcmp(m, "rpm");
}

/* The distribution's PyTorch: the framework layer of the stack (diff names its
 * change "torch version (/usr/lib/python3/dist-packages)"), installed by the
 * package manager, not by pip. A name matches when it is an entry or starts
 * with one followed by a digit, '-', '.' or '+' (libtorch2.6, python3-torch-cuda). */
static int is_framework_pkg(const char *name)
{
    static const char *const names[] = {"python3-torch",      "python3-torchvision",
                                        "python3-torchaudio", "python3-triton",
                                        "libtorch",           "libtorch-cuda",
                                        "libtorch-rocm"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        size_t n = strlen(names[i]);
        if (strncmp(name, names[i], n) != 0)
            continue;
        char c = name[n]; /* the prefix matched: name is at least n long */
        if (c == '\0' || c == '-' || c == '.' || c == '+' || (c >= '0' && c <= '9'))
            return 1;
    }
    return 0;
}

/* Packages the plan rolls back: the GPU stack's (the snapshot's gpu flag) and
 * the distribution's framework packages. */
static int is_stack_pkg(const json_t *it)
{
    const char *name = json_string_value(json_object_get(it, "name"));
    return json_is_true(json_object_get(it, "gpu")) || (name && is_framework_pkg(name));
}

/* name[:arch] -> item for installed packages (only the stack's when gpu_only). */
static json_t *installed_packages(const json_t *snap, int gpu_only)
{
    json_t *map = json_object();
    size_t i;
    json_t *it;
    json_array_foreach(gv_json_path(snap, "packages.items"), i, it)
    {
        const char *name = json_string_value(json_object_get(it, "name"));
        const char *state = json_string_value(json_object_get(it, "state"));
        if (!name || (gpu_only && !is_stack_pkg(it)))
            continue;
        if (state && strcmp(state, "installed"))
            continue;
        const char *arch = json_string_value(json_object_get(it, "arch"));
        char key[300];
        int qualify = gpu_only && arch && strcmp(arch, "all");
        snprintf(key, sizeof key, "%s%s%s", name, qualify ? ":" : "", qualify ? arch : "");
        json_object_set(map, key, it);
    }
    return map;
}

static json_t *gpu_packages(const json_t *snap) { return installed_packages(snap, 1); }

/* The architecture most packages have: the native one. */
static const char *native_arch(const json_t *snap)
{
    static char best[32];
    size_t i, amd64 = 0, arm64 = 0, other = 0;
    json_t *it;
    json_array_foreach(gv_json_path(snap, "packages.items"), i, it)
    {
        const char *a = json_string_value(json_object_get(it, "arch"));
        if (!a)
            continue;
        if (!strcmp(a, "amd64") || !strcmp(a, "x86_64"))
            amd64++;
        else if (!strcmp(a, "arm64") || !strcmp(a, "aarch64"))
            arm64++;
        else if (strcmp(a, "all") && strcmp(a, "noarch"))
            other++;
    }
    snprintf(best, sizeof best, "%s", arm64 > amd64 ? "arm64" : "amd64");
    (void)other;
    return best;
}

static void apt_base_argv(json_t *argv, const char *tool, const char *root)
{
    json_array_append_new(argv, json_string(tool));
    /* Planning writes nothing: no binary caches, no planner log (apt-get -s
     * still writes eipp.log.xz otherwise). */
    static const char *const quiet[] = {"Dir::Cache::pkgcache=", "Dir::Cache::srcpkgcache=",
                                        "Dir::Log::Planner=/dev/null"};
    for (size_t i = 0; i < sizeof quiet / sizeof quiet[0]; i++) {
        json_array_append_new(argv, json_string("-o"));
        json_array_append_new(argv, json_string(quiet[i]));
    }
    if (root && strcmp(root, "/")) {
        char opt[GV_PATH_MAX + 32];
        snprintf(opt, sizeof opt, "Dir=%s", root);
        json_array_append_new(argv, json_string("-o"));
        json_array_append_new(argv, json_string(opt));
        snprintf(opt, sizeof opt, "Dir::State::status=%s/var/lib/dpkg/status", root);
        json_array_append_new(argv, json_string("-o"));
        json_array_append_new(argv, json_string(opt));
    }
}

static int run_json_argv(const json_t *argv, int timeout, char **out)
{
    size_t n = json_array_size(argv);
    char **a = calloc(n + 1, sizeof *a);
    for (size_t i = 0; i < n; i++)
        a[i] = (char *)json_string_value(json_array_get(argv, i));
    int rc = gv_run_capture(a, timeout, 1 << 20, out);
    free(a);
    return rc;
}

/* Debian encodes the epoch colon of file names as %3a. */
static void deb_file_version(const char *v, char *out, size_t outsz)
{
    struct gv_buf b = {0};
    for (const char *p = v; *p; p++) {
        if (*p == ':')
            gv_buf_add(&b, "%3a");
        else
            gv_buf_addn(&b, p, 1);
    }
    char *s = gv_buf_take(&b);
    snprintf(out, outsz, "%s", s ? s : "");
    free(s);
}

/* The host path of a regular file inside root, its links resolved inside the
 * root first (a link in the root's archive cache must not lead apt or dpkg-deb
 * to a host file). 0 on success. */
static int root_file_host(const char *root, const char *rel, char *host, size_t hostsz)
{
    char real[GV_PATH_MAX];
    if (gv_root_realpath(root, rel, real, sizeof real, NULL) != 0 || !gv_root_is_file(root, real))
        return -1;
    return gv_root_join(host, hostsz, root, real);
}

int gv_apt_available(const char *root, const char *name, const char *version, const char *arch,
                     char *local, size_t localsz)
{
    if (local && localsz)
        local[0] = '\0';
    json_t *argv = json_array();
    apt_base_argv(argv, "apt-cache", root);
    json_array_append_new(argv, json_string("madison"));
    json_array_append_new(argv, json_string(name));
    char *out = NULL;
    int rc = run_json_argv(argv, 60, &out);
    json_decref(argv);
    int found = 0;
    if (rc == 0 && out) {
        /* " name | version | source" per line */
        for (char *line = strtok(out, "\n"); line && !found; line = strtok(NULL, "\n")) {
            char *bar1 = strchr(line, '|');
            char *bar2 = bar1 ? strchr(bar1 + 1, '|') : NULL;
            if (!bar2)
                continue;
            char *v = bar1 + 1;
            while (*v == ' ')
                v++;
            char *e = bar2;
            while (e > v && e[-1] == ' ')
                e--;
            if ((size_t)(e - v) == strlen(version) && !strncmp(v, version, (size_t)(e - v)))
                found = 1;
        }
    }
    free(out);
    if (found)
        return 1;
    char fv[256];
    deb_file_version(version, fv, sizeof fv);
    const char *arches[] = {arch ? arch : "amd64", "all"};
    for (size_t i = 0; i < 2; i++) {
        char rel[GV_PATH_MAX], host[GV_PATH_MAX];
        snprintf(rel, sizeof rel, "/var/cache/apt/archives/%s_%s_%s.deb", name, fv, arches[i]);
        if (root_file_host(root, rel, host, sizeof host) == 0) {
            if (local)
                snprintf(local, localsz, "%s", rel);
            return 1;
        }
    }
    return 0;
}

/* Simulate the transaction (apt-get -s) so that a plan that cannot resolve
 * is caught before the user runs it. Returns 1 ok, 0 failed (*why set),
 * -1 could not run apt-get. */
static int apt_simulate(const char *root, const json_t *specs, char *why, size_t whysz)
{
    json_t *argv = json_array();
    apt_base_argv(argv, "apt-get", root);
    json_array_append_new(argv, json_string("-s"));
    json_array_append_new(argv, json_string("-q"));
    json_array_append_new(argv, json_string("--allow-downgrades"));
    json_array_append_new(argv, json_string("--allow-change-held-packages"));
    json_array_append_new(argv, json_string("--no-install-recommends"));
    json_array_append_new(argv, json_string("install"));
    size_t i;
    json_t *s;
    char hostpath[GV_PATH_MAX];
    json_array_foreach(specs, i, s)
    {
        const char *spec = json_string_value(s);
        if (spec[0] == '/' && root_file_host(root, spec, hostpath, sizeof hostpath) == 0)
            json_array_append_new(argv, json_string(hostpath));
        else
            json_array_append_new(argv, json_string(spec));
    }
    char *out = NULL;
    int rc = run_json_argv(argv, 120, &out);
    json_decref(argv);
    free(out);
    if (rc < 0 || rc == 127)
        return -1;
    if (rc != 0) {
        snprintf(why, whysz, "apt-get -s install exited with %d", rc);
        return 0;
    }
    return 1;
}


/* Package names of a Depends/Pre-Depends field, one array per group of
 * alternatives ("a (>= 1) | b:any" -> ["a", "b"]). */
static json_t *parse_depends(const char *field)
{
    json_t *groups = json_array();
    char *copy = strdup(field), *save = NULL;
    for (char *g = strtok_r(copy, ",", &save); g; g = strtok_r(NULL, ",", &save)) {
        json_t *alts = json_array();
        char *save2 = NULL;
        for (char *a = strtok_r(g, "|", &save2); a; a = strtok_r(NULL, "|", &save2)) {
            while (*a == ' ' || *a == '\n' || *a == '\t')
                a++;
            size_t n = strcspn(a, " (:\n\t[<");
            if (n)
                json_array_append_new(alts, json_stringn(a, n));
        }
        json_array_append_new(groups, alts);
    }
    free(copy);
    return groups;
}

/* Dependencies of the baseline packages that the upgrade removed (e.g. an old
 * LLVM that only the 5.x libraries needed) must come back in the same
 * transaction, or APT cannot install the baseline versions. Follows the
 * Depends of every locally cached .deb in specs, transitively. */
static void add_removed_deps(json_t *plan, const json_t *baseline, const json_t *current,
                             const struct gv_plan_opts *o, json_t *specs)
{
    json_t *now = installed_packages(current, 0), *then = installed_packages(baseline, 0);
    json_t *added = json_object();
    /* what the transaction already installs */
    for (size_t q = 0; q < json_array_size(specs); q++) {
        const char *sp = json_string_value(json_array_get(specs, q));
        const char *base = strrchr(sp, '/') ? strrchr(sp, '/') + 1 : sp;
        size_t n = strcspn(base, sp[0] == '/' ? "_" : ":=");
        char name[256];
        if (n < sizeof name && (sp[0] == '/' || base[n] == '=' || base[n] == ':')) {
            memcpy(name, base, n);
            name[n] = '\0';
            json_object_set_new(added, name, json_true());
        }
    }
    for (size_t q = 0; q < json_array_size(specs); q++) {
        const char *spec = json_string_value(json_array_get(specs, q));
        char host[GV_PATH_MAX];
        if (spec[0] != '/' || root_file_host(o->root, spec, host, sizeof host) != 0)
            continue;
        char *argv[] = {(char *)"dpkg-deb", (char *)"-f", host, (char *)"Depends",
                        (char *)"Pre-Depends", NULL};
        char *out = NULL;
        if (gv_run_capture(argv, 60, 1 << 20, &out) != 0) {
            free(out);
            continue;
        }
        /* "Depends: ...\nPre-Depends: ..." or, for one field, the bare value */
        json_t *groups = json_array();
        for (char *line = strtok(out, "\n"); line; line = strtok(NULL, "\n")) {
            char *colon = strstr(line, "Depends: ");
            json_t *g = parse_depends(colon ? colon + 9 : line);
            json_array_extend(groups, g);
            json_decref(g);
        }
        free(out);
        size_t gi;
        json_t *alts;
        json_array_foreach(groups, gi, alts)
        {
            int satisfied = 0;
            size_t ai;
            json_t *a;
            json_array_foreach(alts, ai, a)
            {
                const char *n = json_string_value(a);
                int removing = 0;
                for (size_t k = 0; k < json_array_size(specs); k++) {
                    const char *sp = json_string_value(json_array_get(specs, k));
                    size_t l = strlen(n);
                    if (!strncmp(sp, n, l) && sp[l] == '-' && sp[l + 1] == '\0')
                        removing = 1;
                }
                if ((json_object_get(now, n) && !removing) || json_object_get(added, n))
                    satisfied = 1;
            }
            if (satisfied)
                continue;
            json_array_foreach(alts, ai, a)
            {
                const char *n = json_string_value(a);
                json_t *it = json_object_get(then, n);
                const char *ver = it ? json_string_value(json_object_get(it, "version")) : NULL;
                const char *arch = it ? json_string_value(json_object_get(it, "arch")) : NULL;
                if (!ver || json_object_get(now, n) || !gv_valid_deb_name(n) ||
                    !gv_valid_deb_version(ver))
                    continue;
                char local[GV_PATH_MAX] = "";
                char spec2[400];
                snprintf(spec2, sizeof spec2, "%s=%s", n, ver);
                json_object_set_new(added, n, json_true());
                if (gv_apt_available(o->root, n, ver, arch, local, sizeof local)) {
                    json_array_append_new(specs, json_string(local[0] ? local : spec2));
                    json_array_append_new(json_object_get(plan, "restored_dependencies"),
                                          json_string(spec2));
                } else {
                    char msg[600];
                    snprintf(msg, sizeof msg,
                             "the baseline packages need %s %s, which the upgrade removed, and "
                             "no APT source or local cache offers it",
                             n, ver);
                    json_array_append_new(json_object_get(plan, "problems"),
                                          json_pack("{s:s, s:s, s:s}", "subject", spec2,
                                                    "message", msg, "how",
                                                    "add the APT source of the baseline release, "
                                                    "or copy the .deb into "
                                                    "/var/cache/apt/archives; then plan again"));
                    json_object_set_new(plan, "complete", json_false());
                }
                break;
            }
        }
        json_decref(groups);
    }
    json_decref(now);
    json_decref(then);
    json_decref(added);
}

/* Fills specs ("name=ver", "/var/cache/apt/archives/x.deb", "name-") and the
 * hold list; checks availability. */
static int apt_targets(json_t *plan, const json_t *baseline, const json_t *current,
                       const struct gv_plan_opts *o, int drivers, json_t *specs, json_t *holds,
                       struct gv_err *err)
{
    json_t *bmap = gpu_packages(baseline), *cmap = gpu_packages(current);
    const char *native = native_arch(baseline);
    const char *key;
    json_t *it;
    int rc = GV_OK;
    json_object_foreach(bmap, key, it)
    {
        const char *name = json_string_value(json_object_get(it, "name"));
        const char *ver = json_string_value(json_object_get(it, "version"));
        const char *arch = json_string_value(json_object_get(it, "arch"));
        if (is_driver_pkg(name) != drivers)
            continue;
        if (!gv_valid_deb_name(name) || !gv_valid_deb_version(ver)) {
            rc = gv_err_set(err, GV_E_FORMAT,
                            "baseline: refusing package '%s' version '%s': not a valid Debian "
                            "package name and version",
                            name, ver ? ver : "(none)");
            goto out;
        }
        int foreign = arch && strcmp(arch, "all") && strcmp(arch, native);
        char spec[400];
        snprintf(spec, sizeof spec, "%s%s%s=%s", name, foreign ? ":" : "", foreign ? arch : "",
                 ver);
        char hold[300];
        snprintf(hold, sizeof hold, "%s%s%s", name, foreign ? ":" : "", foreign ? arch : "");
        json_t *now = json_object_get(cmap, key);
        const char *nowv = now ? json_string_value(json_object_get(now, "version")) : NULL;
        if (nowv && !strcmp(nowv, ver))
            continue; /* unchanged: neither installed nor held */
        json_array_append_new(holds, json_string(hold)); /* what the transaction puts back */
        char local[GV_PATH_MAX] = "";
        if (o->check_availability &&
            !gv_apt_available(o->root, name, ver, arch, local, sizeof local)) {
            char msg[600], how[900];
            snprintf(msg, sizeof msg,
                     "version %s of %s is offered by no APT source this system knows and is not "
                     "in /var/cache/apt/archives",
                     ver, name);
            snprintf(how, sizeof how,
                     "add the APT source of the baseline release (the suite or repository it was "
                     "installed from) and run 'apt-get update', or copy %s_%s_%s.deb into "
                     "/var/cache/apt/archives; then plan again",
                     name, ver, arch ? arch : native);
            gv_plan_problem(plan, spec, msg, how);
            continue;
        }
        json_array_append_new(specs, json_string(local[0] ? local : spec));
    }
    json_object_foreach(cmap, key, it)
    {
        const char *name = json_string_value(json_object_get(it, "name"));
        if (is_driver_pkg(name) != drivers || json_object_get(bmap, key))
            continue;
        if (!gv_valid_deb_name(name)) {
            rc = gv_err_set(err, GV_E_FORMAT, "current state: refusing package name '%s'", name);
            goto out;
        }
        const char *arch = json_string_value(json_object_get(it, "arch"));
        int foreign = arch && strcmp(arch, "all") && strcmp(arch, native);
        char spec[300];
        snprintf(spec, sizeof spec, "%s%s%s-", name, foreign ? ":" : "", foreign ? arch : "");
        json_array_append_new(specs, json_string(spec));
    }
out:
    json_decref(bmap);
    json_decref(cmap);
    return rc;
}

static json_t *apt_install_cmd(const json_t *specs)
{
    json_t *argv = json_pack("[s,s,s,s,s,s]", "apt-get", "install", "-y", "--allow-downgrades",
                             "--allow-change-held-packages", "--no-install-recommends");
    json_array_extend(argv, (json_t *)specs);
    return json_pack("{s:o, s:{s:s}}", "argv", argv, "env", "DEBIAN_FRONTEND", "noninteractive");
}

static int plan_apt(json_t *plan, json_t *steps, const json_t *baseline, const json_t *current,
                    const struct gv_plan_opts *o, struct gv_err *err)
{
    json_t *specs = json_array(), *holds = json_array();
    int rc = apt_targets(plan, baseline, current, o, 0, specs, holds, err);
    if (rc)
        goto out;
    if (o->check_availability) {
        json_object_set_new(plan, "restored_dependencies", json_array());
        add_removed_deps(plan, baseline, current, o, specs);
    }
    if (json_array_size(specs)) {
        json_t *s = gv_plan_step(
            steps, 2, "GPU packages back to the baseline versions, in one transaction",
            "One apt transaction installs the baseline versions and removes what the baseline "
            "did not have, so dependencies are never left broken half way (never "
            "remove-then-install).");
        json_array_append_new(json_object_get(s, "commands"),
                              json_pack("{s:[s,s]}", "argv", "apt-get", "update"));
        json_array_append_new(json_object_get(s, "commands"), apt_install_cmd(specs));
        if (o->check_availability && json_is_true(json_object_get(plan, "complete"))) {
            char why[256];
            int sim = apt_simulate(o->root, specs, why, sizeof why);
            if (sim == 0)
                gv_plan_problem(plan, "apt transaction",
                            "APT cannot resolve the transaction (its simulation failed)",
                            "run the apt-get install line of step 2 with -s to see why; a "
                            "package it needs may be missing from the configured sources");
            else if (sim < 0)
                gv_plan_note(s, "apt-get could not be run to simulate the transaction");
            else
                gv_plan_note(s, "apt-get -s (simulation) resolves this transaction");
        }
    }
    if (json_array_size(holds)) {
        json_t *s = gv_plan_step(steps, 3, "Hold the GPU packages",
                             "Holding them keeps the next 'apt upgrade' from redoing the upgrade.");
        json_t *argv = json_pack("[s,s]", "apt-mark", "hold");
        json_array_extend(argv, holds);
        json_array_append_new(json_object_get(s, "commands"), json_pack("{s:o}", "argv", argv));
    }
out:
    json_decref(specs);
    json_decref(holds);
    return rc;
}

/* Guards around the dnf shell transaction. Before (after = 0): every
 * baseline NAME-VERSION is offered by an enabled repository or installed
 * (dnf list --showduplicates). After: rpm -q finds each at that version, and
 * none of the packages the baseline did not have. nevrs: the versionlock argv
 * ("dnf", "versionlock", "add", NAME-VERSION...). */
static void dnf_checks(json_t *cmds, const json_t *nevrs, const json_t *cmap, const json_t *bmap,
                       int after)
{
    char msg[600];
    for (size_t i = 3; i < json_array_size(nevrs); i++) {
        const char *nv = json_string_value(json_array_get(nevrs, i));
        if (after)
            snprintf(msg, sizeof msg, "gpuvet plan: %s is not installed after the transaction; "
                     "the machine does not match the baseline", nv);
        else
            snprintf(msg, sizeof msg, "gpuvet plan: no enabled repository offers %s (dnf list "
                     "--showduplicates finds nothing); nothing was changed", nv);
        json_t *argv = after ? json_pack("[s,s,s]", "rpm", "-q", nv)
                             : json_pack("[s,s,s,s]", "dnf", "-q", "list", "--showduplicates");
        if (!after)
            json_array_append_new(argv, json_string(nv));
        json_array_append_new(cmds, json_pack("{s:o, s:s, s:s}", "check", argv, "want", "success",
                                              "message", msg));
    }
    const char *key;
    json_t *it;
    json_object_foreach((json_t *)cmap, key, it)
    {
        const char *name = json_string_value(json_object_get(it, "name"));
        if (!after || is_driver_pkg(name) || json_object_get(bmap, key))
            continue;
        snprintf(msg, sizeof msg, "gpuvet plan: %s is still installed after the transaction; the "
                 "machine does not match the baseline", name);
        json_array_append_new(cmds, json_pack("{s:[s,s,s], s:s, s:s}", "check", "rpm", "-q", name,
                                              "want", "failure", "message", msg));
    }
}

static int plan_dnf(json_t *plan, json_t *steps, const json_t *baseline, const json_t *current,
                    const struct gv_plan_opts *o, struct gv_err *err)
{
    json_t *bmap = gpu_packages(baseline), *cmap = gpu_packages(current);
    json_t *lines = json_array(), *locks = json_pack("[s,s,s]", "dnf", "versionlock", "add");
    const char *key;
    json_t *it;
    int rc = GV_OK;
    json_object_foreach(bmap, key, it)
    {
        const char *name = json_string_value(json_object_get(it, "name"));
        const char *ver = json_string_value(json_object_get(it, "version"));
        if (is_driver_pkg(name))
            continue;
        if (!gv_valid_rpm_name(name) || !gv_valid_deb_version(ver)) {
            rc = gv_err_set(err, GV_E_FORMAT, "baseline: refusing package '%s' version '%s'",
                            name, ver ? ver : "(none)");
            goto out;
        }
        char nv[400];
        snprintf(nv, sizeof nv, "%s-%s", name, ver);
        json_t *now = json_object_get(cmap, key);
        const char *nowv = now ? json_string_value(json_object_get(now, "version")) : NULL;
        if (nowv && !strcmp(nowv, ver))
            continue; /* unchanged: neither installed nor locked */
        json_array_append_new(locks, json_string(nv));
        char line[420];
        snprintf(line, sizeof line, "install %s", nv);
        json_array_append_new(lines, json_string(line));
    }
    json_object_foreach(cmap, key, it)
    {
        const char *name = json_string_value(json_object_get(it, "name"));
        if (is_driver_pkg(name) || json_object_get(bmap, key))
            continue;
        if (!gv_valid_rpm_name(name)) {
            rc = gv_err_set(err, GV_E_FORMAT, "current state: refusing package name '%s'", name);
            goto out;
        }
        char line[300];
        snprintf(line, sizeof line, "remove %s", name);
        json_array_append_new(lines, json_string(line));
    }
    if (json_array_size(lines)) {
        json_array_append_new(lines, json_string("run"));
        json_t *s = gv_plan_step(steps, 2, "GPU packages back to the baseline versions, in one transaction",
                             "One dnf transaction (dnf shell) installs the baseline versions and "
                             "removes what the baseline did not have. dnf shell carries on past "
                             "a version no repository offers (and resolves to another one), so "
                             "every version is checked before, and the result after.");
        json_t *cmds = json_object_get(s, "commands");
        dnf_checks(cmds, locks, cmap, bmap, 0);
        json_array_append_new(cmds, json_pack("{s:[s,s,s], s:O}", "argv", "dnf", "shell", "-y",
                                              "stdin", lines));
        dnf_checks(cmds, locks, cmap, bmap, 1);
        (void)o;
    }
    if (json_array_size(locks) > 3) {
        json_t *s = gv_plan_step(steps, 3, "Version-lock the GPU packages",
                             "dnf versionlock keeps the next update from redoing the upgrade "
                             "(needs the versionlock plugin).");
        json_array_append_new(json_object_get(s, "commands"), json_pack("{s:O}", "argv", locks));
    }
    (void)plan;
out:
    json_decref(bmap);
    json_decref(cmap);
    json_decref(lines);
    json_decref(locks);
    return rc;
}

static void left_out(json_t *list, const char *name, const char *before, const char *after)
{
    char e1[300], e2[300], e3[300];
    json_array_append_new(list, json_pack(
        "{s:s, s:s, s:s?, s:s?, s:s}", "layer", "packages", "subject",
        gv_escape(name, e1, sizeof e1), "before", before ? gv_escape(before, e2, sizeof e2) : NULL,
        "after", after ? gv_escape(after, e3, sizeof e3) : NULL, "why",
        "outside the GPU stack: the plan rolls back only GPU packages, the kernel driver and "
        "the distribution's PyTorch"));
}

void gv_plan_not_rolled_back(json_t *plan, const json_t *baseline, const json_t *current)
{
    json_t *list = json_array();
    json_t *then = installed_packages(baseline, 0), *now = installed_packages(current, 0);
    const char *key;
    json_t *it;
    json_object_foreach(then, key, it)
    {
        if (is_stack_pkg(it))
            continue;
        const char *bv = json_string_value(json_object_get(it, "version"));
        json_t *n = json_object_get(now, key);
        const char *cv = n ? json_string_value(json_object_get(n, "version")) : NULL;
        if (!n || !bv || !cv || strcmp(bv, cv))
            left_out(list, key, bv ? bv : "?", n ? (cv ? cv : "?") : NULL);
    }
    json_object_foreach(now, key, it)
        if (!is_stack_pkg(it) && !json_object_get(then, key))
            left_out(list, key, NULL, json_string_value(json_object_get(it, "version")) ?: "?");
    json_decref(then);
    json_decref(now);
    json_object_set_new(plan, "not_rolled_back", list);
}

int gv_plan_packages(json_t *plan, json_t *steps, const json_t *baseline, const json_t *current,
                     const struct gv_plan_opts *opts, struct gv_err *err)
{
    json_object_set_new(plan, "manager", json_string(is_rpm(current) ? "dnf" : "apt"));
    if (is_rpm(current))
        return plan_dnf(plan, steps, baseline, current, opts, err);
    return plan_apt(plan, steps, baseline, current, opts, err);
}

int gv_plan_driver(json_t *plan, json_t *steps, const json_t *baseline, const json_t *current,
                   const struct gv_plan_opts *opts, struct gv_err *err)
{
    const char *bmod = gv_json_path_str(baseline, "drivers.modules.amdgpu.version");
    const char *cmod = gv_json_path_str(current, "drivers.modules.amdgpu.version");
    json_t *specs = json_array(), *holds = json_array();
    int rc = GV_OK;
    if (!is_rpm(current))
        rc = apt_targets(plan, baseline, current, opts, 1, specs, holds, err);
    if (rc)
        goto out;
    int changed = json_array_size(specs) > 0;
    if (changed) {
        json_t *s = gv_plan_step(steps, 6, "The kernel driver, because it changed",
                             "The kernel driver serves every user space on the machine; it goes "
                             "back only because the baseline had another version. A reboot is "
                             "required.");
        json_array_append_new(json_object_get(s, "commands"), apt_install_cmd(specs));
        json_array_append_new(json_object_get(s, "commands"),
                              json_pack("{s:[s,s,s,s]}", "argv", "update-initramfs", "-u", "-k",
                                        "all"));
        json_t *hold = json_pack("[s,s]", "apt-mark", "hold");
        json_array_extend(hold, holds);
        json_array_append_new(json_object_get(s, "commands"), json_pack("{s:o}", "argv", hold));
        gv_plan_note(s, "reboot after this step; then run step 7");
        json_object_set_new(s, "requires_reboot", json_true());
        json_object_set_new(plan, "requires_reboot", json_true());
    } else if (bmod && cmod && strcmp(bmod, cmod)) {
        json_t *s = gv_plan_step(steps, 6, "The kernel driver changed without a driver package",
                             "The loaded amdgpu module differs from the baseline but no "
                             "amdgpu-dkms package records it: it comes with the kernel.");
        gv_plan_note(s, "amdgpu module %s at the baseline, %s now: boot the baseline kernel", bmod,
                 cmod);
    }
out:
    json_decref(specs);
    json_decref(holds);
    return rc;
}
