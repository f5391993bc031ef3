/* The spread check (blas_spread.h): a sample of each multiplicand, its
 * rounding error against its spread. */
#include "shim/blas/blas_spread.h"

#include <fenv.h>
#include <math.h>
#if defined(__x86_64__)
#include <immintrin.h>
#endif
#include <stdatomic.h>
#include <stdint.h>

#include "runtime/log.h"

/* The loops below compare and choose values that may be NaN (the holes);
 * with trapping math GCC keeps each choice a branch and vectorizes none of
 * them. No flag this file raises reaches the program: the entry point puts
 * the control word back (amp_operand_spread_loss). */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("no-trapping-math")
#endif

/* Independent sums, so the loops below need not wait on one add per
 * sample (and can use vector lanes): the check costs a few microseconds,
 * not tens (bench/spread_bench). */
#define LANES 8

/* Sums of one group. */
struct sums {
    double n, s, q;
};

/* Adds a group's sums to the pool. */
static void pool(struct sums *all, double n, double s, double q)
{
    if (n >= 2) {
        double w = q - s * s / n;
        all->q += w > 0 ? w : 0;
        all->n += n;
    }
}

static double pooled_variance(const struct sums *all)
{
    return all->n > 0 && all->q > 0 ? all->q / all->n : -1;
}

/* One sampled line's variance sums, shifted by its first value (single
 * precision keeps the spread however far from the origin it lies); NaN
 * marks a hole. Independent lanes, so the loop need not wait on one add per
 * sample. */
static void line_sums(const float *x, int64_t s_n, struct sums *within)
{
    float ref = NAN;
    for (int64_t j = 0; j < s_n && ref != ref; j++)
        ref = x[j];
    if (s_n <= 2 * LANES) { /* a short line: no lanes to add up after */
        float n = 0, sum = 0, q = 0;
        for (int64_t j = 0; j < s_n; j++) {
            float v = x[j], d = v - ref;
            d = v == v ? d : 0.0f;
            n += v == v ? 1.0f : 0.0f;
            sum += d;
            q += d * d;
        }
        pool(within, n, sum, q);
        return;
    }
    float n[LANES] = {0}, sum[LANES] = {0}, q[LANES] = {0};
    int64_t j = 0;
    for (; j + LANES <= s_n; j += LANES)
        for (int l = 0; l < LANES; l++) {
            float v = x[j + l];
            int ok = v == v;
            float d = v - ref;
            d = ok ? d : 0.0f;
            n[l] += ok ? 1.0f : 0.0f;
            sum[l] += d;
            q[l] += d * d;
        }
    for (; j < s_n; j++) {
        float v = x[j];
        int ok = v == v;
        float d = v - ref;
        d = ok ? d : 0.0f;
        n[0] += ok ? 1.0f : 0.0f;
        sum[0] += d;
        q[0] += d * d;
    }
    double nn = 0, ss = 0, qq = 0;
    for (int l = 0; l < LANES; l++) {
        nn += n[l];
        ss += sum[l];
        qq += q[l];
    }
    pool(within, nn, ss, qq);
}

/* Per place (column) sums across the sampled lines, one lane per place. */
struct columns {
    float ref[AMP_SPREAD_LINE_MAX], n[AMP_SPREAD_LINE_MAX], sum[AMP_SPREAD_LINE_MAX],
        q[AMP_SPREAD_LINE_MAX];
};

static void columns_add(struct columns *c, const float *restrict x, int64_t s_n, int first)
{
    float *restrict ref = c->ref, *restrict n = c->n, *restrict sum = c->sum, *restrict q = c->q;
    if (first)
        for (int64_t j = 0; j < s_n; j++)
            ref[j] = x[j], n[j] = sum[j] = q[j] = 0;
    for (int64_t j = 0; j < s_n; j++) {
        float v = x[j], r = ref[j] == ref[j] ? ref[j] : v; /* a column's first value: its shift */
        int ok = v == v;
        float d = v - r; /* computed always and then chosen, so the loop vectorizes */
        d = ok ? d : 0.0f;
        ref[j] = r;
        n[j] += ok ? 1.0f : 0.0f;
        sum[j] += d;
        q[j] += d * d;
    }
}

