/* Comparison kernels (kernels/cpu/compare.h): the AVX2 kernels against the
 * scalar reference on outputs of every length from 0 to 67 and of 100003
 * pairs, at every misalignment, clean and with Inf, NaN, tiny values and
 * zeros sprinkled in (in the lowered output, the fp32 one, or both): the
 * counts, the non-finite tally, the largest |fp32| and the largest
 * elementwise error exact, the two sums within 1e-12 of the reference's;
 * and the reference against numbers worked by hand. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/cpu/compare.h"
#include "kernels/cpu/convert.h"
#include "tests/check.h"

static uint64_t state = 0x9e3779b97f4a7c15ull;

static double uniform(void)
{
    state ^= state << 13, state ^= state >> 7, state ^= state << 17;
    return (double)(state >> 11) * 0x1p-53;
}

/* A pair of outputs: fp32 values of mixed sizes and a lowered copy off by
 * up to 2^-8; with `odd`, one pair in 16 holds a special value. */
static void fill(float *low, float *ref, int64_t n, int odd)
{
    static const float special[] = {INFINITY, -INFINITY, NAN, 0.0f, 1e-30f, -0.0f};
    for (int64_t i = 0; i < n; i++) {
        ref[i] = (float)((uniform() - 0.3) * pow(10.0, (int)(uniform() * 6) - 3));
        low[i] = ref[i] * (float)(1 + (uniform() - 0.5) * 0x1p-7);
        if (odd && uniform() < 1.0 / 16) {
            float v = special[(int)(uniform() * 6)];
            int where = (int)(uniform() * 3);
            if (where != 1)
                low[i] = v;
            if (where != 0)
                ref[i] = v;
        }
    }
}

static int close_to(double a, double b)
{
    return a == b || fabs(a - b) <= 1e-12 * fabs(b);
}

static void agree(const struct amp_compare_kernels *k, const float *low, const float *ref,
                  int64_t n, const char *what)
{
    struct amp_compare_sums want = {0.5, 2, 0.25, 1, 3}, got = want; /* accumulates */
    amp_compare_scalar.sum(&want, low, ref, n);
    k->sum(&got, low, ref, n);
    CHECK(got.count == want.count && got.nonfinite == want.nonfinite &&
              got.ref_absmax == want.ref_absmax,
          "%s n=%lld: count %llu/%llu nonfinite %llu/%llu absmax %g/%g", what, (long long)n,
          (unsigned long long)got.count, (unsigned long long)want.count,
          (unsigned long long)got.nonfinite, (unsigned long long)want.nonfinite, got.ref_absmax,
          want.ref_absmax);
    CHECK(close_to(got.diff2, want.diff2) && close_to(got.ref2, want.ref2),
          "%s n=%lld: diff2 %.17g/%.17g ref2 %.17g/%.17g", what, (long long)n, got.diff2,
          want.diff2, got.ref2, want.ref2);
    for (int start = 0; start < 2; start++) {
        double from = start ? 1e9 : -1; /* none larger, and "not measured" kept */
        double e = k->elem_max(&want, low, ref, n, from),
               w = amp_compare_scalar.elem_max(&want, low, ref, n, from);
        CHECK(e == w, "%s n=%lld from %g: elem_max %.17g, reference %.17g", what, (long long)n,
              from, e, w);
    }
}

int main(void)
{
    /* the reference by hand: |1.5-1|^2 + |2-2|^2 = 0.25; |1|^2 + |2|^2 = 5;
     * Inf lowered where fp32 is 3 is counted; fp32's NaN is skipped */
    float low[] = {1.5f, 2, INFINITY, 7}, ref[] = {1, 2, 3, NAN};
    struct amp_compare_sums s = {0};
    amp_compare_scalar.sum(&s, low, ref, 4);
    CHECK(s.diff2 == 0.25 && s.ref2 == 5 && s.ref_absmax == 2 && s.nonfinite == 1 && s.count == 4,
          "reference sums: %g %g %g %llu %llu", s.diff2, s.ref2, s.ref_absmax,
          (unsigned long long)s.nonfinite, (unsigned long long)s.count);
    CHECK(amp_compare_scalar.elem_max(&s, low, ref, 4, 0) == 0.5, "reference elem_max");

    const struct amp_compare_kernels *k = amp_compare_avx2;
    if (!k || !amp_cpu_has_avx2_f16c()) {
        printf("test_compare: no AVX2 kernels here; the reference only\n");
    } else {
        enum { BIG = 100003 };
        float *a = malloc((BIG + 8) * sizeof *a), *b = malloc((BIG + 8) * sizeof *b);
        if (!a || !b)
            return 1;
        for (int odd = 0; odd < 2; odd++) {
            const char *what = odd ? "with specials" : "clean";
            for (int64_t n = 0; n < 68; n++)
                for (int shift = 0; shift < 8; shift++) {
                    fill(a + shift, b + shift, n, odd);
                    agree(k, a + shift, b + shift, n, what);
                }
            fill(a + 3, b + 5, BIG, odd);
            agree(k, a + 3, b + 5, BIG, what);
        }
        /* an fp32 value exactly at the tiny floor (4 * 2^-12) is left out,
         * one just above it is not */
        for (int above = 0; above < 2; above++) {
            float lo[16], re[16];
            for (int i = 0; i < 16; i++)
                lo[i] = re[i] = 4;
            re[9] = above ? nextafterf(0x1p-10f, 1) : 0x1p-10f;
            lo[9] = 2 * re[9];
            agree(k, lo, re, 16, above ? "just above the floor" : "at the floor");
        }
        free(a);
        free(b);
    }
    CHECK(amp_compare() == (k && amp_cpu_has_avx2_f16c() ? k : &amp_compare_scalar),
          "amp_compare chose %s", amp_compare()->name);
    printf("test_compare: %d passed, %d failed\n", checks - failures, (int)failures);
    return failures ? 1 : 0;
}
