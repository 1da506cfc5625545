/* gpuvet bench on a shared or small machine: figures in a unit that fits them,
 * and whether the machine was busy while the benchmarks ran (load average
 * against the online CPUs before the run, steal time over the run, the spread
 * of the samples). Pure functions over given text and figures, so tests give
 * them /proc contents; gv_bench_load_read samples the live /proc. Nothing
 * here prints (docs/bench.md, "A busy machine"). */
#ifndef GV_BENCH_LOAD_H
#define GV_BENCH_LOAD_H

#include <jansson.h>
#include <stddef.h>

/* A figure in the unit that fits it: TFLOP/s below 1 as GFLOP/s, below 0.001 as
 * MFLOP/s; GB/s below 1 as MB/s; others as they are. Returns the unit and sets
 * *scaled to the figure in it. */
const char *gv_bench_fit_unit(double value, const char *unit, double *scaled);
/* "12.30 GFLOP/s": the fitted figure with two decimals (one from 100 up), in
 * buf (returned). */
const char *gv_bench_format_figure(double value, const char *unit, char *buf, size_t n);

/* The first field of /proc/loadavg ("0.52 0.58 0.59 1/123 4567"); -1 when the
 * text is not that. */
int gv_bench_parse_loadavg(const char *text, double *load1);
/* The "cpu " line of /proc/stat: the sum of its fields (all CPU time, in ticks)
 * and its steal field (the 8th); -1 when the text has no such line. */
int gv_bench_parse_stat(const char *text, unsigned long long *total, unsigned long long *steal);

/* What was seen; NaN or -1 where unknown. */
struct gv_bench_load {
    int ncpu;                 /* online CPUs */
    double load1_before;      /* 1-minute load average before the run (others' work) */
    double load1_after;       /* ... after it (the benchmarks' own threads included) */
    unsigned long long total0, steal0, total1, steal1; /* /proc/stat around the run */
    int have_stat0, have_stat1;
};

/* Judges it, with the largest spread of the results (max - min over median, as
 * in each result; NaN none) and the id that had it. Returns the machine_load
 * object of the document: the figures, "busy" and "why" (one sentence per
 * sign seen: load average at or above half the CPUs, steal time of 5% or more,
 * a spread of 50% (±25%) or more). */
json_t *gv_bench_load_judge(const struct gv_bench_load *l, double max_spread,
                            const char *max_spread_id);

/* Samples root's /proc ("/" live): before = 1 fills load1_before and the
 * first /proc/stat sample, else load1_after and the second. Missing files
 * leave their fields unknown. */
void gv_bench_load_read(const char *root, int before, struct gv_bench_load *l);

#endif
