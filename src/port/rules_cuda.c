/* Rules for C, C++, CUDA and HIP sources (rules.h). The facts behind them,
 * with sources, are in src/kb/port_facts.c under the same ids. */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "kb/port_facts.h"
#include "port/rules.h"

static const char *const sync_ops[] = {
    "__shfl_sync", "__shfl_up_sync", "__shfl_down_sync", "__shfl_xor_sync", "__ballot_sync",
    "__any_sync",  "__all_sync",     "__match_any_sync", "__match_all_sync", NULL};
static const char *const shfl_sync[] = {"__shfl_sync", "__shfl_up_sync", "__shfl_down_sync",
                                        "__shfl_xor_sync", NULL};
static const char *const shfl_plain[] = {"__shfl", "__shfl_up", "__shfl_down", "__shfl_xor",
                                         NULL};
static const char *const ballots[] = {"__ballot_sync", "__ballot", "__activemask", NULL};
static const char *const narrow_bitops[] = {"__popc", "__ffs", "__clz", "__brev", NULL};
static const char *const int32_types[] = {"int", "unsigned", "uint32_t", "int32_t", "uint",
                                          "u32", "UINT32", "unsigned_int", NULL};
static const char *const wide_types[] = {"long", "uint64_t", "int64_t", "size_t", "auto",
                                         "u64", "lanemask_t", "__hip_lanemask_t", NULL};

/* tok[i] names a call: an identifier followed by "(". */
static int is_call(const struct port_file *f, size_t i, const char *const *names)
{
    return port_ident_in(&f->tok[i], names) && port_is(f, i + 1, "(");
}

static int contains_ci(const struct gv_tok *t, const char *word)
{
    size_t w = strlen(word);
    for (size_t k = 0; k + w <= t->n; k++)
        if (!strncasecmp(t->s + k, word, w))
            return 1;
    return 0;
}

static int is_num(const struct port_file *f, size_t i, long long v)
{
    int w;
    return i < f->n && gv_tok_int(&f->tok[i], &w) == v;
}

/* Declared type tokens before index e (exclusive), back to a ; { } ( or ,:
 * 32 (a 32-bit integer type), 64 (a wide one) or 0 (none / unknown). */
static int decl_width(const struct port_file *f, size_t e)
{
    int narrow = 0;
    size_t i = e;
    while (i > 0) {
        const struct gv_tok *t = &f->tok[i - 1];
        if (t->kind == GV_TOK_PUNCT && !gv_tok_is(t, "::"))
            break;
        if (port_ident_in(t, wide_types))
            return 64;
        if (port_ident_in(t, int32_types))
            narrow = 1;
        i--;
    }
    return narrow ? 32 : 0;
}

/* The value of name as a constant of this file: "#define NAME NUMBER" or
 * "[const|constexpr] TYPE NAME = NUMBER": the number's token index, and its
 * declared width in *width (32, 64, 0 unknown); f->n when none. */
static size_t const_value(const struct port_file *f, const struct gv_tok *name, int *width)
{
    for (size_t i = 1; i + 1 < f->n; i++) {
        const struct gv_tok *t = &f->tok[i];
        if (t->kind != GV_TOK_IDENT || t->n != name->n || memcmp(t->s, name->s, t->n))
            continue;
        if (t->pp && gv_tok_is(&f->tok[i - 1], "define") && f->tok[i + 1].kind == GV_TOK_NUMBER &&
            f->tok[i + 1].line == t->line) {
            int w;
            gv_tok_int(&f->tok[i + 1], &w);
            *width = w ? 64 : 32;
            return i + 1;
        }
        if (!t->pp && port_is(f, i + 1, "=") && i + 2 < f->n &&
            f->tok[i + 2].kind == GV_TOK_NUMBER) {
            int dw = decl_width(f, i);
            if (!dw)
                continue;
            *width = dw;
            return i + 2;
        }
    }
    return f->n;
}