static double spread_loss(const struct amp_operand *o, enum amp_lowp_dtype dtype, int64_t samples);

double amp_operand_spread_loss(const struct amp_operand *o, enum amp_lowp_dtype dtype,
                               int64_t samples)
{
    /* The program's floating-point exception flags as they were: F16C's
     * conversion raises overflow and inexact on values past fp16's range,
     * and a Fortran program reports such flags at exit. Only SSE
     * arithmetic runs here, so on x86-64 its control word is all there is
     * to keep (fesetexceptflag, which rewrites the x87 environment too,
     * would cost more than the check). */
#if defined(__x86_64__)
    unsigned csr = _mm_getcsr();
    double loss = spread_loss(o, dtype, samples);
    _mm_setcsr(csr);
#else
    fexcept_t flags;
    int saved = fegetexceptflag(&flags, FE_ALL_EXCEPT) == 0;
    double loss = spread_loss(o, dtype, samples);
    if (saved)
        fesetexceptflag(&flags, FE_ALL_EXCEPT);
#endif
    return loss;
}

static double spread_loss(const struct amp_operand *o, enum amp_lowp_dtype dtype, int64_t samples)
{
    int64_t lines = o->outer, len = o->inner, ld = o->ld;
    int merged = lines == 1 && o->line_len > 0 && o->line_len < len;
    if (merged) { /* a contiguous matrix: its stored lines again */
        lines = len / o->line_len;
        len = o->line_len;
        ld = len;
    }
    if (lines <= 0 || len <= 0)
        return 0;
    /* The sample: r_n lines, s_n places in each. The summed index is seen
     * whole up to AMP_SPREAD_LINE_MAX (every place of a line whose free index
     * runs across lines, every line of one whose free index runs along
     * them), `samples` in all but at least AMP_SPREAD_EACH along the free
     * index for each; an operand without a free index keeps a square-ish grid. */
    samples = samples < AMP_SPREAD_SAMPLES  ? AMP_SPREAD_SAMPLES
              : samples > AMP_SPREAD_BUDGET ? AMP_SPREAD_BUDGET
                                            : samples;
    int64_t r_n, s_n;
    if (o->free_dir == AMP_FREE_ACROSS) {
        s_n = len < AMP_SPREAD_LINE_MAX ? len : AMP_SPREAD_LINE_MAX;
        r_n = samples / s_n > AMP_SPREAD_EACH ? samples / s_n : AMP_SPREAD_EACH;
    } else if (o->free_dir == AMP_FREE_WITHIN) {
        r_n = lines < AMP_SPREAD_LINE_MAX ? lines : AMP_SPREAD_LINE_MAX;
        s_n = samples / r_n > AMP_SPREAD_EACH ? samples / r_n : AMP_SPREAD_EACH;
    } else {
        int64_t per_line = lines >= AMP_SPREAD_GRID ? AMP_SPREAD_GRID : AMP_SPREAD_SAMPLES / lines;
        s_n = per_line;
        r_n = AMP_SPREAD_SAMPLES / (len < per_line ? len : per_line);
    }
    s_n = s_n < len ? s_n : len;
    s_n = s_n < AMP_SPREAD_LINE_MAX ? s_n : AMP_SPREAD_LINE_MAX;
    r_n = r_n < lines ? r_n : lines;
    int want_within = o->free_dir != AMP_FREE_ACROSS, want_across = o->free_dir != AMP_FREE_WITHIN;
    want_across &= r_n >= 2; /* one line: no column has two values */
    /* Evenly spaced places, found once (a division per sample would cost
     * more than the rest of the check). */
    int32_t at[AMP_SPREAD_LINE_MAX];
    double step = (double)len / (double)s_n, line_step = (double)lines / (double)r_n;
    for (int64_t s = 0; s < s_n; s++)
        at[s] = (int32_t)((double)s * step);
    if (len > INT32_MAX) /* places past 2^31: a rarer layout, sampled from its start */
        for (int64_t s = 0; s < s_n; s++)
            at[s] = (int32_t)s;
    float x[AMP_SPREAD_LINE_MAX + LANES], rounded[AMP_SPREAD_LINE_MAX + LANES];
    /* About 28 KiB of stack in all: no allocation on a hook's path. */
    struct columns cols_on_stack, *cols = &cols_on_stack;
    float e2[LANES] = {0}, counted[LANES] = {0};
    struct sums within = {0, 0, 0};
    /* Lines are read a chunk at a time (up to AMP_SPREAD_LINE_MAX values),
     * so short lines share one rounding call and one pass of the loops. */
    int64_t per_chunk = AMP_SPREAD_LINE_MAX / s_n;
    for (int64_t r0 = 0; r0 < r_n; r0 += per_chunk) {
        int64_t here = per_chunk < r_n - r0 ? per_chunk : r_n - r0, n = here * s_n;
        for (int64_t r = 0; r < here; r++) {
            int64_t line = (int64_t)((double)(r0 + r) * line_step), lo = 0, hi = len;
            if (!merged && !amp_operand_line(o, line, &lo, &hi))
                lo = hi = 0;
            const float *p = o->p + line * ld;
            float *row = x + r * s_n;
            for (int64_t k = 0; k < s_n; k++)
                row[k] = at[k] >= lo && at[k] < hi ? p[at[k]] : NAN;
        }
        amp_convert()->round[dtype](x, rounded, (size_t)n);
        int64_t padded = (n + LANES - 1) / LANES * LANES;
        for (int64_t k = n; k < padded; k++)
            x[k] = rounded[k] = NAN;
        /* The rounding error, over the values below 2^56 whose rounding is
         * too (not Inf or NaN; fp16's overflow is a question of range, not
         * of this check); the others become holes. The bound keeps every
         * square and sum below single precision's range; isless is a quiet
         * comparison. */
        for (int64_t k = 0; k < padded; k += LANES)
            for (int l = 0; l < LANES; l++) {
                float v = x[k + l], w = rounded[k + l];
                int ok = isless(fabsf(v), 0x1p56f) & isless(fabsf(w), 0x1p56f);
                float e = v - w;
                e = ok ? e : 0.0f;
                x[k + l] = ok ? v : NAN;
                e2[l] += e * e;
                counted[l] += ok ? 1.0f : 0.0f;
            }
        for (int64_t r = 0; r < here; r++) {
            if (want_within)
                line_sums(x + r * s_n, s_n, &within);
            if (want_across)
                columns_add(cols, x + r * s_n, s_n, r0 + r == 0);
        }
    }
    double e2_all = 0, count = 0;
    for (int l = 0; l < LANES; l++) {
        e2_all += e2[l];
        count += counted[l];
    }
    if (!(e2_all > 0))
        return 0;
    double w = want_within ? pooled_variance(&within) : -1, a = -1;
    if (want_across) {
        struct sums all = {0, 0, 0};
        for (int64_t c = 0; c < s_n; c++)
            pool(&all, cols->n[c], cols->sum[c], cols->q[c]);
        a = pooled_variance(&all);
    }
    double v = w < 0 ? a : a < 0 ? w : w < a ? w : a;
    return v > 0 ? sqrt(e2_all / count / v) : 0;
}

