/* The properties of one route and precision, each from crafted dot products
 * (docs/facts/numerics-methods.md §1, §2a, §3, §4c). All values are exact powers of two
 * or short sums of them, so every expected output is exact and every output
 * seen is recorded. A product value v is built as a*b with a holding the
 * significand and both factors normal in the input format. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "num/fp.h"
#include "probe/exec.h"

struct fmt {
    int p;          /* significand bits, implicit bit included */
    int emin, emax; /* exponents of the smallest normal and of the largest binade */
};

static struct fmt fmt_of(enum gv_dtype t)
{
    switch (t) {
    case GV_F64: return (struct fmt){53, -1022, 1023};
    case GV_F32:
    case GV_TF32: return (struct fmt){24, -126, 127};
    case GV_F16: return (struct fmt){11, -14, 15};
    case GV_BF16: return (struct fmt){8, -126, 127};
    case GV_F8E4M3: return (struct fmt){4, -6, 8};
    case GV_F8E5M2: return (struct fmt){3, -14, 15};
    default: return (struct fmt){24, -126, 127};
    }
}

/* ---------- text ---------- */

/* 1+2^-23, -2^-127, 3*2^-25 ...: exact for the probe's values. */
static void val_str(double v, char *out, size_t n)
{
    if (isnan(v) || isinf(v)) {
        snprintf(out, n, "%s", isnan(v) ? "nan" : v > 0 ? "inf" : "-inf");
        return;
    }
    if (v == 0) {
        snprintf(out, n, "%s", signbit(v) ? "-0" : "0");
        return;
    }
    int e;
    double f = frexp(fabs(v), &e); /* v = f * 2^e, f in [0.5, 1) */
    int bits[8], nb = 0;
    double m = f * 2; /* [1, 2) */
    e -= 1;
    for (int i = 0; i < 64 && m != 0 && nb < 5; i++) {
        if (m >= 1) {
            bits[nb++] = e - i;
            m -= 1;
        }
        m *= 2;
    }
    if (m != 0 || nb > 3) {
        snprintf(out, n, "%.17g", v);
        return;
    }
    int paren = v < 0 && nb > 1;
    size_t used = (size_t)snprintf(out, n, "%s", v < 0 ? (paren ? "-(" : "-") : "");
    for (int i = 0; i < nb && used < n; i++) {
        const char *plus = i ? "+" : "";
        if (bits[i] == 0)
            used += (size_t)snprintf(out + used, n - used, "%s1", plus);
        else
            used += (size_t)snprintf(out + used, n - used, "%s2^%d", plus, bits[i]);
    }
    if (paren && used + 1 < n)
        snprintf(out + used, n - used, ")");
}

static void set_value(json_t *p, const char *v)
{
    json_object_set_new(p, "value", json_string(v));
}

/* "a=[1, 2^-24] b=[1, 1] -> seen (exact ...)" */
static void obs_probe(json_t *p, const struct pq *q, int sum, double seen, double exact,
                      const char *meaning)
{
    char as[200] = "", bs[200] = "", v[48];
    size_t ua = 0, ub = 0;
    for (int i = 0; i < q->nt; i++) {
        val_str(q->t[i].a, v, sizeof v);
        ua += (size_t)snprintf(as + ua, sizeof as - ua, "%s%d:%s", i ? " " : "", q->t[i].pos, v);
        val_str(q->t[i].b, v, sizeof v);
        ub += (size_t)snprintf(bs + ub, sizeof bs - ub, "%s%d:%s", i ? " " : "", q->t[i].pos, v);
        if (ua >= sizeof as || ub >= sizeof bs)
            break;
    }
    char s[48], e[48];
    val_str(seen, s, sizeof s);
    val_str(exact, e, sizeof e);
    if (sum)
        px_obs(p, "x={%s} -> %s (exact %s)%s%s", as, s, e, meaning ? ": " : "", meaning ? meaning : "");
    else
        px_obs(p, "a={%s} b={%s} -> %s (exact %s)%s%s", as, bs, s, e, meaning ? ": " : "",
            meaning ? meaning : "");
}

/* ---------- building products ---------- */

struct pctx {
    struct px *x;
    int sum;               /* a SUM precision: terms are values, not products */
    struct fmt fi, fo;
    double S;              /* scale that keeps every product of the probes normal */
    int qin, qsum;         /* measured fraction bits: inputs, sums (-1: unknown) */
    json_t *props;
    struct gv_err *err;
};

/* v = a*b with a = significand * 2^ea, b = 2^eb, both normal in the input format. */
static int split(const struct pctx *c, double v, struct term *t, int pos)
{
    t->pos = pos;
    if (c->sum) {
        t->a = v;
        t->b = 1;
        return px_representable(v, c->x->p->in) ? 0 : -1;
    }
    if (v == 0) {
        t->a = t->b = 0;
        return 0;
    }
    int e;
    frexp(fabs(v), &e);
    e -= 1;
    int ea = e >= 0 ? (e + 1) / 2 : -((-e) / 2);
    int eb = e - ea;
    if (ea < c->fi.emin) {
        ea = c->fi.emin;
        eb = e - ea;
    } else if (eb < c->fi.emin) {
        eb = c->fi.emin;
        ea = e - eb;
    }
    if (ea > c->fi.emax) {
        ea = c->fi.emax;
        eb = e - ea;
    } else if (eb > c->fi.emax) {
        eb = c->fi.emax;
        ea = e - eb;
    }
    t->a = ldexp(v, -eb);
    t->b = ldexp(1.0, eb);
    if (ea < c->fi.emin || eb < c->fi.emin || ea > c->fi.emax || eb > c->fi.emax ||
        !px_representable(t->a, c->x->p->in) || !px_representable(t->b, c->x->p->in))
        return -1;
    return 0;
}

/* Adds the probe of products vals[0..n) at positions 0..n-1; -1 when a value
 * cannot be written in the input format. */