/* A mask argument [a, b): its width (32 or 64, 0 unknown) and value (-1 unknown). */
static void mask_arg(const struct port_file *f, size_t a, size_t b, int *width, long long *value,
                     size_t *at)
{
    *width = 0;
    *value = -1;
    *at = a;
    if (b == a + 1 && f->tok[a].kind == GV_TOK_NUMBER) {
        int w;
        *value = gv_tok_int(&f->tok[a], &w);
        *width = *value < 0 ? 0 : w ? 64 : 32;
    } else if (b == a + 2 && port_is(f, a, "~") && is_num(f, a + 1, 0)) {
        int w;
        gv_tok_int(&f->tok[a + 1], &w);
        *width = w ? 64 : 32;
        *value = *width == 32 ? 0xffffffffLL : -1;
    } else if (b == a + 1 && f->tok[a].kind == GV_TOK_IDENT) {
        size_t v = const_value(f, &f->tok[a], width);
        if (v < f->n) {
            int w;
            *value = gv_tok_int(&f->tok[v], &w);
            *at = v;
        }
    }
}

/* Each *_sync call whose mask has width want (32 or 64) and, for 64, the
 * value 0xffffffff (lanes 0-31 only). */
static void sync_masks(struct port_file *f, const struct port_rule *r, int want)
{
    for (size_t i = 0; i < f->n; i++) {
        if (!is_call(f, i, sync_ops))
            continue;
        size_t a[1], b[1];
        if (!port_args(f, i + 1, a, b, 1))
            continue;
        int width;
        long long value;
        size_t at;
        mask_arg(f, a[0], b[0], &width, &value, &at);
        if (width == want && (want == 32 || value == 0xffffffffLL))
            port_emit(f, r, &f->tok[a[0]], NULL, NULL);
    }
}

static void sync_mask_32bit(struct port_file *f, const struct port_rule *r)
{
    sync_masks(f, r, 32);
}

static void wave32_full_mask(struct port_file *f, const struct port_rule *r)
{
    sync_masks(f, r, 64);
}

static void shfl_width_32(struct port_file *f, const struct port_rule *r)
{
    for (size_t i = 0; i < f->n; i++) {
        size_t want = is_call(f, i, shfl_sync) ? 4 : is_call(f, i, shfl_plain) ? 3 : 0;
        if (!want)
            continue;
        size_t a[4], b[4];
        if (port_args(f, i + 1, a, b, 4) != want)
            continue;
        size_t k = want - 1;
        int width;
        long long value;
        size_t at;
        mask_arg(f, a[k], b[k], &width, &value, &at);
        if (value == 32)
            port_emit(f, r, &f->tok[a[k]], NULL, NULL);
    }
}

static void ballot_32bit(struct port_file *f, const struct port_rule *r)
{
    for (size_t i = 1; i < f->n; i++) {
        if (!is_call(f, i, ballots))
            continue;
        const struct gv_tok *p = &f->tok[i - 1];
        int hit = 0;
        if (gv_tok_is(p, "=") && i >= 2 && f->tok[i - 2].kind == GV_TOK_IDENT)
            hit = decl_width(f, i - 2) == 32;
        else if (gv_tok_is(p, "(") && i >= 2)
            hit = port_ident_in(&f->tok[i - 2], narrow_bitops);
        else if (gv_tok_is(p, ")") && i >= 3 && gv_tok_is(&f->tok[i - 3], "("))
            hit = port_ident_in(&f->tok[i - 2], int32_types); /* (unsigned)__ballot(...) */
        if (hit)
            port_emit(f, r, &f->tok[i], NULL, NULL);
    }
}


/* The statement names a thread, lane or warp index. */
static int about_lanes(const struct port_file *f, size_t a, size_t b)
{
    for (size_t i = a; i < b; i++) {
        const struct gv_tok *t = &f->tok[i];
        if (t->kind != GV_TOK_IDENT)
            continue;
        if (gv_tok_is(t, "__shared__") || gv_tok_is(t, "warpSize"))
            return 0;
        if (gv_tok_is(t, "threadIdx") || gv_tok_is(t, "blockDim") || gv_tok_is(t, "tid") ||
            contains_ci(t, "lane") || contains_ci(t, "warp"))
            return 1;
    }
    return 0;
}

