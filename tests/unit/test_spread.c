/* The spread check's statistic (shim/blas/blas_spread.h) on operands laid
 * out as the planners lay them: the share of an operand's spread rounding
 * erases, near its model value for centred data, data far from the origin,
 * features at different offsets in either layout, constant lines, a strided
 * vector, a triangle with garbage outside it, and fp16. */
#include <fenv.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "shim/blas/blas_spread.h"
#include "tests/check.h"

static uint64_t state = 0x9e3779b97f4a7c15ull;

static double uniform(void)
{
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return ((double)(state >> 11) + 0.5) / 9007199254740992.0;
}

static double normal(void)
{
    return sqrt(-2 * log(uniform())) * cos(6.283185307179586 * uniform());
}

/* A rows x cols matrix stored row by row, as set_matrix lays out a
 * contiguous one: a single line that remembers its rows. */
static struct amp_operand contiguous(float *p, int64_t rows, int64_t cols)
{
    return (struct amp_operand){p,    rows * cols,  1, rows * cols,
                                cols, AMP_TRI_FULL, 0, AMP_FREE_EITHER};
}

static double loss_along(float *p, int64_t rows, int64_t cols, enum amp_lowp_dtype dtype,
                         enum amp_free_dir dir)
{
    struct amp_operand o = contiguous(p, rows, cols);
    o.free_dir = (uint8_t)dir;
    return amp_operand_spread_loss(&o, dtype, AMP_SPREAD_BUDGET);
}

static double loss_of(float *p, int64_t rows, int64_t cols, enum amp_lowp_dtype dtype)
{
    return loss_along(p, rows, cols, dtype, AMP_FREE_EITHER);
}

