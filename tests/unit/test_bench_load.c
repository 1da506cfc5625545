/* bench on a CPU or a shared machine (bench/load.h), with given figures and given
 * /proc text, never the live machine: the unit that fits a figure (a CPU GEMM is
 * not "0.00 TFLOP/s"), /proc/loadavg and /proc/stat read, and each sign of a busy
 * machine said (load average against the CPUs, steal time, the spread) or not. */
#include <math.h>

#include "bench/load.h"
#include "t.h"

static void test_units(void)
{
    char buf[64];
    double v;
    T_EQ_STR(gv_bench_fit_unit(0.0262, "TFLOP/s", &v), "GFLOP/s");
    T_NEAR(v, 26.2, 1e-9);
    T_EQ_STR(gv_bench_format_figure(0.0262, "TFLOP/s", buf, sizeof buf), "26.20 GFLOP/s");
    T_EQ_STR(gv_bench_format_figure(0.00004, "TFLOP/s", buf, sizeof buf), "40.00 MFLOP/s");
    T_EQ_STR(gv_bench_format_figure(0.5, "TFLOP/s", buf, sizeof buf), "500.0 GFLOP/s");
    T_EQ_STR(gv_bench_format_figure(1.0, "TFLOP/s", buf, sizeof buf), "1.00 TFLOP/s");
    T_EQ_STR(gv_bench_format_figure(812.345, "TFLOP/s", buf, sizeof buf), "812.3 TFLOP/s");
    T_EQ_STR(gv_bench_format_figure(0.646, "GB/s", buf, sizeof buf), "646.0 MB/s");
    T_EQ_STR(gv_bench_format_figure(4321.0, "GB/s", buf, sizeof buf), "4321.0 GB/s");
    /* latencies and unknown units stay as they are */
    T_EQ_STR(gv_bench_format_figure(0.25, "us", buf, sizeof buf), "0.25 us");
    T_EQ_STR(gv_bench_fit_unit(0, "TFLOP/s", &v), "TFLOP/s");
}

static void test_proc_text(void)
{
    double l = -1;
    T_EQ_INT(gv_bench_parse_loadavg("11.02 6.10 4.23 9/812 40213\n", &l), 0);
    T_NEAR(l, 11.02, 1e-12);
    T_EQ_INT(gv_bench_parse_loadavg("", &l), -1);
    T_EQ_INT(gv_bench_parse_loadavg("busy 1 2", &l), -1);
    unsigned long long total = 0, steal = 0;
    const char *stat = "cpu  100 5 50 800 10 1 2 30 7 0\n"
                       "cpu0 50 2 25 400 5 0 1 15 3 0\n"
                       "intr 12345\n";
    T_EQ_INT(gv_bench_parse_stat(stat, &total, &steal), 0);
    T_EQ_INT(total, 100 + 5 + 50 + 800 + 10 + 1 + 2 + 30); /* guest is inside user */
    T_EQ_INT(steal, 30);
    /* an old kernel without the steal column */
    T_EQ_INT(gv_bench_parse_stat("cpu  10 0 5 85\n", &total, &steal), 0);
    T_EQ_INT(total, 100);
    T_EQ_INT(steal, 0);
    T_EQ_INT(gv_bench_parse_stat("cpu0 1 2 3 4\nintr 1\n", &total, &steal), -1);
}

static struct gv_bench_load quiet(void)
{
    struct gv_bench_load l = {.ncpu = 2, .load1_before = 0.3, .load1_after = 1.9};
    gv_bench_parse_stat("cpu  1000 0 500 8500 0 0 0 0 0 0\n", &l.total0, &l.steal0);
    gv_bench_parse_stat("cpu  2000 0 700 9300 0 0 0 0 0 0\n", &l.total1, &l.steal1);
    l.have_stat0 = l.have_stat1 = 1;
    return l;
}

static int busy(const json_t *o) { return json_is_true(json_object_get(o, "busy")); }

static const char *why(const json_t *o, size_t i)
{
    return json_string_value(json_array_get(json_object_get(o, "why"), i));
}

static void test_busy(void)
{
    /* idle before the run, no steal, tight samples: nothing said */
    struct gv_bench_load l = quiet();
    json_t *o = gv_bench_load_judge(&l, 0.04, "gemm.openblas.f32.256x256x256");
    T_CHECK(!busy(o));
    T_EQ_INT(json_array_size(json_object_get(o, "why")), 0);
    T_NEAR(json_real_value(json_object_get(o, "steal_fraction")), 0, 1e-12);
    T_EQ_INT(json_integer_value(json_object_get(o, "cpus")), 2);
    json_decref(o);

    /* others' load: 11 on 2 CPUs */
    l.load1_before = 11.02;
    o = gv_bench_load_judge(&l, 0.04, "x");
    T_CHECK(busy(o));
    T_CHECK(why(o, 0) && strstr(why(o, 0), "11.02 on 2 CPUs"));
    json_decref(o);

    /* steal: 120 of 2000 ticks (6%) went to other guests */
    l = quiet();
    gv_bench_parse_stat("cpu  2000 0 700 9180 0 0 0 120 0 0\n", &l.total1, &l.steal1);
    o = gv_bench_load_judge(&l, 0.04, "x");
    T_CHECK(busy(o));
    T_NEAR(json_real_value(json_object_get(o, "steal_fraction")), 0.06, 1e-12);
    T_CHECK(why(o, 0) && strstr(why(o, 0), "6% of the CPU time"));
    json_decref(o);
    /* 2% steal is not enough */
    gv_bench_parse_stat("cpu  2000 0 700 9260 0 0 0 40 0 0\n", &l.total1, &l.steal1);
    o = gv_bench_load_judge(&l, 0.04, "x");
    T_CHECK(!busy(o));
    json_decref(o);

    /* the spread itself: ±174% (spread 3.48) on an otherwise quiet machine */
    l = quiet();
    o = gv_bench_load_judge(&l, 3.48, "memory.copy.67108864B");
    T_CHECK(busy(o));
    T_CHECK(why(o, 0) && strstr(why(o, 0), "memory.copy.67108864B") &&
            strstr(why(o, 0), "±174%"));
    T_EQ_STR(json_string_value(json_object_get(o, "max_spread_id")), "memory.copy.67108864B");
    json_decref(o);

    /* nothing known: no claim either way, and the unknowns are null */
    struct gv_bench_load none = {.ncpu = -1, .load1_before = NAN, .load1_after = NAN};
    o = gv_bench_load_judge(&none, NAN, NULL);
    T_CHECK(!busy(o));
    T_CHECK(json_is_null(json_object_get(o, "steal_fraction")) &&
            json_is_null(json_object_get(o, "load1_before")) &&
            json_is_null(json_object_get(o, "cpus")));
    json_decref(o);
}

int main(void)
{
    T_RUN(test_units);
    T_RUN(test_proc_text);
    T_RUN(test_busy);
    return t_done();
}