static int add_products_at(const struct pctx *c, struct pb *b, const double *vals,
                           const int *pos, int n)
{
    struct term t[PB_TERMS];
    for (int i = 0; i < n; i++)
        if (split(c, vals[i], &t[i], pos ? pos[i] : i))
            return -1;
    return pb_add(b, n, t);
}

static int add_products(const struct pctx *c, struct pb *b, const double *vals, int n)
{
    return add_products_at(c, b, vals, NULL, n);
}

static int add_pair(const struct pctx *c, struct pb *b, double a, double bv)
{
    struct term t = {0, a, bv};
    if (!px_representable(a, c->x->p->in) || !px_representable(bv, c->x->p->in))
        return -1;
    return pb_add(b, 1, &t);
}

/* ---------- batch 1: subnormals, input and sum bits ---------- */

struct b1 {
    int sub_in[4], sub_out[2], man_a[64], man_b[64], sumbits[64];
    int nsub_in, nsub_out, nman, nsum;
    double sub_in_exact[4], sub_out_exact[2];
};

static void plan_b1(const struct pctx *c, struct pb *b, struct b1 *p)
{
    memset(p, 0, sizeof *p);
    if (!c->sum) {
        int eb = (c->fi.emax < -c->fi.emin ? c->fi.emax : -c->fi.emin) - 1;
        for (int i = 0; i < 2; i++) {
            double s = ldexp(1.0, c->fi.emin - 1 - i), big = ldexp(1.0, eb);
            int qa = add_pair(c, b, s, big), qb = add_pair(c, b, big, s);
            if (qa >= 0 && qb >= 0) {
                p->sub_in_exact[p->nsub_in] = s * big;
                p->sub_in[p->nsub_in++] = qa;
                p->sub_in_exact[p->nsub_in] = s * big;
                p->sub_in[p->nsub_in++] = qb;
            }
        }
        if (2 * c->fi.emin <= c->fo.emin - 3)
            for (int i = 0; i < 2; i++) {
                double v = ldexp(1.0, c->fo.emin - 1 - 2 * i);
                int q = add_products(c, b, &v, 1);
                if (q >= 0) {
                    p->sub_out_exact[p->nsub_out] = v;
                    p->sub_out[p->nsub_out++] = q;
                }
            }
        for (int j = 1; j < c->fi.p && j < 64; j++) {
            double v = 1 + ldexp(1.0, -j);
            p->man_a[j] = add_pair(c, b, v, 1);
            p->man_b[j] = add_pair(c, b, 1, v);
        }
        p->nman = c->fi.p < 64 ? c->fi.p : 64;
    }
    for (int j = 1; j < c->fo.p && j < 64; j++) {
        double v[2] = {c->S, c->S * ldexp(1.0, -j)};
        p->sumbits[j] = add_products(c, b, v, 2);
        p->nsum = j + 1;
    }
}

static double res(const struct pb *b, int q) { return q >= 0 ? b->r[q] : NAN; }

static void judge_sub_in(struct pctx *c, const struct pb *b, const struct b1 *p)
{
    json_t *pr = px_prop("not applicable",
                          "a subnormal of the input format times a power of two, in A and in B; "
                          "the exact product is normal in the output");
    int kept = 0, zero = 0;
    for (int i = 0; i < p->nsub_in; i++) {
        double r = res(b, p->sub_in[i]);
        kept += r == p->sub_in_exact[i];
        zero += r == 0;
        obs_probe(pr, &b->q[p->sub_in[i]], 0, r, p->sub_in_exact[i],
                  r == p->sub_in_exact[i] ? "kept" : r == 0 ? "flushed" : "neither");
    }
    if (p->nsub_in)
        set_value(pr, kept == p->nsub_in ? "kept" : zero == p->nsub_in ? "flushed" : "undetermined");
    if (p->nsub_in && kept != p->nsub_in && zero != p->nsub_in)
        px_obs(pr, "undetermined: some subnormal inputs were kept and some not (or neither)");
    json_object_set_new(c->props, "input_subnormals", pr);
}

static void judge_sub_out(struct pctx *c, const struct pb *b, const struct b1 *p)
{
    json_t *pr = px_prop("not applicable",
                          "a product of two normal inputs whose exact value is subnormal in the "
                          "output format");
    int kept = 0, zero = 0;
    for (int i = 0; i < p->nsub_out; i++) {
        double r = res(b, p->sub_out[i]);
        kept += r == p->sub_out_exact[i];
        zero += r == 0;
        obs_probe(pr, &b->q[p->sub_out[i]], 0, r, p->sub_out_exact[i],
                  r == p->sub_out_exact[i] ? "kept" : r == 0 ? "flushed" : "neither");
    }
    if (p->nsub_out && kept != p->nsub_out && zero != p->nsub_out)
        px_obs(pr, "undetermined: some subnormal outputs were kept and some not (or neither)");
    if (p->nsub_out)
        set_value(pr, kept == p->nsub_out ? "kept" : zero == p->nsub_out ? "flushed"
                                                                         : "undetermined");
    else
        px_obs(pr, "no product of two normal %s values is subnormal in %s",
            gv_dtype_name(c->x->p->in), gv_dtype_name(c->x->p->out));
    json_object_set_new(c->props, "output_subnormals", pr);
}

/* Largest j such that every j' <= j was exact; observations for all. */
static int bits_kept(json_t *pr, const struct pb *b, const int *q, int n, int sum, double base,
                     double scale)
{
    int kept = 0, run = 1;
    for (int j = 1; j < n; j++) {
        if (q[j] < 0)
            break;
        double exact = scale * (base + ldexp(1.0, -j)), r = res(b, q[j]);
        if (r == exact && run)
            kept = j;
        else
            run = 0;
        if (pr)
            obs_probe(pr, &b->q[q[j]], sum, r, exact, r == exact ? "kept" : "lost");
    }
    return kept;
}

