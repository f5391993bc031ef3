/* AVX2/F16C fused unscale + check kernels; bit-identical to the scalar
 * reference (tested), chosen at run time. */
#include "kernels/cpu/unscale.h"

#include "kernels/cpu/convert.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#define AVX2 __attribute__((target("avx2,f16c")))

/* Lanes whose exponent bits are all ones (Inf or NaN). */
AVX2 static inline __m256i nonfinite_f32(__m256 x)
{
    const __m256i exponent = _mm256_set1_epi32(0x7f800000);
    return _mm256_cmpeq_epi32(_mm256_and_si256(_mm256_castps_si256(x), exponent), exponent);
}

AVX2 static int avx2_f32(float *data, size_t n, float factor)
{
    const __m256 f = _mm256_set1_ps(factor);
    __m256i seen = _mm256_setzero_si256();
    size_t i = 0;
    for (; i + 32 <= n; i += 32) {
        __m256 a = _mm256_loadu_ps(data + i), b = _mm256_loadu_ps(data + i + 8);
        __m256 c = _mm256_loadu_ps(data + i + 16), d = _mm256_loadu_ps(data + i + 24);
        seen = _mm256_or_si256(
            seen, _mm256_or_si256(_mm256_or_si256(nonfinite_f32(a), nonfinite_f32(b)),
                                  _mm256_or_si256(nonfinite_f32(c), nonfinite_f32(d))));
        _mm256_storeu_ps(data + i, _mm256_mul_ps(a, f));
        _mm256_storeu_ps(data + i + 8, _mm256_mul_ps(b, f));
        _mm256_storeu_ps(data + i + 16, _mm256_mul_ps(c, f));
        _mm256_storeu_ps(data + i + 24, _mm256_mul_ps(d, f));
    }
    for (; i + 8 <= n; i += 8) {
        __m256 a = _mm256_loadu_ps(data + i);
        seen = _mm256_or_si256(seen, nonfinite_f32(a));
        _mm256_storeu_ps(data + i, _mm256_mul_ps(a, f));
    }
    int nonfinite = !_mm256_testz_si256(seen, seen);
    return amp_unscale_scalar.f32(data + i, n - i, factor) | nonfinite;
}

AVX2 static int avx2_f16(uint16_t *data, size_t n, float factor)
{
    const __m256 f = _mm256_set1_ps(factor);
    __m256i seen = _mm256_setzero_si256();
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m256 a = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(data + i)));
        __m256 b = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(data + i + 8)));
        /* A half is non-finite exactly when its fp32 widening is. */
        seen = _mm256_or_si256(seen, _mm256_or_si256(nonfinite_f32(a), nonfinite_f32(b)));
        _mm_storeu_si128((__m128i *)(data + i),
                         _mm256_cvtps_ph(_mm256_mul_ps(a, f), _MM_FROUND_TO_NEAREST_INT));
        _mm_storeu_si128((__m128i *)(data + i + 8),
                         _mm256_cvtps_ph(_mm256_mul_ps(b, f), _MM_FROUND_TO_NEAREST_INT));
    }
    int nonfinite = !_mm256_testz_si256(seen, seen);
    return amp_unscale_scalar.f16(data + i, n - i, factor) | nonfinite;
}

/* fp32 lanes -> bf16 bits (RNE, NaN quietened), in the low 16 bits. */
AVX2 static inline __m256i to_bf16_lanes(__m256 x)
{
    __m256i u = _mm256_castps_si256(x);
    __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(1));
    __m256i rounded = _mm256_add_epi32(_mm256_add_epi32(u, _mm256_set1_epi32(0x7fff)), lsb);
    __m256i quiet = _mm256_or_si256(u, _mm256_set1_epi32(0x00400000));
    __m256i is_nan = _mm256_cmpgt_epi32(_mm256_and_si256(u, _mm256_set1_epi32(0x7fffffff)),
                                        _mm256_set1_epi32(0x7f800000));
    return _mm256_srli_epi32(_mm256_blendv_epi8(rounded, quiet, is_nan), 16);
}

/* fp32 lanes -> bf16 bits (RNE) for finite lanes only: no NaN blend. */
AVX2 static inline __m256i to_bf16_lanes_finite(__m256 x)
{
    __m256i u = _mm256_castps_si256(x);
    __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(1));
    return _mm256_srli_epi32(_mm256_add_epi32(_mm256_add_epi32(u, _mm256_set1_epi32(0x7fff)), lsb),
                             16);
}

/* 16 bf16 values: widen by interleaving with zero (the bf16 lands in the
 * top of each fp32 lane: elements 0-3|8-11 and 4-7|12-15), multiply, round
 * back; packus undoes that order, so no cross-lane permute is needed. */
AVX2 static inline __m256i bf16_times(__m256i x, __m256 f, int finite)
{
    const __m256i zero = _mm256_setzero_si256();
    __m256 lo = _mm256_mul_ps(_mm256_castsi256_ps(_mm256_unpacklo_epi16(zero, x)), f);
    __m256 hi = _mm256_mul_ps(_mm256_castsi256_ps(_mm256_unpackhi_epi16(zero, x)), f);
    /* A finite input times a finite nonzero factor is never NaN, so finite
     * chunks skip the NaN-quietening blend. */
    return finite ? _mm256_packus_epi32(to_bf16_lanes_finite(lo), to_bf16_lanes_finite(hi))
                  : _mm256_packus_epi32(to_bf16_lanes(lo), to_bf16_lanes(hi));
}

AVX2 static int avx2_bf16(uint16_t *data, size_t n, float factor)
{
    const __m256 f = _mm256_set1_ps(factor);
    const __m256i exponent = _mm256_set1_epi16(0x7f80);
    __m256i seen = _mm256_setzero_si256();
    size_t i = 0;
    /* Two vectors a step: one finite test for both. */
    for (; i + 32 <= n; i += 32) {
        __m256i x = _mm256_loadu_si256((const __m256i *)(data + i));
        __m256i y = _mm256_loadu_si256((const __m256i *)(data + i + 16));
        /* Inf/NaN straight on the 16-bit lanes. */
        __m256i bad = _mm256_or_si256(_mm256_cmpeq_epi16(_mm256_and_si256(x, exponent), exponent),
                                      _mm256_cmpeq_epi16(_mm256_and_si256(y, exponent), exponent));
        seen = _mm256_or_si256(seen, bad);
        int finite = _mm256_testz_si256(bad, bad);
        _mm256_storeu_si256((__m256i *)(data + i), bf16_times(x, f, finite));
        _mm256_storeu_si256((__m256i *)(data + i + 16), bf16_times(y, f, finite));
    }
    int nonfinite = !_mm256_testz_si256(seen, seen);
    return amp_unscale_scalar.bf16(data + i, n - i, factor) | nonfinite;
}

static const struct amp_unscale_kernels kernels = {
    .name = "avx2+f16c", .f32 = avx2_f32, .f16 = avx2_f16, .bf16 = avx2_bf16};
const struct amp_unscale_kernels *const amp_unscale_avx2 = &kernels;
#else
const struct amp_unscale_kernels *const amp_unscale_avx2 = NULL;
#endif
