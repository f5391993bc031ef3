/* Fused multiply + non-finite check over a gradient buffer, in place: what
 * GradScaler's unscale (and scale) does to each tensor. Each element is
 * widened to fp32, multiplied by the factor in fp32 and rounded back to the
 * buffer's type (round to nearest even); the return value is 1 when any
 * element was Inf or NaN *before* the multiply (torch checks the input). */
#ifndef AMPSHIM_UNSCALE_H
#define AMPSHIM_UNSCALE_H

#include <stddef.h>
#include <stdint.h>

struct amp_unscale_kernels {
    const char *name;
    int (*f32)(float *data, size_t n, float factor);
    int (*f16)(uint16_t *data, size_t n, float factor);
    int (*bf16)(uint16_t *data, size_t n, float factor);
};

extern const struct amp_unscale_kernels amp_unscale_scalar;
/* NULL where this build has no vector kernels. */
extern const struct amp_unscale_kernels *const amp_unscale_avx2;

/* The best kernels for this CPU, chosen once. */
const struct amp_unscale_kernels *amp_unscale(void);

#endif
