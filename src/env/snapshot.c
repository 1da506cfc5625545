/* Assembles the snapshot document from the probes, and loads saved ones. */
#include <string.h>

#include "base/json.h"
#include "env/probe.h"

/* Under --root the variables are the image's, never gpuvet's own: the
 * command passes the root's /etc/environment as envp (env/rootenv.h), and
 * the section's source says so. Without any envp the section says that its
 * variables come from the image's files only. */
static json_t *environment(const struct gv_probe_ctx *ctx)
{
    json_t *s = gv_probe_environment(ctx);
    if (ctx->envp && !ctx->live)
        json_object_set_new(s, "source", json_string("/etc/environment of the root (variables: "
                                                     "what a login there gets), "
                                                     "/etc/profile.d/*.sh of the root"));
    if (ctx->envp || json_object_get(s, "variables"))
        return s;
    json_object_set_new(s, "source", json_string("/etc/environment, /etc/profile.d/*.sh of the "
                                                 "root (no process environment)"));
    json_t *nc = json_object();
    json_object_set_new(nc, "variables", json_string("the process environment belongs to the "
                                                     "running system; not read for --root"));
    json_object_set_new(s, "not_collected", nc);
    return s;
}

int gv_snapshot_collect(const struct gv_probe_ctx *ctx, json_t **out, struct gv_err *err)
{
    json_t *doc = json_object();
    if (!doc)
        return gv_err_set(err, GV_E_NOMEM, "snapshot: out of memory");
    json_object_set_new(doc, "schema", json_string(GV_SNAPSHOT_SCHEMA));
    json_object_set_new(doc, "schema_version", json_integer(GV_SNAPSHOT_SCHEMA_VERSION));
    json_object_set_new(doc, "gpuvet_version", json_string(GPUVET_VERSION));
    gv_json_set_utc_now(doc, "created");
    json_object_set_new(doc, "root", json_string(ctx->root ? ctx->root : "/"));
    json_object_set_new(doc, "live", json_boolean(ctx->live));

    json_t *packages = gv_probe_packages(ctx);
    json_t *python = gv_probe_python(ctx);
    json_t *stacks = gv_probe_stacks(ctx, packages);
    json_t *libraries = gv_probe_libraries(ctx, stacks, packages, python);
    json_object_set_new(doc, "host", gv_probe_host(ctx));
    json_object_set_new(doc, "gpus", gv_probe_gpus(ctx));
    json_object_set_new(doc, "drivers", gv_probe_drivers(ctx, packages));
    json_object_set_new(doc, "stacks", stacks);
    json_object_set_new(doc, "libraries", libraries);
    json_object_set_new(doc, "packages", packages);
    json_object_set_new(doc, "python", python);
    json_object_set_new(doc, "loader", gv_probe_loader(ctx, libraries));
    json_object_set_new(doc, "environment", environment(ctx));
    json_object_set_new(doc, "permissions", gv_probe_permissions(ctx));
    if (ctx->pid)
        json_object_set_new(doc, "process", gv_probe_process(ctx));
    *out = doc;
    return GV_OK;
}

static const char *const required_sections[] = {
    "host", "gpus", "drivers", "stacks", "libraries", "packages",
    "python", "loader", "environment", "permissions",
};

int gv_snapshot_load(const char *path, json_t **out, struct gv_err *err)
{
    json_t *doc;
    int rc = gv_json_read_file(path, (size_t)512 << 20, &doc, err);
    if (rc)
        return rc;
    rc = gv_json_check_schema(doc, GV_SNAPSHOT_SCHEMA, GV_SNAPSHOT_SCHEMA_VERSION, path, err);
    if (rc) {
        json_decref(doc);
        return rc;
    }
    for (size_t i = 0; i < sizeof required_sections / sizeof required_sections[0]; i++) {
        json_t *s = json_object_get(doc, required_sections[i]);
        if (!json_is_object(s) || !json_is_boolean(json_object_get(s, "collected"))) {
            json_decref(doc);
            return gv_err_set(err, GV_E_SCHEMA,
                              "%s: section \"%s\" is missing or has no \"collected\" flag", path,
                              required_sections[i]);
        }
    }
    *out = doc;
    return GV_OK;
}