static void judge_mantissa(struct pctx *c, const struct pb *b, const struct b1 *p)
{
    c->qin = c->fi.p - 1;
    if (c->sum)
        return;
    json_t *pr = px_prop("undetermined",
                          "one product (1+2^-j)*1 with the 1+2^-j in A, then in B: the largest "
                          "j whose output is exact (fraction bits of an input that survive)");
    int ka = bits_kept(pr, b, p->man_a, p->nman, 0, 1, 1);
    int kb = bits_kept(NULL, b, p->man_b, p->nman, 0, 1, 1);
    px_obs(pr, "B side: %d fraction bits kept", kb);
    char v[16];
    snprintf(v, sizeof v, "%d", ka);
    if (ka == kb)
        set_value(pr, v);
    else
        px_obs(pr, "A and B disagree (%d vs %d)", ka, kb);
    c->qin = ka == kb ? ka : -1;
    json_object_set_new(c->props, "input_mantissa_bits", pr);
}

static void judge_sumbits(struct pctx *c, const struct pb *b, const struct b1 *p)
{
    json_t *pr = px_prop("undetermined",
                          c->sum ? "the sum S + S*2^-j of two inputs: the largest j whose output "
                                   "is exact (fraction bits of a sum as delivered)"
                                 : "two products S + S*2^-j: the largest j whose output is exact "
                                   "(fraction bits of a sum as delivered)");
    int k = bits_kept(pr, b, p->sumbits, p->nsum, c->sum, 1, c->S);
    char v[16];
    snprintf(v, sizeof v, "%d", k);
    set_value(pr, v);
    c->qsum = k;
    json_object_set_new(c->props, "sum_mantissa_bits", pr);
}

/* ---------- batch 2: rounding, extra bits, products ---------- */

#define GV_EXTRA_MAX 8
#define JOIN_POS 16 /* a position in a later block than position 0 (blocks of 1..16) */ /* extra alignment bits told apart (issue 35: at least 8) */

/* extra_bits as a number: "0".."8" (not ">=N"); -1 otherwise. */
static int extra_of_text(const char *v)
{
    return v[0] >= '0' && v[0] <= '8' && !v[1] ? v[0] - '0' : -1;
}

/* The value of property name in props, "" when absent. */
static const char *prop_text(const json_t *props, const char *name)
{
    const char *v = json_string_value(json_object_get(json_object_get(props, name), "value"));
    return v ? v : "";
}

struct b2 {
    int in_pos[2], in_neg[2], in_tie[2];
    int s_pos, s_neg, s_tie;
    int j_pos, j_neg, j_tie; /* the same with the second term in a later block */
    int xz[GV_EXTRA_MAX + 1], xr[GV_EXTRA_MAX + 1]; /* extra-bit tests n = 1..8 */
    int pr1, pr2;
    int in_q, h;
};

/* rounding mode from: positive case went up?, negative case went away from zero?,
 * tie went up? (-1: not asked) */
static const char *mode_of(int up, int neg_away, int tie_up)
{
    if (up == 1 && neg_away == 1)
        return tie_up < 0 ? "nearest" : tie_up ? "nearest-away" : "nearest-even";
    if (up == 0 && neg_away == 0)
        return "toward-zero";
    if (up == 0 && neg_away == 1)
        return "down";
    if (up == 1 && neg_away == 0)
        return "up";
    return "undetermined";
}

/* The extra-bit tests, n = 1..GV_EXTRA_MAX, with h = S*2^-(q+1) half a unit of
 * the sum's last kept bit (HPEC 2025's F1, generalised): the exact sum is
 * S + 2^-q S in the first form, just above a tie in the second, and the result
 * is exact (first) or rounds up (second) only when the terms are aligned with
 * at least n bits beyond the sum's q before they are added:
 *   xz (truncating sums): S, h, h*(1-2^-(n-1)), S*2^-(q+n)   (n = 1: S, h, h)
 *   xr (nearest sums):    S, h, S*2^-(q+n)                   (n = 1: S, h, h)
 * A test whose values the input format cannot write is not asked (-1). */
static void plan_extra(const struct pctx *c, struct pb *b, struct b2 *p)
{
    double S = c->S, h = S * ldexp(1.0, -(c->qsum + 1));
    for (int n = 1; n <= GV_EXTRA_MAX; n++) {
        double tiny = S * ldexp(1.0, -(c->qsum + n));
        if (n == 1) {
            double x[3] = {S, h, h};
            p->xz[1] = p->xr[1] = add_products(c, b, x, 3);
            continue;
        }
        double z[4] = {S, h, h * (1 - ldexp(1.0, -(n - 1))), tiny}, r[3] = {S, h, tiny};
        p->xz[n] = add_products(c, b, z, 4);
        p->xr[n] = add_products(c, b, r, 3);
    }
}

static void plan_b2(const struct pctx *c, struct pb *b, struct b2 *p)
{
    memset(p, -1, sizeof *p);
    int q = c->qin;
    if (!c->sum && q >= 0 && q + 2 <= c->fi.p - 1) {
        p->in_q = q;
        double hi = 1 + ldexp(1.0, -(q + 1)) + ldexp(1.0, -(q + 2)), tie = 1 + ldexp(1.0, -(q + 1));
        p->in_pos[0] = add_pair(c, b, hi, 1);
        p->in_neg[0] = add_pair(c, b, -hi, 1);
        p->in_tie[0] = add_pair(c, b, tie, 1);
        p->in_pos[1] = add_pair(c, b, 1, hi);
        p->in_neg[1] = add_pair(c, b, 1, -hi);
        p->in_tie[1] = add_pair(c, b, 1, tie);
    }
    q = c->qsum;
    if (q >= 1 && q <= c->fo.p - 1) {
        double S = c->S;
        double pos[2] = {S, S * 1.5 * ldexp(1.0, -(q + 1))}, neg[2] = {-pos[0], -pos[1]};
        double tie[2] = {S, S * ldexp(1.0, -(q + 1))};
        p->s_pos = add_products(c, b, pos, 2);
        p->s_neg = add_products(c, b, neg, 2);
        p->s_tie = add_products(c, b, tie, 2);
        if (!c->sum) { /* the second term at JOIN_POS: past every block seen (1 to 16) */
            static const int at[2] = {0, JOIN_POS};
            p->j_pos = add_products_at(c, b, pos, at, 2);
            p->j_neg = add_products_at(c, b, neg, at, 2);
            p->j_tie = add_products_at(c, b, tie, at, 2);
        }
        plan_extra(c, b, p);
        int h = (q + 2) / 2; /* 2h >= q+1: x^2 needs more bits than a sum keeps */
        if (!c->sum && c->qin >= h && h + 2 <= q + 1) {
            double x = 1 + ldexp(1.0, -h);
            struct term t1[2] = {{0, -1, 1}, {1, x, x}}, t2[2] = {{0, x, x}, {1, -1, 1}};
            if (px_representable(x, c->x->p->in)) {
                p->h = h;
                p->pr1 = pb_add(b, 2, t1);
                p->pr2 = pb_add(b, 2, t2);
            }
        }
    }
}