static void lane_id(struct port_file *f, const struct port_rule *r)
{
    for (size_t i = 0; i + 1 < f->n; i++) {
        const struct gv_tok *t = &f->tok[i];
        if (t->kind != GV_TOK_PUNCT || t->pp)
            continue;
        int hit = (gv_tok_is(t, "&") && is_num(f, i + 1, 31)) ||
                  (gv_tok_is(t, "%") && is_num(f, i + 1, 32)) ||
                  (gv_tok_is(t, "/") && is_num(f, i + 1, 32)) ||
                  (gv_tok_is(t, ">>") && is_num(f, i + 1, 5));
        if (!hit)
            continue;
        size_t a, b;
        port_statement(f, i, &a, &b);
        if (about_lanes(f, a, b))
            port_emit(f, r, t, NULL, NULL);
    }
}

/* name[...] somewhere with a lane index: an identifier with "lane" in it, or
 * threadIdx.x alone. */
static int lane_indexed(const struct port_file *f, const struct gv_tok *name)
{
    for (size_t i = 0; i + 1 < f->n; i++) {
        const struct gv_tok *t = &f->tok[i];
        if (t->kind != GV_TOK_IDENT || t->n != name->n || memcmp(t->s, name->s, t->n) ||
            !port_is(f, i + 1, "["))
            continue;
        size_t close = port_close(f, i + 1);
        if (close == i + 5 && port_is(f, i + 2, "threadIdx") && port_is(f, i + 3, ".") &&
            port_is(f, i + 4, "x"))
            return 1;
        for (size_t k = i + 2; k < close && k < f->n; k++)
            if (f->tok[k].kind == GV_TOK_IDENT && contains_ci(&f->tok[k], "lane"))
                return 1;
    }
    return 0;
}

/* The dimension [open, close] is a lone literal 32. */
static int dim_is_32(const struct port_file *f, size_t open, size_t close)
{
    return close == open + 2 && is_num(f, open + 1, 32);
}

static int dim_by_32(const struct port_file *f, size_t open, size_t close)
{
    for (size_t j = open + 1; j + 1 < close; j++)
        if ((gv_tok_is(&f->tok[j], "/") && is_num(f, j + 1, 32)) ||
            (gv_tok_is(&f->tok[j], ">>") && is_num(f, j + 1, 5)))
            return 1;
    return 0;
}

/* __shared__ arrays sized for 32-lane warps: a dimension of blockDim / 32 (or
 * >> 5); [WARPS][32] (a slot per lane of each warp); a lone [32] indexed by
 * lane somewhere in the file. [32][32] and [32][33] are tiles, not lanes. */
static void shared_32(struct port_file *f, const struct port_rule *r)
{
    for (size_t i = 0; i < f->n; i++) {
        if (!gv_tok_is(&f->tok[i], "__shared__"))
            continue;
        size_t open[3], close[3], nd = 0, k = i + 1;
        const struct gv_tok *name = NULL;
        for (; k < f->n && !gv_tok_is(&f->tok[k], ";") && !gv_tok_is(&f->tok[k], "=") &&
               !gv_tok_is(&f->tok[k], "{");
             k++) {
            if (!gv_tok_is(&f->tok[k], "["))
                continue;
            if (!nd && k > 0 && f->tok[k - 1].kind == GV_TOK_IDENT)
                name = &f->tok[k - 1];
            size_t c = port_close(f, k);
            if (c >= f->n)
                break;
            if (nd < 3)
                open[nd] = k, close[nd] = c;
            nd++;
            k = c;
        }
        if (!nd || nd > 3)
            continue;
        size_t at = f->n;
        for (size_t d = 0; d < nd && at == f->n; d++)
            if (dim_by_32(f, open[d], close[d]))
                at = open[d];
        if (at == f->n && nd == 2 && dim_is_32(f, open[1], close[1]) &&
            !dim_is_32(f, open[0], close[0]))
            at = open[1];
        if (at == f->n && nd == 1 && dim_is_32(f, open[0], close[0]) && name &&
            lane_indexed(f, name))
            at = open[0];
        if (at < f->n)
            port_emit(f, r, &f->tok[at], NULL, NULL);
    }
}

