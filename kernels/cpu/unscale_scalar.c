/* The scalar reference for the fused unscale + check, and the run-time
 * choice of kernels. */
#include "kernels/cpu/unscale.h"

#include <math.h>

#include "kernels/cpu/convert.h"

static int scalar_f32(float *data, size_t n, float factor)
{
    int nonfinite = 0;
    for (size_t i = 0; i < n; i++) {
        nonfinite |= !isfinite(data[i]);
        data[i] *= factor;
    }
    return nonfinite;
}

static int scalar_f16(uint16_t *data, size_t n, float factor)
{
    int nonfinite = 0;
    for (size_t i = 0; i < n; i++) {
        nonfinite |= (data[i] & 0x7c00u) == 0x7c00u;
        data[i] = amp_f32_to_f16_rne(amp_f16_to_f32(data[i]) * factor);
    }
    return nonfinite;
}

static int scalar_bf16(uint16_t *data, size_t n, float factor)
{
    int nonfinite = 0;
    for (size_t i = 0; i < n; i++) {
        nonfinite |= (data[i] & 0x7f80u) == 0x7f80u;
        data[i] = amp_f32_to_bf16_rne(amp_bf16_to_f32(data[i]) * factor);
    }
    return nonfinite;
}

const struct amp_unscale_kernels amp_unscale_scalar = {
    .name = "scalar", .f32 = scalar_f32, .f16 = scalar_f16, .bf16 = scalar_bf16};

const struct amp_unscale_kernels *amp_unscale(void)
{
    static const struct amp_unscale_kernels *_Atomic chosen;
    const struct amp_unscale_kernels *k = chosen;
    if (!k) {
        k = amp_unscale_avx2 && amp_cpu_has_avx2_f16c() ? amp_unscale_avx2 : &amp_unscale_scalar;
        chosen = k;
    }
    return k;
}