int amp_blas_spread_keeps(struct amp_blas_call *c)
{
    double limit = amp_rt.cfg.spread_loss;
    if (!(limit > 0) || c->explicit_request)
        return 0;
    double worst = 0;
    int64_t samples = amp_spread_samples(c->flops);
    for (int i = 0; i < c->n_in; i++) {
        double loss = amp_operand_spread_loss(&c->in[i], c->dtype, samples);
        worst = loss > worst ? loss : worst;
    }
    if (!(worst > limit))
        return 0;
    c->outcome = AMP_OUTCOME_SPREAD;
    static _Atomic uint8_t said[AMP_HOOK_COUNT];
    if (!atomic_exchange_explicit(&said[c->hook], 1, memory_order_relaxed))
        amp_log(AMP_LOG_INFO,
                "%s: rounding an operand to %s would erase %.3g of its spread (its values lie far "
                "from the origin for how much they vary; AMPSHIM_SPREAD_LOSS is %g): such calls "
                "run as made in fp32, counted spread",
                amp_hook_names[c->hook], amp_dtype_names[c->dtype], worst, limit);
    if (amp_unlikely(amp_live_load(&amp_rt.cfg.audit)))
        amp_audit_note_spread(c->site, c->dtype, c->shape, worst);
    return 1;
}