/* The mode as the value, with the reason when no mode fits. */
static void set_mode(json_t *pr, const char *mode)
{
    set_value(pr, mode);
    if (!strcmp(mode, "undetermined"))
        px_obs(pr, "undetermined: a result is neither of the two neighbours, or the three results "
            "fit no one rounding mode");
}

/* 1 when r is the rounded-up value, 0 rounded-down, -1 neither. */
static int went(double r, double up, double down)
{
    return r == up ? 1 : r == down ? 0 : -1;
}

static void judge_in_round(struct pctx *c, const struct pb *b, const struct b2 *p)
{
    if (c->sum)
        return;
    json_t *pr = px_prop("not applicable",
                          "inputs 1+2^-(q+1)+2^-(q+2), its negation and the tie 1+2^-(q+1), with "
                          "q the fraction bits kept, times 1 (A side, then B side)");
    if (c->qin < 0) {
        set_value(pr, "undetermined");
        px_obs(pr, "undetermined: the input's fraction bits are (input_mantissa_bits)");
    } else if (p->in_q < 0)
        px_obs(pr, "no input bits are dropped below the format's own (%d fraction bits kept)",
            c->qin);
    else {
        const char *m[2];
        for (int s = 0; s < 2; s++) {
            double hi = 1 + ldexp(1.0, -(p->in_q + 1)) + ldexp(1.0, -(p->in_q + 2));
            double up = 1 + ldexp(1.0, -p->in_q);
            int a = went(res(b, p->in_pos[s]), up, 1);
            int n = went(-res(b, p->in_neg[s]), up, 1);
            int t = went(res(b, p->in_tie[s]), up, 1);
            if (s == 0) {
                obs_probe(pr, &b->q[p->in_pos[s]], 0, res(b, p->in_pos[s]), hi, NULL);
                obs_probe(pr, &b->q[p->in_neg[s]], 0, res(b, p->in_neg[s]), -hi, NULL);
                obs_probe(pr, &b->q[p->in_tie[s]], 0, res(b, p->in_tie[s]),
                          1 + ldexp(1.0, -(p->in_q + 1)), NULL);
            }
            m[s] = mode_of(a, n, t);
        }
        px_obs(pr, "A side: %s; B side: %s", m[0], m[1]);
        if (strcmp(m[0], m[1])) {
            px_obs(pr, "undetermined: the A and B sides round differently");
            set_value(pr, "undetermined");
        } else {
            set_mode(pr, m[0]);
        }
    }
    json_object_set_new(c->props, "input_rounding", pr);
}

static void judge_sum_round(struct pctx *c, const struct pb *b, const struct b2 *p)
{
    json_t *pr = px_prop("undetermined",
                          "S + S*1.5*2^-(q+1) (exactly 3/4 of a unit of the q-th fraction bit "
                          "above S), its negation, and the tie S + S*2^-(q+1), with q the "
                          "fraction bits a sum keeps");
    if (p->s_pos >= 0 && p->s_neg >= 0 && p->s_tie >= 0) {
        double S = c->S, up = S * (1 + ldexp(1.0, -c->qsum));
        double ex = S * (1 + 1.5 * ldexp(1.0, -(c->qsum + 1)));
        int a = went(res(b, p->s_pos), up, S), n = went(-res(b, p->s_neg), up, S);
        int t = went(res(b, p->s_tie), up, S);
        obs_probe(pr, &b->q[p->s_pos], c->sum, res(b, p->s_pos), ex, NULL);
        obs_probe(pr, &b->q[p->s_neg], c->sum, res(b, p->s_neg), -ex, NULL);
        obs_probe(pr, &b->q[p->s_tie], c->sum, res(b, p->s_tie),
                  S * (1 + ldexp(1.0, -(c->qsum + 1))), NULL);
        set_mode(pr, mode_of(a, n, t));
    } else {
        px_obs(pr, "the probe values cannot be written in %s", gv_dtype_name(c->x->p->in));
    }
    json_object_set_new(c->props, "sum_rounding", pr);
}

/* How a term of a later block joins the sum so far (HPEC 2025, F8): where
 * the library sums each chunk apart and adds the chunk sums (order.kN
 * "chunks of C, combined sequentially"), that addition's rounding. */
static void judge_join_round(struct pctx *c, const struct pb *b, const struct b2 *p)
{
    if (c->sum)
        return;
    json_t *pr = px_prop("undetermined",
                          "S at position 0 and S*1.5*2^-(q+1) (3/4 of a unit of the sum's last "
                          "kept bit) at position 16, in a later block; its negation; the tie "
                          "S*2^-(q+1) (HPEC 2025, F8: the rounding when blocks are combined)");
    if (p->j_pos >= 0 && p->j_neg >= 0 && p->j_tie >= 0) {
        double S = c->S, up = S * (1 + ldexp(1.0, -c->qsum));
        double ex = S * (1 + 1.5 * ldexp(1.0, -(c->qsum + 1)));
        int a = went(res(b, p->j_pos), up, S), n = went(-res(b, p->j_neg), up, S);
        int t = went(res(b, p->j_tie), up, S);
        obs_probe(pr, &b->q[p->j_pos], 0, res(b, p->j_pos), ex, NULL);
        obs_probe(pr, &b->q[p->j_neg], 0, res(b, p->j_neg), -ex, NULL);
        obs_probe(pr, &b->q[p->j_tie], 0, res(b, p->j_tie), S * (1 + ldexp(1.0, -(c->qsum + 1))),
                  NULL);
        set_mode(pr, mode_of(a, n, t));
    } else {
        px_obs(pr, "the probe values cannot be written in %s", gv_dtype_name(c->x->p->in));
    }
    json_object_set_new(c->props, "combine_rounding", pr);
}