/* A for loop over shuffle offsets that covers 32 lanes: "for (int o = 16; ...)"
 * or "...; o < 32; ..." with a __shfl* of o in its body. */
static void loop_32(struct port_file *f, const struct port_rule *r)
{
    for (size_t i = 0; i + 2 < f->n; i++) {
        if (!gv_tok_is(&f->tok[i], "for") || !port_is(f, i + 1, "("))
            continue;
        size_t close = port_close(f, i + 1);
        if (close >= f->n)
            continue;
        size_t var = f->n, at = f->n;
        for (size_t j = i + 2; j + 2 < close; j++) {
            const struct gv_tok *t = &f->tok[j];
            if (t->kind == GV_TOK_IDENT && var == f->n && port_is(f, j + 1, "=") &&
                is_num(f, j + 2, 16))
                var = j, at = j + 2;
            if ((gv_tok_is(t, "<") && is_num(f, j + 1, 32)) ||
                (gv_tok_is(t, "<=") && (is_num(f, j + 1, 16) || is_num(f, j + 1, 31))))
                at = j + 1;
        }
        if (at == f->n)
            continue;
        if (var == f->n) /* the loop variable: the identifier before the first "=" */
            for (size_t j = i + 2; j + 1 < close && var == f->n; j++)
                if (f->tok[j].kind == GV_TOK_IDENT && port_is(f, j + 1, "="))
                    var = j;
        if (var == f->n)
            continue;
        size_t end;
        if (port_is(f, close + 1, "{")) {
            end = port_close(f, close + 1);
        } else {
            end = close + 1;
            while (end < f->n && !port_is(f, end, ";"))
                end++;
        }
        int uses = 0;
        for (size_t j = close + 1; j < end && j < f->n && !uses; j++) {
            if (!is_call(f, j, shfl_sync) && !is_call(f, j, shfl_plain))
                continue;
            size_t c = port_close(f, j + 1);
            for (size_t k = j + 2; k < c && k < f->n; k++)
                if (f->tok[k].kind == GV_TOK_IDENT && f->tok[k].n == f->tok[var].n &&
                    !memcmp(f->tok[k].s, f->tok[var].s, f->tok[k].n))
                    uses = 1;
        }
        if (uses)
            port_emit(f, r, &f->tok[at], NULL, NULL);
    }
}

/* WARPS_PER_BLOCK, kNumWarps, warp_count, MAX_WARPS: a count, not a width. */
static int is_count_name(const struct gv_tok *t)
{
    static const char *const words[] = {"per", "num", "count", "warps_", "waves_", NULL};
    for (int k = 0; words[k]; k++)
        if (contains_ci(t, words[k]))
            return 1;
    return t->n >= 5 && (!strncasecmp(t->s + t->n - 5, "warps", 5) ||
                         !strncasecmp(t->s + t->n - 5, "waves", 5));
}

/* WARP_SIZE, kWarpSize, WAVEFRONT_SIZE, THREADS_PER_WARP: a width (not
 * WAVE_SUSTAIN_ON or a count of warps). */
static int is_width_name(const struct gv_tok *t)
{
    if (is_count_name(t) && !contains_ci(t, "threads_per_warp") &&
        !contains_ci(t, "threadsperwarp"))
        return 0;
    return ((contains_ci(t, "warp") || contains_ci(t, "wave")) && contains_ci(t, "size")) ||
           contains_ci(t, "threads_per_warp") || contains_ci(t, "threadsperwarp");
}

/* "#define WARP_SIZE 32", "constexpr int kWarpSize = 32;": a warp size fixed at 32. */
static void size_const(struct port_file *f, const struct port_rule *r)
{
    for (size_t i = 1; i + 2 < f->n; i++) {
        const struct gv_tok *t = &f->tok[i];
        if (t->kind != GV_TOK_IDENT)
            continue;
        size_t v = f->n;
        if (t->pp && gv_tok_is(&f->tok[i - 1], "define") && f->tok[i + 1].line == t->line)
            v = i + 1;
        else if (!t->pp && port_is(f, i + 1, "="))
            v = i + 2;
        if (v >= f->n || f->tok[v].n != 2 || memcmp(f->tok[v].s, "32", 2))
            continue;
        if (is_width_name(t) && (t->pp || decl_width(f, i)))
            port_emit(f, r, &f->tok[v], NULL, NULL);
    }
}

