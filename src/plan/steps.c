/* Building plan documents: steps, commands, notes, problems. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/utf8.h"
#include "plan/pkg.h"

json_t *gv_plan_argv(const char *first, ...)
{
    json_t *argv = json_array();
    va_list ap;
    va_start(ap, first);
    for (const char *a = first; a; a = va_arg(ap, const char *))
        json_array_append_new(argv, json_string(a));
    va_end(ap);
    return json_pack("{s:o}", "argv", argv);
}

json_t *gv_plan_step(json_t *steps, int phase, const char *title, const char *why)
{
    json_t *s = json_pack("{s:i, s:s, s:s, s:[], s:[]}", "phase", phase, "title", title, "why",
                          why, "commands", "notes");
    json_array_append_new(steps, s);
    return s;
}

void gv_plan_cmd(json_t *step, json_t *cmd)
{
    json_array_append_new(json_object_get(step, "commands"), cmd);
}

void gv_plan_note(json_t *step, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    json_array_append_new(json_object_get(step, "notes"), json_string(buf));
}

void gv_plan_problem(json_t *plan, const char *subject, const char *message, const char *how)
{
    json_array_append_new(json_object_get(plan, "problems"),
                          json_pack("{s:s, s:s, s:s}", "subject", subject, "message", message,
                                    "how", how));
    json_object_set_new(plan, "complete", json_false());
}

int gv_gpu_path_hint(const char *s)
{
    static const char *const hints[] = {"rocm", "cuda", "hip", "nvidia", "amdgpu", "/opt/"};
    for (size_t i = 0; s && i < sizeof hints / sizeof hints[0]; i++)
        if (strstr(s, hints[i]))
            return 1;
    return 0;
}

int gv_loader_conf_is_gpu(const json_t *conf)
{
    if (gv_gpu_path_hint(json_string_value(json_object_get(conf, "path"))))
        return 1;
    size_t i;
    json_t *d;
    json_array_foreach(json_object_get(conf, "dirs"), i, d) if (gv_gpu_path_hint(json_string_value(d)))
        return 1;
    return 0;
}

void gv_plan_problemf(json_t *plan, const char *subject, const char *how, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    gv_plan_problem(plan, subject, buf, how);
}
