/* fp32 <-> bf16 / fp16 / tf32 conversion, round-to-nearest-even: a scalar
 * reference and vector kernels (AVX2/F16C) chosen at run time. NaN stays NaN
 * (quietened, sign and top payload bits kept, as F16C does), Inf stays Inf,
 * fp16 overflows to Inf, subnormals are kept. */
#ifndef AMPSHIM_CONVERT_H
#define AMPSHIM_CONVERT_H

#include <stddef.h>
#include <stdint.h>

#include "policy/dtype.h"


/* Scalar reference: the definition every kernel is tested against. */
uint16_t amp_f32_to_bf16_rne(float x);
float amp_bf16_to_f32(uint16_t h);
uint16_t amp_f32_to_f16_rne(float x);
float amp_f16_to_f32(uint16_t h);
/* The nearest value representable in dtype, as an fp32 (tf32 is fp32 with a
 * 10-bit mantissa). */
float amp_round_to_dtype_rne(enum amp_lowp_dtype dtype, float x);

/* A set of array kernels; src and dst may be the same array for round. */
struct amp_convert_kernels {
    const char *name;
    void (*f32_to_bf16)(const float *src, uint16_t *dst, size_t n);
    void (*bf16_to_f32)(const uint16_t *src, float *dst, size_t n);
    void (*f32_to_f16)(const float *src, uint16_t *dst, size_t n);
    void (*f16_to_f32)(const uint16_t *src, float *dst, size_t n);
    void (*round[AMP_DTYPE_COUNT])(const float *src, float *dst, size_t n);
};

extern const struct amp_convert_kernels amp_convert_scalar;
/* NULL where this build has no vector kernels. */
extern const struct amp_convert_kernels *const amp_convert_avx2;

/* Does this CPU (and OS) support the AVX2/F16C kernels? */
int amp_cpu_has_avx2_f16c(void);

/* Whether this CPU's instruction set has low-precision dot-product units
 * for dtype (bf16: AVX512_BF16 or AMX-BF16; fp16: AVX512_FP16 or
 * AMX-FP16; tf32: none), by cpuid alone and oneDNN's ISA cap (below): 0 is
 * a sure no, 1 only a maybe (the OS, and oneDNN, must agree). 1 on other
 * architectures unless capped. */
int amp_cpu_may_have_units(enum amp_lowp_dtype dtype);

/* The program's cap on oneDNN's instructions (ONEDNN_MAX_CPU_ISA, or
 * DNNL_MAX_CPU_ISA, its older name) where it lies below dtype's kernels
 * (bf16 from AVX512_CORE_BF16 on, fp16 from AVX512_CORE_FP16): oneDNN
 * then has none, whatever cpuid says. NULL when it does not (unset, or a
 * name this list does not know). */
const char *amp_onednn_isa_cap(enum amp_lowp_dtype dtype);

/* The best kernels for this CPU, chosen once. */
const struct amp_convert_kernels *amp_convert(void);

#endif
