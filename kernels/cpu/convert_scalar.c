/* The scalar reference conversions, their array forms, and the run-time
 * choice between them and the vector kernels. */
#include "kernels/cpu/convert.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif


static inline uint32_t bits_of(float x)
{
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}

static inline float float_of(uint32_t u)
{
    float x;
    memcpy(&x, &u, sizeof x);
    return x;
}

/* Rounds away the low `drop` mantissa bits, ties to even. NaN keeps sign and
 * top payload with the quiet bit set, so truncation can never make it Inf. */
static inline uint32_t round_mantissa_rne(uint32_t u, unsigned drop)
{
    uint32_t keep_mask = ~((1u << drop) - 1);
    if ((u & 0x7fffffffu) > 0x7f800000u)
        return (u | 0x00400000u) & keep_mask;
    uint32_t lsb = (u >> drop) & 1u;
    return (u + ((1u << (drop - 1)) - 1) + lsb) & keep_mask;
}

uint16_t amp_f32_to_bf16_rne(float x)
{
    return (uint16_t)(round_mantissa_rne(bits_of(x), 16) >> 16);
}

float amp_bf16_to_f32(uint16_t h)
{
    return float_of((uint32_t)h << 16);
}

uint16_t amp_f32_to_f16_rne(float x)
{
    uint32_t u = bits_of(x);
    uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
    uint32_t a = u & 0x7fffffffu;
    if (a > 0x7f800000u) /* NaN: quiet, top 9 payload bits */
        return sign | 0x7e00u | (uint16_t)((a >> 13) & 0x3ffu);
    if (a >= 0x477ff000u) /* >= 65520 rounds to Inf (65504 is the largest half) */
        return sign | 0x7c00u;
    if (a >= 0x38800000u) { /* normal half: rebias the exponent 127 -> 15 */
        uint32_t r = a - 0x38000000u;
        return sign | (uint16_t)((r + 0xfffu + ((r >> 13) & 1u)) >> 13);
    }
    /* Subnormal half: round a * 2^24 to an integer. */
    uint32_t exponent = a >> 23;
    if (exponent < 102) /* below 2^-25: rounds to zero */
        return sign;
    uint32_t mantissa = (a & 0x7fffffu) | 0x800000u;
    unsigned shift = 126 - exponent; /* 14..24 */
    uint32_t q = mantissa >> shift, rem = mantissa & ((1u << shift) - 1), half = 1u << (shift - 1);
    if (rem > half || (rem == half && (q & 1u)))
        q++;
    return sign | (uint16_t)q;
}

float amp_f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exponent = (h >> 10) & 0x1fu, mantissa = h & 0x3ffu;
    if (exponent == 0x1f) /* Inf, or NaN made quiet as F16C does */
        return float_of(sign | 0x7f800000u | (mantissa ? 0x00400000u | (mantissa << 13) : 0));
    if (exponent != 0)
        return float_of(sign | ((exponent + 112) << 23) | (mantissa << 13));
    if (mantissa == 0)
        return float_of(sign);
    /* Subnormal half: normalise. */
    exponent = 113;
    while (!(mantissa & 0x400u)) {
        mantissa <<= 1;
        exponent--;
    }
    return float_of(sign | (exponent << 23) | ((mantissa & 0x3ffu) << 13));
}

float amp_round_to_dtype_rne(enum amp_lowp_dtype dtype, float x)
{
    switch (dtype) {
    case AMP_DTYPE_BF16:
        return float_of(round_mantissa_rne(bits_of(x), 16));
    case AMP_DTYPE_FP16:
        return amp_f16_to_f32(amp_f32_to_f16_rne(x));
    case AMP_DTYPE_TF32:
        return float_of(round_mantissa_rne(bits_of(x), 13));
    default:
        return x;
    }
}

static void scalar_f32_to_bf16(const float *src, uint16_t *dst, size_t n)
{
    for (size_t i = 0; i < n; i++)
        dst[i] = amp_f32_to_bf16_rne(src[i]);
}

static void scalar_bf16_to_f32(const uint16_t *src, float *dst, size_t n)
{
    for (size_t i = 0; i < n; i++)
        dst[i] = amp_bf16_to_f32(src[i]);
}

static void scalar_f32_to_f16(const float *src, uint16_t *dst, size_t n)
{
    for (size_t i = 0; i < n; i++)
        dst[i] = amp_f32_to_f16_rne(src[i]);
}

