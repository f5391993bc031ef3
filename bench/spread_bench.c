/* What the spread check (shim/blas/blas_spread.h) costs a lowered product,
 * side by side in one run: per n x n x n sgemm, the check of both operands
 * (each operand's summed index whole, the
 * sample the hook reads: amp_spread_samples), the rounding pass the emulated
 * path makes over both anyway, and the real fp32 sgemm, in microseconds
 * (medians); the check's share of the sgemm's time. The operands are
 * random (the check reads them as a lowered call would: lowered); meson runs
 * it with OPENBLAS_NUM_THREADS=1, a core against a core.
 * usage: spread_bench */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "bench_util.h"

#include "shim/blas/blas_spread.h"

void cblas_sgemm(int, int, int, int, int, int, float, const float *, int, const float *, int, float,
                 float *, int);

int main(void)
{
    print_cpu();
    printf("Spread check of a lowered n x n x n sgemm's two operands, us per call (medians),\n"
           "beside the emulated path's rounding of both and the fp32 sgemm itself\n");
    printf("%6s %10s %10s %12s %10s %8s\n", "n", "check", "rounding", "fp32 sgemm", "check/sgemm",
           "loss");
    static const int sizes[] = {16, 96, 128, 256, 512, 1024, 2048};
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
        int n = sizes[s];
        size_t nn = (size_t)n * n;
        float *a = filled(nn, 1), *b = filled(nn, 2), *c = filled(nn, 3), *scratch = filled(nn, 4);
        if (!a || !b || !c || !scratch)
            return 1;
        struct amp_operand oa = {a, (int64_t)nn,  1, (int64_t)nn,
                                 n, AMP_TRI_FULL, 0, AMP_FREE_ACROSS};
        struct amp_operand ob = {b, (int64_t)nn,  1, (int64_t)nn,
                                 n, AMP_TRI_FULL, 0, AMP_FREE_WITHIN};
        enum { ROUNDS = 31 };
        double check[ROUNDS], round[ROUNDS], gemm[ROUNDS], loss = 0;
        int reps = n <= 128 ? 200 : n <= 512 ? 20 : 2;
        int64_t samples = amp_spread_samples(2.0 * n * n * n); /* as the hook reads them */
        for (int r = 0; r < ROUNDS; r++) {
            double t0 = now();
            for (int i = 0; i < reps; i++)
                loss += amp_operand_spread_loss(&oa, AMP_DTYPE_BF16, samples) +
                        amp_operand_spread_loss(&ob, AMP_DTYPE_BF16, samples);
            double t1 = now();
            for (int i = 0; i < reps; i++) {
                amp_operand_round(&oa, scratch, AMP_DTYPE_BF16);
                amp_operand_round(&ob, scratch, AMP_DTYPE_BF16);
            }
            double t2 = now();
            for (int i = 0; i < reps; i++)
                cblas_sgemm(101, 111, 111, n, n, n, 1.0f, a, n, b, n, 0.0f, c, n);
            double t3 = now();
            check[r] = (t1 - t0) / reps * 1e6;
            round[r] = (t2 - t1) / reps * 1e6;
            gemm[r] = (t3 - t2) / reps * 1e6;
        }
        double mc = median(check, ROUNDS), mr = median(round, ROUNDS), mg = median(gemm, ROUNDS);
        printf("%6d %10.2f %10.2f %12.1f %9.1f%% %8.4f\n", n, mc, mr, mg, 100 * mc / mg,
               loss / (2.0 * ROUNDS * reps));
        free(a);
        free(b);
        free(c);
        free(scratch);
    }
    return 0;
}
