/* AVX2/F16C conversion kernels, compiled with target attributes so the rest
 * of the library still runs on any x86-64; amp_convert() picks them only when
 * the CPU has them. Bit-identical to the scalar reference (tested over all
 * 2^32 inputs). */
#include "kernels/cpu/convert.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#define AVX2 __attribute__((target("avx2,f16c")))

/* Round each lane to keep (32 - drop) bits, ties to even; NaN -> quiet NaN. */
AVX2 static inline __m256i round_lanes(__m256i u, int drop, __m256i keep_mask, __m256i bias)
{
    __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(u, drop), _mm256_set1_epi32(1));
    __m256i rounded = _mm256_and_si256(_mm256_add_epi32(_mm256_add_epi32(u, bias), lsb), keep_mask);
    __m256i quiet = _mm256_and_si256(_mm256_or_si256(u, _mm256_set1_epi32(0x00400000)), keep_mask);
    __m256i magnitude = _mm256_and_si256(u, _mm256_set1_epi32(0x7fffffff));
    __m256i is_nan = _mm256_cmpgt_epi32(magnitude, _mm256_set1_epi32(0x7f800000));
    return _mm256_blendv_epi8(rounded, quiet, is_nan);
}

AVX2 static void round_bits(const float *src, float *dst, size_t n, int drop,
                            enum amp_lowp_dtype dtype)
{
    const __m256i keep = _mm256_set1_epi32((int)~((1u << drop) - 1));
    const __m256i bias = _mm256_set1_epi32((int)((1u << (drop - 1)) - 1));
    size_t i = 0;
    for (; i + 32 <= n; i += 32) {
        __m256i a = _mm256_loadu_si256((const __m256i *)(src + i));
        __m256i b = _mm256_loadu_si256((const __m256i *)(src + i + 8));
        __m256i c = _mm256_loadu_si256((const __m256i *)(src + i + 16));
        __m256i d = _mm256_loadu_si256((const __m256i *)(src + i + 24));
        _mm256_storeu_si256((__m256i *)(dst + i), round_lanes(a, drop, keep, bias));
        _mm256_storeu_si256((__m256i *)(dst + i + 8), round_lanes(b, drop, keep, bias));
        _mm256_storeu_si256((__m256i *)(dst + i + 16), round_lanes(c, drop, keep, bias));
        _mm256_storeu_si256((__m256i *)(dst + i + 24), round_lanes(d, drop, keep, bias));
    }
    for (; i + 8 <= n; i += 8) {
        __m256i a = _mm256_loadu_si256((const __m256i *)(src + i));
        _mm256_storeu_si256((__m256i *)(dst + i), round_lanes(a, drop, keep, bias));
    }
    for (; i < n; i++)
        dst[i] = amp_round_to_dtype_rne(dtype, src[i]);
}

AVX2 static void avx2_round_bf16(const float *src, float *dst, size_t n)
{
    round_bits(src, dst, n, 16, AMP_DTYPE_BF16);
}

AVX2 static void avx2_round_tf32(const float *src, float *dst, size_t n)
{
    round_bits(src, dst, n, 13, AMP_DTYPE_TF32);
}

AVX2 static void avx2_f32_to_bf16(const float *src, uint16_t *dst, size_t n)
{
    const __m256i keep = _mm256_set1_epi32((int)0xffff0000u);
    const __m256i bias = _mm256_set1_epi32(0x7fff);
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m256i a = round_lanes(_mm256_loadu_si256((const __m256i *)(src + i)), 16, keep, bias);
        __m256i b = round_lanes(_mm256_loadu_si256((const __m256i *)(src + i + 8)), 16, keep, bias);
        /* packus works per 128-bit lane; the permute puts the halves in order. */
        __m256i packed = _mm256_packus_epi32(_mm256_srli_epi32(a, 16), _mm256_srli_epi32(b, 16));
        _mm256_storeu_si256((__m256i *)(dst + i), _mm256_permute4x64_epi64(packed, 0xd8));
    }
    for (; i < n; i++)
        dst[i] = amp_f32_to_bf16_rne(src[i]);
}

AVX2 static void avx2_bf16_to_f32(const uint16_t *src, float *dst, size_t n)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256i h = _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(src + i)));
        _mm256_storeu_si256((__m256i *)(dst + i), _mm256_slli_epi32(h, 16));
    }
    for (; i < n; i++)
        dst[i] = amp_bf16_to_f32(src[i]);
}

AVX2 static void avx2_f32_to_f16(const float *src, uint16_t *dst, size_t n)
{
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m128i a = _mm256_cvtps_ph(_mm256_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT);
        __m128i b = _mm256_cvtps_ph(_mm256_loadu_ps(src + i + 8), _MM_FROUND_TO_NEAREST_INT);
        _mm_storeu_si128((__m128i *)(dst + i), a);
        _mm_storeu_si128((__m128i *)(dst + i + 8), b);
    }
    for (; i < n; i++)
        dst[i] = amp_f32_to_f16_rne(src[i]);
}

AVX2 static void avx2_f16_to_f32(const uint16_t *src, float *dst, size_t n)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(src + i))));
    for (; i < n; i++)
        dst[i] = amp_f16_to_f32(src[i]);
}

AVX2 static void avx2_round_fp16(const float *src, float *dst, size_t n)
{
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m256 a = _mm256_loadu_ps(src + i), b = _mm256_loadu_ps(src + i + 8);
        a = _mm256_cvtph_ps(_mm256_cvtps_ph(a, _MM_FROUND_TO_NEAREST_INT));
        b = _mm256_cvtph_ps(_mm256_cvtps_ph(b, _MM_FROUND_TO_NEAREST_INT));
        _mm256_storeu_ps(dst + i, a);
        _mm256_storeu_ps(dst + i + 8, b);
    }
    for (; i < n; i++)
        dst[i] = amp_round_to_dtype_rne(AMP_DTYPE_FP16, src[i]);
}

static const struct amp_convert_kernels kernels = {
    .name = "avx2+f16c",
    .f32_to_bf16 = avx2_f32_to_bf16,
    .bf16_to_f32 = avx2_bf16_to_f32,
    .f32_to_f16 = avx2_f32_to_f16,
    .f16_to_f32 = avx2_f16_to_f32,
    .round = {avx2_round_bf16, avx2_round_fp16, avx2_round_tf32},
};

const struct amp_convert_kernels *const amp_convert_avx2 = &kernels;
#else
const struct amp_convert_kernels *const amp_convert_avx2 = NULL;
#endif
