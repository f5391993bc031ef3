/* Comparing a lowered output with the fp32 one, element by element: the
 * sums behind the audit's relative error and its largest elementwise error
 * (each wing's audit: shim/blas/blas_audit.c, shim/onednn/primitive_audit.c,
 * shim/cublas/cublas_audit.c). A scalar reference and AVX2 kernels chosen at
 * run time. The AVX2 sums add in independent chains, so their last bits
 * differ from the reference's; the largest values, the counts and the
 * non-finite tally are exact (tests/unit/test_compare.c). */
#ifndef AMPSHIM_COMPARE_H
#define AMPSHIM_COMPARE_H

#include <math.h>
#include <stdint.h>

/* Sums over an output, fed element by element or by whole lines. */
struct amp_compare_sums {
    double diff2, ref2, ref_absmax;
    uint64_t nonfinite, count;
};

/* An element is "tiny" for the elementwise error when it is this far below
 * the output's largest magnitude (2^-12): its relative error says nothing
 * about the product. */
#define AMP_COMPARE_TINY 0x1p-12

struct amp_compare_kernels {
    const char *name;
    /* First pass over (lowered, fp32) pairs: squared norms (of the
     * difference, of fp32), the largest |fp32|, and the values lowering made
     * Inf or NaN where fp32's are finite; a pair whose fp32 value is not
     * finite is skipped (the program's own product overflowed). */
    void (*sum)(struct amp_compare_sums *s, const float *low, const float *ref, int64_t n);
    /* Second pass: the largest |lowered - fp32| / |fp32| over the pairs
     * both finite whose fp32 value is not tiny (needs the first pass's
     * ref_absmax), or elem_max when none is larger. */
    double (*elem_max)(const struct amp_compare_sums *s, const float *low, const float *ref,
                       int64_t n, double elem_max);
};

extern const struct amp_compare_kernels amp_compare_scalar;
/* NULL where this build has no vector kernels. */
extern const struct amp_compare_kernels *const amp_compare_avx2;

/* The best kernels for this CPU, chosen once. */
const struct amp_compare_kernels *amp_compare(void);

/* The relative Frobenius error the sums give: Inf where lowering made Inf
 * or NaN. */
static inline double amp_compare_relative_error(const struct amp_compare_sums *s)
{
    if (s->nonfinite)
        return INFINITY;
    if (s->ref2 > 0)
        return sqrt(s->diff2 / s->ref2);
    return s->diff2 > 0 ? INFINITY : 0.0;
}

#endif