static int ptx_text(const char *s, size_t n)
{
    static const char *const marks[] = {
        ".u32", ".s32", ".b32", ".f32", ".u64", ".s64", ".b64", ".f64", ".f16", ".b16",
        ".pred", ".reg", "%laneid", "%warpid", "%smid", "shfl.", "bar.sync", "cp.async",
        "ld.global", "st.global", "ld.shared", "st.shared", "mma.sync", "prmt.", "lop3.",
        "vote.", "membar.", "red.", "atom.", "cvt.", "mov.", "ldmatrix", "wgmma", NULL};
    for (int k = 0; marks[k]; k++) {
        size_t m = strlen(marks[k]);
        for (size_t j = 0; j + m <= n; j++)
            if (!memcmp(s + j, marks[k], m))
                return 1;
    }
    return 0;
}

static void inline_ptx(struct port_file *f, const struct port_rule *r)
{
    static const char *const asm_kw[] = {"asm", "__asm__", "__asm", NULL};
    static const char *const quals[] = {"volatile", "__volatile__", "__volatile", "goto",
                                        "inline", NULL};
    for (size_t i = 0; i < f->n; i++) {
        if (!port_ident_in(&f->tok[i], asm_kw))
            continue;
        size_t j = i + 1;
        while (j < f->n && port_ident_in(&f->tok[j], quals))
            j++;
        if (!port_is(f, j, "("))
            continue;
        size_t close = port_close(f, j);
        for (size_t k = j + 1; k < close && k < f->n; k++) {
            const char *s;
            size_t n;
            if (f->tok[k].kind != GV_TOK_STRING)
                continue;
            gv_tok_string_body(&f->tok[k], &s, &n);
            if (ptx_text(s, n)) {
                port_emit(f, r, &f->tok[i], NULL, NULL);
                break;
            }
        }
    }
}

static void nanosleep_rule(struct port_file *f, const struct port_rule *r)
{
    static const char *const names[] = {"__nanosleep", NULL};
    for (size_t i = 0; i < f->n; i++)
        if (is_call(f, i, names))
            port_emit(f, r, &f->tok[i], NULL, NULL);
}

/* The API table's entry for an identifier or #include name, NULL for none. */
static const struct gv_port_api *api_of(const struct port_file *f, size_t i, int *header)
{
    const struct gv_tok *t = &f->tok[i];
    *header = 0;
    if (t->kind == GV_TOK_IDENT) {
        if (t->s[0] != 'c' && t->s[0] != 'n')
            return NULL;
        if (i > 0 && (port_is(f, i - 1, ".") || port_is(f, i - 1, "->")))
            return NULL;
        return gv_port_api_find(t->s, t->n, 0);
    }
    int inc = t->pp && i >= 2 && (gv_tok_is(&f->tok[i - 1], "include") ||
                                   gv_tok_is(&f->tok[i - 1], "include_next"));
    if (!inc || (t->kind != GV_TOK_HEADER && t->kind != GV_TOK_STRING) || t->n < 3)
        return NULL;
    *header = 1;
    return gv_port_api_find(t->s + 1, t->n - 2, 1);
}

/* Once per file and table entry: the first use of an API without a HIP
 * counterpart (no_hip 1), or of a library whose counterpart differs (0). */
static void api_rule(struct port_file *f, const struct port_rule *r, int no_hip)
{
    const struct gv_port_api *seen[64];
    size_t nseen = 0;
    for (size_t i = 0; i < f->n; i++) {
        int header;
        const struct gv_port_api *a = api_of(f, i, &header);
        if (!a || (no_hip ? a->hip != NULL : (a->hip == NULL || a->note == NULL)))
            continue;
        if (!no_hip && !header)
            continue; /* a library is named once, at its #include */
        size_t k = 0;
        while (k < nseen && seen[k] != a)
            k++;
        if (k < nseen)
            continue;
        if (nseen < 64)
            seen[nseen++] = a;
        char msg[512], fix[512];
        const struct gv_tok *t = &f->tok[i];
        int tn = t->n > 80 ? 80 : (int)t->n;
        if (no_hip) {
            snprintf(msg, sizeof msg, "%.*s has no HIP counterpart: %s", tn, t->s, a->note);
            snprintf(fix, sizeof fix, "replace %.*s (see the message); nothing to hipify it to",
                     tn, t->s);
        } else {
            snprintf(msg, sizeof msg, "%.*s: %s", tn, t->s, a->note);
            snprintf(fix, sizeof fix, "port the calls to %s by hand, not by renaming", a->hip);
        }
        port_emit(f, r, t, msg, fix);
    }
}

