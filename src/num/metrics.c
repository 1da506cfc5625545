/* Error metrics of an output against its fp64 reference. */
#include "num/metrics.h"

#include <math.h>
#include <string.h>

#include "base/sha256.h"
#include "num/fp.h"

static int ulp_bucket(uint64_t d)
{
    if (d == 0)
        return 0;
    if (d == 1)
        return 1;
    if (d < 4)
        return 2;
    if (d < 8)
        return 3;
    if (d < 16)
        return 4;
    if (d < 256)
        return 5;
    if (d < 65536)
        return 6;
    return 7;
}

/* Precision in bits of the format (fraction bits + 1). */
static double precision_bits(enum gv_dtype t) { return -log2(gv_fp_unit_roundoff(t)); }

/* err / bound with the conventions 0/0 = 0 and x/0 = inf. */
static double ratio(double err, double bound)
{
    if (err == 0)
        return 0;
    if (!(bound > 0))
        return INFINITY;
    return err / bound;
}

struct acc {
    double sum_d2, sum_r2, sum_signed, sum_tz, sum_abs;
    size_t n_signed;
};

static void one_element(double y, double r, double b, double s, enum gv_dtype out,
                        struct gv_metrics *m, struct acc *a, size_t i)
{
    if (!isfinite(r)) {
        m->ref_nonfinite++;
        return;
    }
    if (isnan(y) || isinf(y)) {
        if (isnan(y))
            m->nan_count++;
        else
            m->inf_count++;
        m->ulp_hist[GV_ULP_BUCKETS - 1]++;
        m->err_over_bound = INFINITY;
        m->worst_index = i;
        return;
    }
    double d = fabs(y - r);
    if (d > m->max_abs)
        m->max_abs = d;
    if (r != 0 && d / fabs(r) > m->max_rel)
        m->max_rel = d / fabs(r);
    a->sum_d2 += d * d;
    a->sum_r2 += r * r;
    double q = ratio(d, b);
    if (q > m->err_over_bound) {
        m->err_over_bound = q;
        m->worst_index = i;
    }
    if (s > 0) {
        a->sum_signed += (y - r) / s;
        a->sum_tz += (r > 0 ? r - y : r < 0 ? y - r : 0) / s;
        a->sum_abs += d / s;
        a->n_signed++;
    }
    m->ulp_hist[ulp_bucket(gv_fp_ulp_distance(y, r, out))]++;
}

void gv_metrics_compute(const double *y, const double *ref, const double *bound,
                        const double *scale, size_t n, enum gv_dtype out_dtype,
                        const void *out_bytes, size_t out_nbytes, struct gv_metrics *m)
{
    memset(m, 0, sizeof *m);
    m->count = n;
    struct acc a = {0, 0, 0, 0, 0, 0};
    double u = gv_fp_unit_roundoff(out_dtype);
    for (size_t i = 0; i < n; i++) {
        double r = ref[i];
        double b = bound ? bound[i] : u * fabs(r);
        double s = scale ? scale[i] : fabs(r);
        one_element(y[i], r, b, s, out_dtype, m, &a, i);
    }
    if (a.sum_r2 > 0)
        m->normwise = sqrt(a.sum_d2) / sqrt(a.sum_r2);
    else
        m->normwise = a.sum_d2 > 0 ? INFINITY : 0;
    double cap = precision_bits(out_dtype);
    m->eff_bits = m->normwise > 0 ? -log2(m->normwise) : cap;
    if (m->eff_bits > cap)
        m->eff_bits = cap;
    if (m->eff_bits < 0)
        m->eff_bits = 0;
    if (m->nan_count || m->inf_count)
        m->eff_bits = 0;
    m->mean_signed = a.n_signed ? a.sum_signed / (double)a.n_signed : 0;
    m->mean_toward_zero = a.n_signed ? a.sum_tz / (double)a.n_signed : 0;
    m->mean_abs = a.n_signed ? a.sum_abs / (double)a.n_signed : 0;
    if (out_bytes)
        gv_sha256_buf_hex(out_bytes, out_nbytes, m->out_digest);
    else
        m->out_digest[0] = '\0';
}

const char *gv_verdict_name(enum gv_verdict v)
{
    switch (v) {
    case GV_PASS:
        return "pass";
    case GV_FAIL:
        return "fail";
    case GV_ERROR:
        return "error";
    case GV_SKIPPED:
        return "skipped";
    }
    return "?";
}