/* The number of extra alignment bits: the largest n whose test (plan_extra, in
 * the form for the sum rounding measured) gives the exact sum, every smaller n
 * passing too. */
static void judge_extra(struct pctx *c, const struct pb *b, const struct b2 *p, const char *mode)
{
    json_t *pr = px_prop("undetermined",
                          "S with h = S*2^-(q+1) (half the last kept unit) and terms down to "
                          "S*2^-(q+n), n = 1..8, whose sum is exact (or above a tie) only when "
                          "they are aligned with n bits beyond the sum's q before the addition "
                          "(HPEC 2025, F1, generalised)");
    int trunc = !strcmp(mode, "toward-zero"), near = !strncmp(mode, "nearest", 7);
    if (!trunc && !near) {
        px_obs(pr, "the sum rounding is %s: the tests need toward-zero or nearest", mode);
        json_object_set_new(c->props, "extra_bits", pr);
        return;
    }
    double S = c->S, ex = S * (1 + ldexp(1.0, -c->qsum));
    int passed = 0, failed = 0, unasked = 0, mixed = 0;
    for (int n = 1; n <= GV_EXTRA_MAX; n++) {
        int q = trunc ? p->xz[n] : p->xr[n];
        if (q < 0) {
            unasked = n;
            break;
        }
        double r = res(b, q);
        obs_probe(pr, &b->q[q], c->sum, r, ex, r == ex ? "exact" : NULL);
        if (r == ex && !failed)
            passed = n;
        else if (r == ex)
            mixed = 1;
        else if (r == S)
            failed = failed ? failed : n;
        else
            mixed = 1;
    }
    char v[16];
    if (mixed)
        px_obs(pr, "the tests do not fail from one n on: no single number of bits explains them");
    else if (failed || passed == GV_EXTRA_MAX) {
        snprintf(v, sizeof v, failed ? "%d" : ">=%d", passed);
        set_value(pr, v);
    } else if (unasked > 1) {
        px_obs(pr, "the %s inputs cannot write the test for %d bits", gv_dtype_name(c->x->p->in),
            unasked);
        snprintf(v, sizeof v, ">=%d", passed);
        set_value(pr, v);
    } else {
        px_obs(pr, "the probe values cannot be written in %s", gv_dtype_name(c->x->p->in));
    }
    json_object_set_new(c->props, "extra_bits", pr);
}

static void judge_products(struct pctx *c, const struct pb *b, const struct b2 *p)
{
    if (c->sum)
        return;
    json_t *pr = px_prop("not applicable",
                          "-1*1 and x*x with x = 1+2^-h, in both orders; x*x needs more bits "
                          "than a sum keeps, x*x - 1 does not");
    if (p->pr1 >= 0 && p->pr2 >= 0) {
        double ex = ldexp(1.0, -(p->h - 1)) + ldexp(1.0, -2 * p->h), rd = ldexp(1.0, -(p->h - 1));
        double r1 = res(b, p->pr1), r2 = res(b, p->pr2);
        obs_probe(pr, &b->q[p->pr1], 0, r1, ex, r1 == ex ? "exact" : r1 == rd ? "rounded" : NULL);
        obs_probe(pr, &b->q[p->pr2], 0, r2, ex, r2 == ex ? "exact" : r2 == rd ? "rounded" : NULL);
        if (r1 == ex && r2 == ex)
            set_value(pr, "exact");
        else if (r1 == rd && r2 == rd)
            set_value(pr, "rounded");
        else if (r1 == ex && r2 == rd)
            set_value(pr, "fma");
        else {
            set_value(pr, "undetermined");
            px_obs(pr, "undetermined: the two orders give neither the exact nor the rounded value "
                "as an FMA chain, a rounding or exact products would");
        }
    } else {
        px_obs(pr, "every product of two %s inputs fits the %d fraction bits of a sum",
            gv_dtype_name(c->x->p->in), c->qsum);
    }
    json_object_set_new(c->props, "product_rounding", pr);
}

/* ---------- random inputs: determinism, batch invariance ---------- */

static double rnd(uint64_t *s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(*s >> 11) / 9007199254740992.0 * 2 - 1;
}

static void fill_random(struct px *x, struct gv_buffer *b, uint64_t seed)
{
    uint64_t s = seed;
    enum gv_dtype t = x->p->in;
    for (size_t i = 0; i < b->count; i++)
        gv_fp_store(b->data, t, i, gv_fp_round(rnd(&s), t, GV_RNE));
}

/* Runs of the determinism property. A race that changes the bits in one run
 * of eight shows in ten runs with probability 0.74, in three with 0.33: with
 * three runs the property flipped from probe to probe on a stack that had not
 * changed. The runs are counted against the most common output (a race in
 * run 1 is one odd run, not nine), and the counts go into the document so
 * that a comparison can ask whether two probes really disagree (gv_fp_diff). */
#define DET_RUNS 10

static unsigned long long bits_hash(const void *p, size_t n)
{
    const unsigned char *b = p;
    unsigned long long h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 1099511628211ull;
    return h;
}

/* The run whose output most runs share (the first such). */
static int modal_run(const unsigned long long *h, int n)
{
    int best = 0, most = 0;
    for (int i = 0; i < n; i++) {
        int same = 0;
        for (int j = 0; j < n; j++)
            same += h[j] == h[i];
        if (same > most) {
            most = same;
            best = i;
        }
    }
    return best;
}

