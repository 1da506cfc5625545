/* Parts shared by the result and comparison pages. */
#ifndef GV_REPORT_RESULTS_VIEW_H
#define GV_REPORT_RESULTS_VIEW_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "report/page.h"

/* The buckets of metrics.ulp_histogram (docs/results-schema.md). */
#define GV_ULP_NBINS 8
extern const char *const gv_ulp_bins[GV_ULP_NBINS];
/* The bucket of a ULP distance, as the result files bin them (0, 1, 2-3,
 * 4-7, 8-15, 16-255, 256-65535, more). */
static inline int gv_ulp_bin(uint64_t d)
{
    if (d < 16)
        return d == 0 ? 0 : d == 1 ? 1 : d < 4 ? 2 : d < 8 ? 3 : 4;
    return d < 256 ? 5 : d < 65536 ? 6 : 7;
}
/* A case's ulp_histogram into out (NaN where absent); 0 when it has none. */
int gv_ulp_hist(const json_t *metrics, double out[GV_ULP_NBINS]);
/* "what: 0 ULP: n; 1 ULP: n; ..." for a figure's <desc>. */
void gv_hist_desc(char *out, size_t n, const char *what, const double *v);
/* <ul class="summary"> of the counts summary[keys[i]], each with its symbol. */
void gv_summary_list(struct gv_page *p, const json_t *summary, const char *const *keys, size_t n);

#endif
