/* The spread check (blas_spread.h): a sample of each multiplicand, its
 * rounding error against its spread. */
#include "shim/blas/blas_spread.h"

#include <fenv.h>
#include <math.h>
#if defined(__x86_64__)
#include <immintrin.h>
#endif
#include <stdatomic.h>

#include "runtime/log.h"

/* Independent sums, so the loops below need not wait on one add per
 * sample (and can use vector lanes): the check costs a few microseconds,
 * not tens (bench/spread_bench). */
#define LANES 8

/* Sums of one group, or of one lane of it. */
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

/* The grid's first value that is not a hole at or after g[0], `step` apart,
 * `count` of them; NaN when there is none. */
static float first_value(const float *g, int64_t count, int64_t step)
{
    for (int64_t j = 0; j < count; j++)
        if (g[j * step] == g[j * step])
            return g[j * step];
    return NAN;
}

/* The sample's pooled variance within each of its r_n lines (s_n places
 * each). A line is shifted by its first value, so single precision keeps
 * its spread however far from the origin it lies; NaN marks a hole (a place
 * the routine does not read, or a value left out). -1 when no line has two
 * values or none varies. */
static double within_lines(const float *g, int64_t r_n, int64_t s_n)
{
    struct sums all = {0, 0, 0};
    for (int64_t r = 0; r < r_n; r++) {
        const float *p = g + r * s_n;
        float ref = first_value(p, s_n, 1);
        float n[LANES] = {0}, sum[LANES] = {0}, q[LANES] = {0};
        int64_t j = 0;
        for (; j + LANES <= s_n; j += LANES)
            for (int l = 0; l < LANES; l++) {
                float x = p[j + l];
                int ok = x == x;
                float d = ok ? x - ref : 0.0f;
                n[l] += ok ? 1.0f : 0.0f;
                sum[l] += d;
                q[l] += d * d;
            }
        for (; j < s_n; j++) {
            float x = p[j];
            int ok = x == x;
            float d = ok ? x - ref : 0.0f;
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
        pool(&all, nn, ss, qq);
    }
    return pooled_variance(&all);
}

/* The same within each of its s_n columns (across the lines), summed a
 * line at a time so each column is one lane. */
static double across_lines(const float *g, int64_t r_n, int64_t s_n)
{
    float ref[AMP_SPREAD_SAMPLES / 2], n[AMP_SPREAD_SAMPLES / 2], sum[AMP_SPREAD_SAMPLES / 2],
        q[AMP_SPREAD_SAMPLES / 2];
    if (r_n < 2 || s_n > AMP_SPREAD_SAMPLES / 2)
        return -1; /* one line: no column has two values */
    for (int64_t c = 0; c < s_n; c++) {
        ref[c] = first_value(g + c, r_n, s_n);
        n[c] = sum[c] = q[c] = 0;
    }
    for (int64_t r = 0; r < r_n; r++) {
        const float *p = g + r * s_n;
        for (int64_t c = 0; c < s_n; c++) {
            float x = p[c];
            int ok = x == x;
            float d = ok ? x - ref[c] : 0.0f;
            n[c] += ok ? 1.0f : 0.0f;
            sum[c] += d;
            q[c] += d * d;
        }
    }
    struct sums all = {0, 0, 0};
    for (int64_t c = 0; c < s_n; c++)
        pool(&all, n[c], sum[c], q[c]);
    return pooled_variance(&all);
}

static double spread_loss(const struct amp_operand *o, enum amp_lowp_dtype dtype);

double amp_operand_spread_loss(const struct amp_operand *o, enum amp_lowp_dtype dtype)
{
    /* The program's floating-point exception flags as they were: F16C's
     * conversion raises overflow and inexact on values past fp16's range,
     * and a Fortran program reports such flags at exit. Only SSE
     * arithmetic runs here, so on x86-64 its control word is all there is
     * to keep (fesetexceptflag, which rewrites the x87 environment too,
     * would cost more than the check). */
#if defined(__x86_64__)
    unsigned csr = _mm_getcsr();
    double loss = spread_loss(o, dtype);
    _mm_setcsr(csr);
#else
    fexcept_t flags;
    int saved = fegetexceptflag(&flags, FE_ALL_EXCEPT) == 0;
    double loss = spread_loss(o, dtype);
    if (saved)
        fesetexceptflag(&flags, FE_ALL_EXCEPT);
#endif
    return loss;
}

static double spread_loss(const struct amp_operand *o, enum amp_lowp_dtype dtype)
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
    int64_t per_line = lines >= AMP_SPREAD_GRID ? AMP_SPREAD_GRID : AMP_SPREAD_SAMPLES / lines;
    int64_t s_n = len < per_line ? len : per_line;
    int64_t r_n = lines < AMP_SPREAD_SAMPLES / s_n ? lines : AMP_SPREAD_SAMPLES / s_n;
    float g[AMP_SPREAD_SAMPLES + LANES], rounded[AMP_SPREAD_SAMPLES + LANES];
    /* Evenly spaced places, found once (a division per sample would cost
     * more than the rest of the check). */
    int64_t at[AMP_SPREAD_SAMPLES];
    double step = (double)len / (double)s_n, line_step = (double)lines / (double)r_n;
    for (int64_t s = 0; s < s_n; s++)
        at[s] = (int64_t)((double)s * step);
    for (int64_t r = 0; r < r_n; r++) {
        int64_t line = (int64_t)((double)r * line_step), lo = 0, hi = len;
        if (!merged && !amp_operand_line(o, line, &lo, &hi))
            lo = hi = 0;
        const float *p = o->p + line * ld;
        float *row = g + r * s_n;
        for (int64_t s = 0; s < s_n; s++)
            row[s] = at[s] >= lo && at[s] < hi ? p[at[s]] : NAN;
    }
    int64_t n = r_n * s_n;
    amp_convert()->round[dtype](g, rounded, (size_t)n);
    /* The rounding error, over the values below 2^56 whose rounding is too
     * (not Inf or NaN; fp16's overflow is a question of range, not of this
     * check); the others become holes. The bound keeps every square and sum
     * below single precision's range; isless is a quiet comparison. */
    float e2[LANES] = {0}, counted[LANES] = {0};
    for (int64_t i = 0; i < n; i += LANES) {
        if (i + LANES > n) { /* the last few: the grid is padded with holes */
            for (int64_t k = n; k < i + LANES; k++)
                g[k] = rounded[k] = NAN;
        }
        for (int l = 0; l < LANES; l++) {
            float x = g[i + l], r = rounded[i + l];
            int ok = isless(fabsf(x), 0x1p56f) && isless(fabsf(r), 0x1p56f);
            float e = ok ? x - r : 0.0f;
            g[i + l] = ok ? x : NAN;
            e2[l] += e * e;
            counted[l] += ok ? 1.0f : 0.0f;
        }
    }
    double e2_all = 0, count = 0;
    for (int l = 0; l < LANES; l++) {
        e2_all += e2[l];
        count += counted[l];
    }
    if (!(e2_all > 0))
        return 0;
    double within = o->free_dir != AMP_FREE_ACROSS ? within_lines(g, r_n, s_n) : -1;
    double across = o->free_dir != AMP_FREE_WITHIN ? across_lines(g, r_n, s_n) : -1;
    double v = within < 0 ? across : across < 0 ? within : within < across ? within : across;
    return v > 0 ? sqrt(e2_all / count / v) : 0;
}

int amp_blas_spread_keeps(struct amp_blas_call *c)
{
    double limit = amp_rt.cfg.spread_loss;
    if (!(limit > 0) || c->explicit_request)
        return 0;
    double worst = 0;
    for (int i = 0; i < c->n_in; i++) {
        double loss = amp_operand_spread_loss(&c->in[i], c->dtype);
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