static int determinism(struct pctx *c)
{
    int k = c->sum ? 4096 : 512;
    struct gv_case cs;
    px_case(c->x, PX_DIM, PX_DIM, k, &cs);
    struct gv_buffer in[2], out;
    unsigned char *runs = NULL;
    if (px_alloc(&cs, in, &out))
        goto oom;
    fill_random(c->x, &in[0], 1);
    fill_random(c->x, &in[1], 2);
    size_t bytes = out.count * gv_dtype_size(out.dtype), w = gv_dtype_size(out.dtype);
    runs = malloc(bytes * DET_RUNS + 1);
    if (!runs)
        goto oom;
    char meth[240];
    snprintf(meth, sizeof meth, "the same %s of uniform [-1,1) inputs (%dx%dx%d) run %d times; "
             "the runs whose output bits differ from the most common output are counted",
             c->sum ? "row sums" : "GEMM", PX_DIM, PX_DIM, k, DET_RUNS);
    json_t *pr = px_prop("yes", meth);
    unsigned long long h[DET_RUNS];
    int rc = GV_OK;
    for (int run = 0; run < DET_RUNS && !rc; run++) {
        memset(out.data, 0xa5, bytes);
        rc = px_raw(c->x, &cs, in, &out, c->err);
        if (!rc) {
            memcpy(runs + (size_t)run * bytes, out.data, bytes);
            h[run] = bits_hash(out.data, bytes);
        }
    }
    if (rc) {
        json_decref(pr);
        goto done;
    }
    int m = modal_run(h, DET_RUNS), differing = 0;
    const unsigned char *mode = runs + (size_t)m * bytes;
    for (int run = 0; run < DET_RUNS; run++) {
        if (h[run] == h[m] && !memcmp(runs + (size_t)run * bytes, mode, bytes))
            continue;
        size_t diff = 0;
        for (size_t i = 0; i < out.count; i++)
            diff += memcmp(runs + (size_t)run * bytes + i * w, mode + i * w, w) != 0;
        px_obs(pr, "run %d: %zu of %zu outputs differ from the most common output (run %d's)",
            run + 1, diff, out.count, m + 1);
        differing++;
    }
    px_obs(pr, "%d of %d runs differ from the most common output", differing, DET_RUNS);
    set_value(pr, differing ? "no" : "yes");
    json_object_set_new(pr, "runs", json_integer(DET_RUNS));
    json_object_set_new(pr, "differing", json_integer(differing));
    json_object_set_new(c->props, "deterministic", pr);
done:
    px_free(in, &out);
    free(runs);
    return rc;
oom:
    px_free(in, &out);
    free(runs);
    return gv_err_set(c->err, GV_E_NOMEM, "probe: out of memory");
}

/* Row 0 of A.B (or sum of row 0) for several row counts around it. */
/* Row 0 of BI_RUNS runs for each row count. A row count agrees with the
 * 1-row result when some run of it gave row 0 the bits some 1-row run gave:
 * a route whose bits change from run to run then does not pass for one whose
 * bits depend on the batch (that would need every run of one row count to be
 * an odd one), while a route whose bits follow the batch shows no common
 * result at all. */
#define BI_RUNS 3

static int row_runs(const struct pctx *c, const struct gv_case *cs, struct gv_buffer *in,
                    struct gv_buffer *out, size_t bytes, unsigned char (*got)[PX_DIM * 8])
{
    for (int r = 0; r < BI_RUNS; r++) {
        int rc = px_raw(c->x, cs, in, out, c->err);
        if (rc)
            return rc;
        memcpy(got[r], out->data, bytes);
    }
    return GV_OK;
}

static int any_common(unsigned char (*a)[PX_DIM * 8], unsigned char (*b)[PX_DIM * 8], size_t bytes)
{
    for (int i = 0; i < BI_RUNS; i++)
        for (int j = 0; j < BI_RUNS; j++)
            if (!memcmp(a[i], b[j], bytes))
                return 1;
    return 0;
}

static int batch_invariance(struct pctx *c)
{
    static const int rows_gemm[] = {1, 64, 256}, rows_sum[] = {1, 64};
    const int *rows = c->sum ? rows_sum : rows_gemm;
    int nrows = c->sum ? 2 : 3, k = c->sum ? 4096 : 1024, cols = c->sum ? 1 : PX_DIM;
    char meth[240];
    snprintf(meth, sizeof meth, "row 0 of a %s (K=%d) computed with %s rows around it, %d runs "
             "each; invariant when every row count gives row 0 bits that a 1-row run gave",
             c->sum ? "row sum" : "GEMM", k, c->sum ? "1 and 64" : "1, 64 and 256", BI_RUNS);
    json_t *pr = px_prop("yes", meth);
    unsigned char ref[BI_RUNS][PX_DIM * 8], got[BI_RUNS][PX_DIM * 8];
    int rc = GV_OK, same = 1;
    for (int i = 0; i < nrows && !rc; i++) {
        struct gv_case cs;
        px_case(c->x, rows[i], cols, k, &cs);
        struct gv_buffer in[2], out;
        if (px_alloc(&cs, in, &out)) {
            px_free(in, &out);
            json_decref(pr);
            return gv_err_set(c->err, GV_E_NOMEM, "probe: out of memory");
        }
        fill_random(c->x, &in[0], 3); /* row 0 is the same for every row count */
        fill_random(c->x, &in[1], 4);
        size_t bytes = (size_t)cols * gv_dtype_size(out.dtype);
        rc = row_runs(c, &cs, in, &out, bytes, i ? got : ref);
        if (!rc && i) {
            int d = !any_common(ref, got, bytes);
            px_obs(pr, "%d rows: row 0 %s", rows[i], d ? "differs from every 1-row result"
                                                    : "bit-identical to a 1-row result");
            same &= !d;
        }
        px_free(in, &out);
    }
    if (rc) {
        json_decref(pr);
        return rc;
    }
    set_value(pr, same ? "yes" : "no");
    json_object_set_new(c->props, "batch_invariant", pr);
    return GV_OK;
}

/* ---------- accumulation order ---------- */

struct swamp {
    struct pctx *c;
    double ma, mb, ua, ub;
};

