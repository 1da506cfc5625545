/* The probe's one way to compute: dot products (or row sums) with chosen
 * inputs on an opened device, through backend.h's run(). Internal to src/probe. */
#ifndef GV_PROBE_EXEC_H
#define GV_PROBE_EXEC_H

#include <jansson.h>

#include "dev/backend.h"
#include "probe/probe.h"

#define PX_DIM 64    /* probes per call: the GEMM is PX_DIM x PX_DIM x K */
#define PB_MAX 256   /* sparse probes per batch */
#define PB_TERMS 8

struct px {
    const struct gv_backend *be;
    struct gv_device *dev;
    enum gv_call call;
    const struct gv_probe_prec *p;
    json_t *impls;   /* distinct impl strings the backend reported */
    int calls;
    double seconds;
    char idbuf[96];
};

/* The case of one call: GEMM rows x cols x k, or SUM rows x k. */
void px_case(struct px *x, int rows, int cols, int k, struct gv_case *c);
int px_alloc(const struct gv_case *c, struct gv_buffer in[2], struct gv_buffer *out);
void px_free(struct gv_buffer in[2], struct gv_buffer *out);
/* One call of the backend on prepared buffers (counts calls, time, impl). */
int px_raw(struct px *x, const struct gv_case *c, struct gv_buffer in[2], struct gv_buffer *out,
           struct gv_err *err);
/* v is exactly a value of format t. */
int px_representable(double v, enum gv_dtype t);
/* nq dot products of length k: a[q*k+i] . b[q*k+i] -> r[q] (sums: b unused). */
int px_dots(struct px *x, int k, int nq, const double *a, const double *b, double *r,
            struct gv_err *err);

/* A batch of sparse probes: a few nonzero terms each, at fixed length k. */
struct term {
    int pos;
    double a, b;
};
struct pq {
    int nt;
    struct term t[PB_TERMS];
};
struct pb {
    int k, n;
    struct pq q[PB_MAX];
    double r[PB_MAX];
};
void pb_init(struct pb *b, int k);
/* Returns the probe's index, or -1 when the batch is full. */
int pb_add(struct pb *b, int nt, const struct term *t);
int pb_run(struct px *x, struct pb *b, struct gv_err *err);

/* A property: {"value", "method", "observations": []} (new reference). */
json_t *px_prop(const char *value, const char *method);
/* One line appended to a property's observations. */
void px_obs(json_t *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Every property of x->p on x's device into props (props.c). */
int gv_probe_props(struct px *x, json_t *props, struct gv_err *err);
/* model.kN for each K of fit, for a GEMM precision the model covers
 * (fit.c); after gv_probe_props. */
int gv_probe_fit(struct px *x, json_t *props, const struct gv_probe_fit_ks *fit,
                 struct gv_err *err);

#endif
