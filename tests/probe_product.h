/* The stress tests' one-number probe of what a cblas_sgemm call did: the 1x1
 * product of (1 + 2^-10, 1 + 2^-10) with itself. bf16 rounds each operand to
 * 1, so a lowered call gives exactly PROBE_LOWERED; fp32 gives PROBE_EXACT. */
#ifndef AMPSHIM_TEST_PROBE_PRODUCT_H
#define AMPSHIM_TEST_PROBE_PRODUCT_H

typedef void (*probe_sgemm_fn)(int, int, int, int, int, int, float, const float *, int,
                               const float *, int, float, float *, int);

#define PROBE_LOWERED 2.0f
#define PROBE_EXACT (2.0f * (1.0f + 0x1p-10f) * (1.0f + 0x1p-10f))

/* sgemm: cblas_sgemm, or one found with dlsym. */
static inline float probe_product(probe_sgemm_fn sgemm)
{
    float a[2] = {1.0f + 0x1p-10f, 1.0f + 0x1p-10f}, c = 0;
    sgemm(102, 111, 111, 1, 1, 2, 1.0f, a, 1, a, 2, 0.0f, &c, 1);
    return c;
}

#endif