static int swamp_fn(void *ctx, int n, int len, const int *qi, const int *qj, int *L,
                    struct gv_err *err)
{
    struct swamp *w = ctx;
    size_t cells = (size_t)len * (size_t)n;
    double *a = malloc((cells ? cells : 1) * sizeof *a), *b = malloc((cells ? cells : 1) * sizeof *b);
    double *r = malloc((size_t)(len ? len : 1) * sizeof *r);
    if (!a || !b || !r) {
        free(a);
        free(b);
        free(r);
        return gv_err_set(err, GV_E_NOMEM, "probe: out of memory");
    }
    for (int q = 0; q < len; q++)
        for (int i = 0; i < n; i++) {
            size_t at = (size_t)q * (size_t)n + (size_t)i;
            int mask = i == qi[q] || i == qj[q];
            a[at] = mask ? (i == qi[q] ? w->ma : -w->ma) : w->ua;
            b[at] = mask ? w->mb : w->ub;
        }
    int rc = px_dots(w->c->x, n, len, a, b, r, err);
    double unit = w->c->sum ? w->ua : w->ua * w->ub;
    for (int q = 0; q < len && !rc; q++) {
        double cnt = r[q] / unit;
        L[q] = isfinite(cnt) && cnt == floor(cnt) && cnt >= 0 && cnt <= n - 2 ? n - (int)cnt : -1;
    }
    free(a);
    free(b);
    free(r);
    return rc;
}

static int order(struct pctx *c, int *fused, int *fused_seen, json_t *fpr)
{
    static const int ks_gemm[] = {16, 64, 256}, ks_sum[] = {64, 512};
    const int *ks = c->sum ? ks_sum : ks_gemm;
    int nk = c->sum ? 2 : 3;
    struct swamp w = {c, 0, 0, 0, 0};
    int uexp = c->fi.emin > -7 ? c->fi.emin : -7;
    if (c->sum) {
        w.ma = ldexp(1.0, c->fi.emax);
        w.mb = 1;
        w.ua = 1;
        w.ub = 1;
    } else {
        /* the mask is one input at its largest binade times 1, so that a
         * narrow accumulator does not overflow; times a second large input
         * only when that is not enough to swamp the unit products */
        int eb = 0;
        if (c->fi.emax - 2 * uexp < c->fo.p + 4) {
            eb = c->fo.emax - 1 - c->fi.emax;
            eb = eb < 0 ? 0 : eb > c->fi.emax ? c->fi.emax : eb;
        }
        w.ma = ldexp(1.0, c->fi.emax);
        w.mb = ldexp(1.0, eb);
        w.ua = w.ub = ldexp(1.0, uexp);
    }
    double ratio = log2(w.ma * w.mb) - (c->sum ? 0 : 2 * uexp);
    for (int i = 0; i < nk; i++) {
        char name[32], meth[400];
        snprintf(name, sizeof name, "order.k%d", ks[i]);
        char ma[32], mb[32], ua[32], ub[32];
        val_str(w.ma, ma, sizeof ma);
        val_str(w.mb, mb, sizeof mb);
        val_str(w.ua, ua, sizeof ua);
        val_str(w.ub, ub, sizeof ub);
        if (c->sum)
            snprintf(meth, sizeof meth, "FPRev swamping over %d terms: every term %s except +%s "
                     "at i and -%s at j; the output counts the terms added after the two cancel",
                     ks[i], ua, ma, ma);
        else
            snprintf(meth, sizeof meth, "FPRev swamping over K=%d: products %s*%s except +-%s*%s "
                     "at i and j; the output counts the products added after the two cancel",
                     ks[i], ua, ub, ma, mb);
        json_t *pr = px_prop("undetermined", meth);
        if (ratio < c->fo.p + 4) {
            set_value(pr, "not applicable");
            px_obs(pr, "the input format cannot make a term large enough to swamp the others");
            json_object_set_new(c->props, name, pr);
            continue;
        }
        struct gv_tree t;
        int rc = gv_tree_recover(ks[i], swamp_fn, &w, &t, c->err);
        if (rc) {
            json_decref(pr);
            gv_tree_free(&t);
            return rc;
        }
        char sum[160], canon[600], hex[65];
        gv_tree_summary(&t, sum, sizeof sum);
        gv_tree_canon(&t, canon, sizeof canon);
        gv_tree_hash(&t, hex);
        set_value(pr, sum);
        px_obs(pr, "%d pairs asked in %d batches", t.queries, t.rounds);
        if (t.bad[0])
            px_obs(pr, "answers inconsistent: %s", t.bad);
        else {
            px_obs(pr, "tree: %s", canon);
            px_obs(pr, "tree sha256: %s", hex);
            int f = gv_tree_max_fused(&t);
            px_obs(fpr, "K=%d: at most %d product%s added in one rounding", ks[i], f,
                f == 1 ? "" : "s");
            if (*fused_seen && *fused != f)
                *fused = -1;
            else if (!*fused_seen || *fused >= 0)
                *fused = f;
            *fused_seen = 1;
        }
        json_object_set_new(pr, "tree_sha256", json_string(t.bad[0] ? "" : hex));
        json_object_set_new(c->props, name, pr);
        gv_tree_free(&t);
    }
    return GV_OK;
}

/* ---------- batch 3: how products are aligned ---------- */

/* P1 is 1.5*1.5 = 2.25 (exponent sum 0, leading bit 1), P2 2.25*1 (both 1),
 * each with the small terms of plan_align: a grid one bit finer under P1
 * shows that products are aligned by their exponent sum. */
struct b3 {
    int p1, p2;
};

/* Needs the extra bits x (0..7) and a truncating or nearest sum. With U the
 * sum's unit at 2.25 (2^-(q-1)), the small terms are, truncating: U - 2^-(q+x)
 * and 2^-(q+x) (exactly 2.25 + U only when 2^-(q+x) is on the grid);
 * nearest: U/2 and 2^-(q+x) (above the tie only then; 2.25 is even). */