static void no_hip(struct port_file *f, const struct port_rule *r)
{
    api_rule(f, r, 1);
}

static void lib_differs(struct port_file *f, const struct port_rule *r)
{
    api_rule(f, r, 0);
}

static const struct port_rule rules[] = {
    {"sync-mask-32bit", "error", PORT_AMD, sync_mask_32bit,
     "a 32-bit mask passed to a *_sync warp function: HIP's version does not compile",
     "pass a 64-bit mask: __activemask() or a uint64_t / unsigned long long constant "
     "(~0ull for the whole wavefront)"},
    {"wave32-full-mask", "error", PORT_WAVE64, wave32_full_mask,
     "0xffffffff as the full mask leaves lanes 32-63 of a 64-lane wavefront out",
     "use __activemask(), or ~0ull when every lane takes part"},
    {"wave-ballot-32bit", "error", PORT_WAVE64, ballot_32bit,
     "the 64-bit ballot or active mask is cut to 32 bits: lanes 32-63 are lost",
     "keep it in a uint64_t (unsigned long long) and count with __popcll / __ffsll"},
    {"shfl-width-32", "warning", PORT_WAVE64, shfl_width_32,
     "shuffle width 32: on a 64-lane wavefront the shuffle stays within each half",
     "use warpSize as the width (the default), unless 32-lane segments are meant"},
    {"wave32-loop", "error", PORT_WAVE64, loop_32,
     "a shuffle loop that covers 32 lanes: on a 64-lane wavefront lanes 32-63 are left out",
     "run the loop from warpSize / 2 down (reductions) or up to warpSize (scans)"},
    {"wave-lane-id", "error", PORT_WAVE64, lane_id,
     "a lane or warp id computed for 32-lane warps (& 31, % 32, / 32, >> 5)",
     "use threadIdx.x % warpSize for the lane and threadIdx.x / warpSize for the warp "
     "(or __lane_id())"},
    {"wave-shared-32", "error", PORT_WAVE64, shared_32,
     "shared memory sized for 32-lane warps ([32] per warp or blockDim / 32 slots)",
     "size it by warpSize (a maximum of 64 lanes: [64], or blockDim.x / warpSize rounded up "
     "with a compile-time bound)"},
    {"wave-size-const", "error", PORT_WAVE64, size_const,
     "the warp size is fixed at 32, but a wavefront has 64 lanes on this target",
     "use warpSize (device code) or hipDeviceProp_t::warpSize / __AMDGCN_WAVEFRONT_SIZE "
     "(compile time) instead of the constant"},
    {"inline-ptx", "error", PORT_AMD, inline_ptx,
     "inline PTX assembly: AMD GPUs do not run PTX, hipcc rejects it",
     "replace it with the HIP intrinsic or plain C++ (e.g. __lane_id(), __builtin_amdgcn_*), "
     "or guard it with #ifdef __HIP_PLATFORM_NVIDIA__"},
    {"nanosleep", "warning", PORT_AMD, nanosleep_rule,
     "__nanosleep is a CUDA device function without a HIP counterpart",
     "use __builtin_amdgcn_s_sleep(n) (about 64 * n cycles) in a backoff loop"},
    {"cuda-no-hip", "error", PORT_AMD, no_hip, "", ""},
    {"cuda-lib-differs", "warning", PORT_AMD, lib_differs, "", ""},
};

const struct port_rule *port_rules_cuda(size_t *n)
{
    *n = sizeof rules / sizeof rules[0];
    return rules;
}
