/* The reading of tests/cublas/compute_types_gpu's probes (compute_verdict.h),
 * checked where there is no GPU: each probe rounded to fp16, bf16 and tf32
 * by ampshim's own reference conversions (what a kernel that converts its
 * inputs to that format and multiplies by 1 gives back) must read as that
 * format; the probes as they are must read as fp32; TF32 by truncation
 * (what some hardware does instead of rounding) still reads as tf32; and a
 * mixture (fp16's range, bf16's mantissa) reads as none. */
#include <stdio.h>
#include <string.h>

#include "kernels/cpu/convert.h"
#include "tests/check.h"
#include "tests/cublas/compute_verdict.h"

static const char *read_as(enum amp_lowp_dtype dtype)
{
    float v[PROBES];
    for (int p = 0; p < PROBES; p++)
        v[p] = amp_round_to_dtype_rne(dtype, probe_value[p]);
    return verdict(v);
}

static int is(const char *got, const char *want)
{
    return got && want ? strcmp(got, want) == 0 : got == want;
}

int main(void)
{
    static const struct {
        enum amp_lowp_dtype dtype;
        const char *name;
    } formats[] = {{AMP_DTYPE_FP16, "fp16"}, {AMP_DTYPE_BF16, "bf16"}, {AMP_DTYPE_TF32, "tf32"}};
    for (size_t i = 0; i < sizeof formats / sizeof *formats; i++) {
        const char *got = read_as(formats[i].dtype);
        CHECK(is(got, formats[i].name), "inputs rounded to %s read as %s", formats[i].name,
              got ? got : "none");
    }
    CHECK(is(verdict(probe_value), "fp32"), "the probes as they are read as fp32");
    float v[PROBES];
    for (int p = 0; p < PROBES; p++) { /* TF32 by truncation: 13 mantissa bits dropped */
        uint32_t x;
        memcpy(&x, &probe_value[p], sizeof x);
        x &= ~(uint32_t)0x1fff;
        memcpy(&v[p], &x, sizeof x);
    }
    CHECK(is(verdict(v), "tf32"), "TF32 by truncation reads as tf32");
    for (int p = 0; p < PROBES; p++)
        v[p] = amp_round_to_dtype_rne(p < 2 ? AMP_DTYPE_FP16 : AMP_DTYPE_BF16, probe_value[p]);
    CHECK(verdict(v) == NULL, "fp16's range with bf16's mantissa reads as none");
    printf("test_compute_verdict: %d passed, %d failed\n", checks - failures, (int)failures);
    return failures != 0;
}