static void plan_align(const struct pctx *c, struct pb *b, struct b3 *p)
{
    memset(p, -1, sizeof *p);
    int x = extra_of_text(prop_text(c->props, "extra_bits"));
    const char *mode = prop_text(c->props, "sum_rounding");
    int trunc = !strcmp(mode, "toward-zero"), near = !strncmp(mode, "nearest", 7);
    int q = c->qsum;
    if (c->sum || x < 0 || x > 7 || q < 4 || (!trunc && !near)) /* q >= 4: 2.25 even */
        return;
    double S = c->S, U = ldexp(1.0, -(q - 1)), t = ldexp(1.0, -(q + x));
    double h = trunc ? U - t : U / 2;
    struct term t1[3] = {{0, 1.5 * S, 1.5}, {1, 0, 0}, {2, 0, 0}};
    struct term t2[3] = {{0, 2.25 * S, 1}, {1, 0, 0}, {2, 0, 0}};
    if (!px_representable(1.5 * S, c->x->p->in) || !px_representable(1.5, c->x->p->in) ||
        !px_representable(2.25 * S, c->x->p->in) || split(c, S * h, &t1[1], 1) ||
        split(c, S * t, &t1[2], 2))
        return;
    t2[1] = t1[1];
    t2[2] = t1[2];
    p->p1 = pb_add(b, 3, t1);
    p->p2 = pb_add(b, 3, t2);
}

static void judge_align(struct pctx *c, const struct pb *b, const struct b3 *p, int fused)
{
    json_t *pr = px_prop("undetermined",
                          "1.5*1.5 (exponent sum 0, leading bit 1) and then 2.25*1 (both 1), "
                          "each with terms down to 2^-(q+x), x the extra bits: the sum is exact "
                          "(or above a tie) only when the grid is set by the exponent sum");
    if (fused == 1) {
        set_value(pr, "not applicable");
        px_obs(pr, "one product per rounding: no block to align");
    } else if (p->p1 < 0 || p->p2 < 0) {
        px_obs(pr, "undetermined: needs extra_bits 0..7 and a truncating or nearest sum, and "
            "1.5 and 2.25 in %s", gv_dtype_name(c->x->p->in));
    } else {
        double S = c->S, up = S * (2.25 + ldexp(1.0, -(c->qsum - 1))), r1 = res(b, p->p1),
               r2 = res(b, p->p2);
        obs_probe(pr, &b->q[p->p1], 0, r1, up, r1 == up ? "the finer grid" : NULL);
        obs_probe(pr, &b->q[p->p2], 0, r2, up, r2 == up ? "the finer grid" : NULL);
        if (r1 == up && r2 == 2.25 * S)
            set_value(pr, "exponent sum");
        else if (r1 == 2.25 * S && r2 == 2.25 * S)
            set_value(pr, "leading bit");
        else
            px_obs(pr, "undetermined: the results fit neither alignment");
    }
    json_object_set_new(c->props, "product_alignment", pr);
}

/* ---------- one precision ---------- */

int gv_probe_props(struct px *x, json_t *props, struct gv_err *err)
{
    struct pctx c = {x, !strcmp(x->p->op, "sum"), fmt_of(x->p->in), fmt_of(x->p->out), 1, -1, -1,
                     props, err};
    if (x->p->compute == GV_F16 && x->p->out != GV_F16)
        c.fo = fmt_of(GV_F16);
    int smin = 2 * c.fi.emin + 26; /* S * 2^-(p+2) must stay a product of normals */
    if (!c.sum && smin > 0)
        c.S = ldexp(1.0, smin);
    struct pb *b = malloc(sizeof *b);
    if (!b)
        return gv_err_set(err, GV_E_NOMEM, "probe: out of memory");
    struct b1 p1;
    pb_init(b, 32);
    plan_b1(&c, b, &p1);
    int rc = pb_run(x, b, err);
    if (!rc) {
        judge_sub_in(&c, b, &p1);
        judge_sub_out(&c, b, &p1);
        judge_mantissa(&c, b, &p1);
        judge_sumbits(&c, b, &p1);
        if (c.sum) {
            json_object_del(props, "input_subnormals");
            json_object_del(props, "output_subnormals");
        }
        struct b2 p2;
        pb_init(b, 32);
        plan_b2(&c, b, &p2);
        rc = pb_run(x, b, err);
        if (!rc) {
            judge_in_round(&c, b, &p2);
            judge_sum_round(&c, b, &p2);
            judge_join_round(&c, b, &p2);
            judge_extra(&c, b, &p2, prop_text(props, "sum_rounding"));
            judge_products(&c, b, &p2);
        }
    }
    struct b3 p3;
    memset(&p3, -1, sizeof p3);
    if (!rc) {
        pb_init(b, 32);
        plan_align(&c, b, &p3);
        if (p3.p1 >= 0)
            rc = pb_run(x, b, err);
    }
    json_t *fpr = px_prop("undetermined",
                           "the most products that one rounding adds in the recovered summation "
                           "trees: the leaves a node joins to a partial sum, or all the leaves of "
                           "a first node of more than two (1: one addition per rounding)");
    int fused = 0, seen = 0;
    if (!rc)
        rc = order(&c, &fused, &seen, fpr);
    if (!rc && seen && fused > 0) {
        char v[16];
        snprintf(v, sizeof v, "%d", fused);
        set_value(fpr, v);
    } else if (!rc && seen && fused < 0) {
        px_obs(fpr, "undetermined: the trees of different K add different numbers of products per "
            "rounding (the library chose another kernel for another K; the emulation takes "
            "each order.kN's own)");
    } else if (!rc && !seen) {
        px_obs(fpr, "undetermined: no summation tree was recovered (see the order.kN properties)");
    }
    if (!rc)
        json_object_set_new(props, "fused_terms", fpr);
    else
        json_decref(fpr);
    if (!rc && !c.sum)
        judge_align(&c, b, &p3, seen && fused == 1 ? 1 : 0);
    free(b);
    if (!rc)
        rc = determinism(&c);
    if (!rc)
        rc = batch_invariance(&c);
    return rc;
}