static void scalar_f16_to_f32(const uint16_t *src, float *dst, size_t n)
{
    for (size_t i = 0; i < n; i++)
        dst[i] = amp_f16_to_f32(src[i]);
}

#define AMP_SCALAR_ROUND(name, dtype)                                                              \
    static void name(const float *src, float *dst, size_t n)                                       \
    {                                                                                              \
        for (size_t i = 0; i < n; i++)                                                             \
            dst[i] = amp_round_to_dtype_rne(dtype, src[i]);                                        \
    }
AMP_SCALAR_ROUND(scalar_round_bf16, AMP_DTYPE_BF16)
AMP_SCALAR_ROUND(scalar_round_fp16, AMP_DTYPE_FP16)
AMP_SCALAR_ROUND(scalar_round_tf32, AMP_DTYPE_TF32)

const struct amp_convert_kernels amp_convert_scalar = {
    .name = "scalar",
    .f32_to_bf16 = scalar_f32_to_bf16,
    .bf16_to_f32 = scalar_bf16_to_f32,
    .f32_to_f16 = scalar_f32_to_f16,
    .f16_to_f32 = scalar_f16_to_f32,
    .round = {scalar_round_bf16, scalar_round_fp16, scalar_round_tf32},
};

int amp_cpu_has_avx2_f16c(void)
{
#if defined(__x86_64__) || defined(__i386__)
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d))
        return 0;
    int f16c = (c >> 29) & 1, osxsave = (c >> 27) & 1, avx = (c >> 28) & 1;
    if (!f16c || !osxsave || !avx)
        return 0;
    unsigned xcr0_lo, xcr0_hi;
    __asm__ volatile("xgetbv" : "=a"(xcr0_lo), "=d"(xcr0_hi) : "c"(0));
    if ((xcr0_lo & 6u) != 6u) /* the OS saves XMM and YMM state */
        return 0;
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d))
        return 0;
    return (b >> 5) & 1; /* AVX2 */
#else
    return 0;
#endif
}

const char *amp_onednn_isa_cap(enum amp_lowp_dtype dtype)
{
    static const char *const below_bf16[] = {"SSE41",           "AVX",         "AVX2",
                                             "AVX2_VNNI",       "AVX2_VNNI_2", "AVX512_MIC",
                                             "AVX512_MIC_4OPS", "AVX512_CORE", "AVX512_CORE_VNNI"};
    static const char *const below_fp16[] = {"AVX512_CORE_BF16", "AVX512_CORE_AMX"};
    const char *cap = getenv("ONEDNN_MAX_CPU_ISA");
    if (!cap || !*cap)
        cap = getenv("DNNL_MAX_CPU_ISA");
    if (!cap || !*cap)
        return NULL;
    for (size_t i = 0; i < sizeof below_bf16 / sizeof *below_bf16; i++)
        if (strcasecmp(cap, below_bf16[i]) == 0)
            return cap;
    for (size_t i = 0; dtype == AMP_DTYPE_FP16 && i < sizeof below_fp16 / sizeof *below_fp16; i++)
        if (strcasecmp(cap, below_fp16[i]) == 0)
            return cap;
    return NULL;
}

int amp_cpu_may_have_units(enum amp_lowp_dtype dtype)
{
    if (dtype == AMP_DTYPE_TF32 || amp_onednn_isa_cap(dtype))
        return 0;
#if defined(__x86_64__) || defined(__i386__)
    unsigned a, b, c, d, a1 = 0, b1, c1, d1;
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d))
        return 0;
    if (a >= 1 && !__get_cpuid_count(7, 1, &a1, &b1, &c1, &d1))
        a1 = 0;
    if (dtype == AMP_DTYPE_BF16)
        return ((a1 >> 5) & 1) /* AVX512_BF16 */ || ((d >> 22) & 1) /* AMX-BF16 */;
    return ((d >> 23) & 1) /* AVX512_FP16 */ || ((a1 >> 21) & 1) /* AMX-FP16 */;
#else
    return 1;
#endif
}

const struct amp_convert_kernels *amp_convert(void)
{
    static const struct amp_convert_kernels *_Atomic chosen;
    const struct amp_convert_kernels *k = chosen;
    if (!k) {
        k = amp_convert_avx2 && amp_cpu_has_avx2_f16c() ? amp_convert_avx2 : &amp_convert_scalar;
        chosen = k;
    }
    return k;
}
