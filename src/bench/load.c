/* Units that fit a figure, and whether the machine was busy (load.h). */
#include "bench/load.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/fs.h"

/* Signs of a busy machine (docs/bench.md, "A busy machine"). */
#define BUSY_LOAD_PER_CPU 0.5 /* others' runnable work before the run, per online CPU */
#define BUSY_STEAL 0.05       /* CPU time the hypervisor gave to other guests */
#define BUSY_SPREAD 0.5       /* (max - min) / median of one result's samples: ±25% */

static const struct {
    const char *unit, *smaller[2];
} units[] = {
    {"TFLOP/s", {"GFLOP/s", "MFLOP/s"}},
    {"GB/s", {"MB/s", "kB/s"}},
};

const char *gv_bench_fit_unit(double value, const char *unit, double *scaled)
{
    *scaled = value;
    if (!unit || !isfinite(value))
        return unit ? unit : "";
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
        if (strcmp(unit, units[i].unit) != 0)
            continue;
        if (fabs(value) >= 1 || value == 0)
            return unit;
        if (fabs(value) >= 1e-3) {
            *scaled = value * 1e3;
            return units[i].smaller[0];
        }
        *scaled = value * 1e6;
        return units[i].smaller[1];
    }
    return unit;
}

const char *gv_bench_format_figure(double value, const char *unit, char *buf, size_t n)
{
    double v;
    const char *u = gv_bench_fit_unit(value, unit, &v);
    int decimals = fabs(v) >= 100 ? 1 : 2; /* as the result lines */
    if (!isfinite(v))
        snprintf(buf, n, "%g %s", v, u);
    else
        snprintf(buf, n, "%.*f %s", decimals, v, u);
    return buf;
}

int gv_bench_parse_loadavg(const char *text, double *load1)
{
    char *end;
    if (!text)
        return -1;
    double v = strtod(text, &end);
    if (end == text || !isfinite(v) || v < 0 || (*end != ' ' && *end != '\n' && *end))
        return -1;
    *load1 = v;
    return 0;
}

int gv_bench_parse_stat(const char *text, unsigned long long *total, unsigned long long *steal)
{
    for (const char *p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
        if (strncmp(p, "cpu ", 4) != 0)
            continue;
        unsigned long long sum = 0, f[10] = {0};
        const char *q = p + 4;
        int nf = 0;
        while (nf < 10) {
            char *end;
            while (*q == ' ')
                q++;
            if (*q < '0' || *q > '9')
                break;
            f[nf++] = strtoull(q, &end, 10);
            q = end;
        }
        if (nf < 4) /* user nice system idle at least */
            return -1;
        /* guest and guest_nice (9th, 10th) are already counted in user and nice */
        for (int i = 0; i < nf && i < 8; i++)
            sum += f[i];
        *total = sum;
        *steal = nf >= 8 ? f[7] : 0;
        return 0;
    }
    return -1;
}

static void add_why(json_t *why, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add_why(json_t *why, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    json_array_append_new(why, json_vsprintf(fmt, ap)); /* whole, however long */
    va_end(ap);
}

static json_t *num_or_null(double v) { return isfinite(v) ? json_real(v) : json_null(); }

json_t *gv_bench_load_judge(const struct gv_bench_load *l, double max_spread,
                            const char *max_spread_id)
{
    json_t *o = json_object(), *why = json_array();
    double steal = NAN;
    if (l->have_stat0 && l->have_stat1 && l->total1 > l->total0 && l->steal1 >= l->steal0)
        steal = (double)(l->steal1 - l->steal0) / (double)(l->total1 - l->total0);
    json_object_set_new(o, "cpus", l->ncpu > 0 ? json_integer(l->ncpu) : json_null());
    json_object_set_new(o, "load1_before", num_or_null(l->load1_before));
    json_object_set_new(o, "load1_after", num_or_null(l->load1_after));
    json_object_set_new(o, "steal_fraction", num_or_null(steal));
    json_object_set_new(o, "max_spread", num_or_null(max_spread));
    json_object_set_new(o, "max_spread_id",
                        max_spread_id && isfinite(max_spread) ? json_string(max_spread_id)
                                                              : json_null());
    if (l->ncpu > 0 && isfinite(l->load1_before) &&
        l->load1_before >= BUSY_LOAD_PER_CPU * l->ncpu)
        add_why(why, "the load average was %.2f on %d CPUs before the run: other work was "
                     "running",
                l->load1_before, l->ncpu);
    if (isfinite(steal) && steal >= BUSY_STEAL)
        add_why(why, "%.0f%% of the CPU time during the run was stolen by the hypervisor for "
                     "other guests",
                100 * steal);
    if (isfinite(max_spread) && max_spread >= BUSY_SPREAD)
        add_why(why, "the samples of %s vary by ±%.0f%% around their median: something else "
                     "competed for the machine, or its clocks changed",
                max_spread_id ? max_spread_id : "one benchmark", 50 * max_spread);
    json_object_set_new(o, "busy", json_boolean(json_array_size(why) > 0));
    json_object_set_new(o, "why", why);
    return o;
}

void gv_bench_load_read(const char *root, int before, struct gv_bench_load *l)
{
    char *text = NULL;
    size_t len = 0;
    double load1 = NAN;
    if (gv_root_read_file(root, "/proc/loadavg", 4096, &text, &len, NULL) == 0)
        gv_bench_parse_loadavg(text, &load1);
    free(text);
    text = NULL;
    if (before)
        l->load1_before = load1;
    else
        l->load1_after = load1;
    unsigned long long total = 0, steal = 0;
    int ok = gv_root_read_file(root, "/proc/stat", 1 << 20, &text, &len, NULL) == 0 &&
             gv_bench_parse_stat(text, &total, &steal) == 0;
    free(text);
    if (before)
        l->total0 = total, l->steal0 = steal, l->have_stat0 = ok;
    else
        l->total1 = total, l->steal1 = steal, l->have_stat1 = ok;
}
