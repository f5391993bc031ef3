/* The scalar reference for comparing outputs, and the run-time choice of
 * kernels. */
#include "kernels/cpu/compare.h"

#include <math.h>

#include "kernels/cpu/convert.h"

static void scalar_sum(struct amp_compare_sums *s, const float *low, const float *ref, int64_t n)
{
    double diff2 = 0, ref2 = 0, absmax = s->ref_absmax;
    uint64_t nonfinite = 0;
    for (int64_t i = 0; i < n; i++) {
        double r = ref[i], l = low[i];
        if (!isfinite(r))
            continue; /* the program's own product overflowed: not lowering's doing */
        if (!isfinite(l)) {
            nonfinite++;
            continue;
        }
        double d = l - r;
        diff2 += d * d;
        ref2 += r * r;
        absmax = fabs(r) > absmax ? fabs(r) : absmax;
    }
    s->diff2 += diff2;
    s->ref2 += ref2;
    s->ref_absmax = absmax;
    s->nonfinite += nonfinite;
    s->count += (uint64_t)n;
}

static double scalar_elem_max(const struct amp_compare_sums *s, const float *low, const float *ref,
                              int64_t n, double elem_max)
{
    double floor = s->ref_absmax * AMP_COMPARE_TINY;
    for (int64_t i = 0; i < n; i++) {
        double r = fabs((double)ref[i]);
        if (r > floor && isfinite(r) && isfinite((double)low[i])) {
            double e = fabs((double)low[i] - (double)ref[i]) / r;
            elem_max = e > elem_max ? e : elem_max;
        }
    }
    return elem_max;
}

const struct amp_compare_kernels amp_compare_scalar = {
    .name = "scalar", .sum = scalar_sum, .elem_max = scalar_elem_max};

const struct amp_compare_kernels *amp_compare(void)
{
    static const struct amp_compare_kernels *_Atomic chosen;
    const struct amp_compare_kernels *k = chosen;
    if (!k) {
        k = amp_compare_avx2 && amp_cpu_has_avx2_f16c() ? amp_compare_avx2 : &amp_compare_scalar;
        chosen = k;
    }
    return k;
}