int main(void)
{
    enum { R = 2048, C = 64 };
    float *a = malloc(sizeof(float) * R * C), *t = malloc(sizeof(float) * R * C);
    double offsets[C];
    if (!a || !t)
        return 1;

    for (int i = 0; i < R * C; i++)
        a[i] = (float)normal();
    double centred = loss_of(a, R, C, AMP_DTYPE_BF16);
    CHECK(centred > 0.001 && centred < 0.003, "centred normal data: %.4g (about 0.0017)", centred);

    /* The same values around 100: bf16's spacing there is 0.5, an rms
     * error of 0.144 against a spread of 1. */
    for (int i = 0; i < R * C; i++)
        t[i] = a[i] + 100.0f;
    double far = loss_of(t, R, C, AMP_DTYPE_BF16);
    CHECK(far > 0.11 && far < 0.18, "around 100: %.4g (about 0.144)", far);
    CHECK(far > AMP_SPREAD_LOSS_DEFAULT, "kept as made at the default");
    double far16 = loss_of(t, R, C, AMP_DTYPE_FP16);
    CHECK(far16 > 0.012 && far16 < 0.024, "around 100 in fp16 (spacing 1/16): %.4g", far16);
    for (int i = 0; i < R * C; i++)
        t[i] = a[i] + 4.0f;
    double near = loss_of(t, R, C, AMP_DTYPE_BF16);
    CHECK(near < AMP_SPREAD_LOSS_DEFAULT, "around 4: %.4g, lowered at the default", near);
    for (int i = 0; i < R * C; i++)
        t[i] = a[i] + 12.0f;
    double twelve = loss_of(t, R, C, AMP_DTYPE_BF16);
    CHECK(twelve > AMP_SPREAD_LOSS_DEFAULT, "around 12: %.4g, kept at the default", twelve);

    /* Features at offsets from 0 to 1000, each with a spread of 1: the
     * whole matrix varies by hundreds, each feature loses most of its
     * spread. Row by row and column by column. */
    for (int j = 0; j < C; j++)
        offsets[j] = 1000.0 * uniform();
    for (int i = 0; i < R; i++)
        for (int j = 0; j < C; j++) {
            t[i * C + j] = (float)(offsets[j] + normal());
            a[j * R + i] = t[i * C + j]; /* the same matrix stored by columns */
        }
    double rows_first = loss_along(t, R, C, AMP_DTYPE_BF16, AMP_FREE_ACROSS);
    double cols_first = loss_along(a, C, R, AMP_DTYPE_BF16, AMP_FREE_WITHIN);
    CHECK(rows_first > 0.3, "features at different offsets, stored by rows: %.4g", rows_first);
    CHECK(cols_first > 0.3, "... stored by columns: %.4g", cols_first);
    CHECK(loss_of(t, R, C, AMP_DTYPE_BF16) > 0.3 && loss_of(a, C, R, AMP_DTYPE_BF16) > 0.3,
          "... and either way for an operand without a free index");

    /* One feature far from the origin (a year: 2024 +- 3, bf16's spacing
     * there is 8) among 256 centred ones, at every position, in either
     * layout, read with the sample a k-means assignment of 2048 points to
     * 16 centres reads (amp_spread_samples): every summed index is seen, so
     * the one feature is found wherever it lies. */
    {
        enum { P = 2048, F = 256 };
        float *rows = malloc(sizeof(float) * P * F), *colsm = malloc(sizeof(float) * P * F);
        int64_t samples = amp_spread_samples(2.0 * P * F * 16);
        int missed_rows = 0, missed_cols = 0;
        double least = 1e30;
        for (int far = 0; rows && colsm && far < F; far++) {
            for (int i = 0; i < P; i++)
                for (int j = 0; j < F; j++) {
                    float v = j == far ? (float)(2024 + (int)(7 * uniform()) - 3) : (float)normal();
                    rows[i * F + j] = v;
                    colsm[j * P + i] = v;
                }
            struct amp_operand by_rows = contiguous(rows, P, F), by_cols = contiguous(colsm, F, P);
            by_rows.free_dir = AMP_FREE_ACROSS;
            by_cols.free_dir = AMP_FREE_WITHIN;
            double lr = amp_operand_spread_loss(&by_rows, AMP_DTYPE_BF16, samples);
            double lc = amp_operand_spread_loss(&by_cols, AMP_DTYPE_BF16, samples);
            missed_rows += !(lr > AMP_SPREAD_LOSS_DEFAULT);
            missed_cols += !(lc > AMP_SPREAD_LOSS_DEFAULT);
            least = lr < least ? lr : least;
            least = lc < least ? lc : least;
        }
        CHECK(rows && colsm && missed_rows == 0 && missed_cols == 0,
              "one far feature among 256, at each of its 256 places: missed %d by rows, %d by "
              "columns (least loss %.3g, %lld samples)",
              missed_rows, missed_cols, least, (long long)samples);
        /* The same 256 features all centred: lowered. */
        for (int i = 0; rows && i < P * F; i++)
            rows[i] = (float)normal();
        struct amp_operand centred_rows = contiguous(rows, P, F);
        centred_rows.free_dir = AMP_FREE_ACROSS;
        double c256 = rows ? amp_operand_spread_loss(&centred_rows, AMP_DTYPE_BF16, samples) : 1;
        CHECK(c256 < AMP_SPREAD_LOSS_DEFAULT, "256 centred features: %.3g, lowered", c256);
        free(rows);
        free(colsm);
    }

    /* Lines at offsets from 10 to 30, each with a spread of 0.1 along it:
     * what matters is the free index's spread, large from line to line and
     * small along each. */
    for (int i = 0; i < R; i++) {
        double line = 10.0 + 20.0 * uniform();
        for (int j = 0; j < C; j++)
            t[i * C + j] = (float)(line + 0.1 * normal());
    }
    double across = loss_along(t, R, C, AMP_DTYPE_BF16, AMP_FREE_ACROSS);
    double along = loss_along(t, R, C, AMP_DTYPE_BF16, AMP_FREE_WITHIN);
    CHECK(across < 0.008, "the free index from line to line: %.4g", across);
    CHECK(along > 0.1, "the free index along each line: %.4g", along);

    /* Lines of one value each, the values 100 + 0.37 i: no spread along a
     * line, a spread of about 220 across them: nothing to lose. */
    for (int i = 0; i < R; i++)
        for (int j = 0; j < C; j++)
            t[i * C + j] = 100.0f + 0.37f * (float)i;
    double constant_lines = loss_of(t, R, C, AMP_DTYPE_BF16);
    CHECK(constant_lines < 0.005, "constant lines: %.4g", constant_lines);
    for (int i = 0; i < R * C; i++)
        t[i] = 0.1f;
    CHECK(loss_of(t, R, C, AMP_DTYPE_BF16) == 0, "one value, not representable: nothing to lose");
    for (int i = 0; i < R * C; i++)
        t[i] = (float)(int)(256 * uniform());
    CHECK(loss_of(t, R, C, AMP_DTYPE_BF16) == 0, "whole numbers below 256 are exact in bf16");

    /* A vector with stride 3 around 100. */
    for (int i = 0; i < 3 * 4000; i++)
        t[i] = (float)(100.0 + normal());
    struct amp_operand v = {t, 1, 4000, 3, 1, AMP_TRI_FULL, 0, AMP_FREE_EITHER};
    double strided = amp_operand_spread_loss(&v, AMP_DTYPE_BF16, AMP_SPREAD_BUDGET);
    CHECK(strided > 0.11 && strided < 0.18, "a strided vector around 100: %.4g", strided);

    /* An upper triangle (column major: inner index <= line index) of centred
     * values, with far-off garbage and NaN below it that the routine never
     * reads. */
    enum { N = 300 };
    for (int line = 0; line < N; line++)
        for (int i = 0; i < N; i++)
            t[line * N + i] = i <= line ? (float)normal() : (i % 7 ? 1e6f + (float)i : NAN);
    struct amp_operand tri = {t, N, N, N, N, AMP_TRI_LE, 0, AMP_FREE_EITHER};
    double triangle = amp_operand_spread_loss(&tri, AMP_DTYPE_BF16, AMP_SPREAD_BUDGET);
    CHECK(triangle < 0.003, "only the triangle the routine reads: %.4g", triangle);

    /* Inf and NaN among centred values are left out. */
    for (int i = 0; i < R * C; i++)
        t[i] = i % 97 == 0 ? INFINITY : i % 89 == 0 ? NAN : (float)normal();
    double with_nonfinite = loss_of(t, R, C, AMP_DTYPE_BF16);
    CHECK(with_nonfinite > 0.001 && with_nonfinite < 0.003, "non-finite values left out: %.4g",
          with_nonfinite);

    /* No floating-point exception flag raised, whatever the data: holes,
     * NaN, Inf, values past fp16's range and near single precision's. */
    for (int i = 0; i < R * C; i++)
        t[i] = i % 5 == 0 ? NAN : i % 7 == 0 ? -INFINITY : i % 3 == 0 ? 3e38f : (float)normal();
    feclearexcept(FE_ALL_EXCEPT);
    double wild = loss_of(t, R, C, AMP_DTYPE_BF16) + loss_of(t, R, C, AMP_DTYPE_FP16) +
                  amp_operand_spread_loss(&tri, AMP_DTYPE_BF16, AMP_SPREAD_BUDGET);
    CHECK(!fetestexcept(FE_ALL_EXCEPT), "no exception flag raised (%g)", wild);
    feraiseexcept(FE_DIVBYZERO);
    loss_of(t, R, C, AMP_DTYPE_FP16);
    CHECK(fetestexcept(FE_ALL_EXCEPT) == FE_DIVBYZERO, "the program's own flag kept");

    free(a);
    free(t);
    printf("test_spread: %d passed, %d failed\n", checks - failures, (int)failures);
    return failures ? 1 : 0;
}
