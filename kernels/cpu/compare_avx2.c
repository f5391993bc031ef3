/* AVX2 kernels for comparing outputs (kernels/cpu/compare.h): eight pairs a
 * step, the sums in four chains of four doubles each (the scalar loop waits
 * on one chain: 6.4 million pairs took 18 ms, an audit of ResNet-50's first
 * convolution). A step holding an Inf or NaN goes to the scalar reference. */
#include "kernels/cpu/compare.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#include <math.h>

#define AVX2 __attribute__((target("avx2")))

/* All ones in the lanes whose exponent bits are all ones (Inf or NaN). */
AVX2 static inline __m256i nonfinite_f32(__m256 x)
{
    const __m256i exponent = _mm256_set1_epi32(0x7f800000);
    return _mm256_cmpeq_epi32(_mm256_and_si256(_mm256_castps_si256(x), exponent), exponent);
}

AVX2 static inline __m256 abs_f32(__m256 x)
{
    return _mm256_and_ps(x, _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff)));
}

AVX2 static inline __m256d abs_f64(__m256d x)
{
    return _mm256_and_pd(x, _mm256_castsi256_pd(_mm256_set1_epi64x(0x7fffffffffffffffLL)));
}

AVX2 static double hsum(__m256d a)
{
    __m128d s = _mm_add_pd(_mm256_castpd256_pd128(a), _mm256_extractf128_pd(a, 1));
    return _mm_cvtsd_f64(_mm_add_sd(s, _mm_unpackhi_pd(s, s)));
}

AVX2 static void avx2_sum(struct amp_compare_sums *s, const float *low, const float *ref, int64_t n)
{
    __m256d diff2[2] = {_mm256_setzero_pd(), _mm256_setzero_pd()};
    __m256d ref2[2] = {_mm256_setzero_pd(), _mm256_setzero_pd()};
    __m256 absmax = _mm256_setzero_ps();
    struct amp_compare_sums odd = {0}; /* the steps with an Inf or NaN */
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256 r = _mm256_loadu_ps(ref + i), l = _mm256_loadu_ps(low + i);
        __m256i bad = _mm256_or_si256(nonfinite_f32(r), nonfinite_f32(l));
        if (!_mm256_testz_si256(bad, bad)) {
            amp_compare_scalar.sum(&odd, low + i, ref + i, 8);
            continue;
        }
        for (int h = 0; h < 2; h++) {
            __m256d rd =
                _mm256_cvtps_pd(h ? _mm256_extractf128_ps(r, 1) : _mm256_castps256_ps128(r));
            __m256d ld =
                _mm256_cvtps_pd(h ? _mm256_extractf128_ps(l, 1) : _mm256_castps256_ps128(l));
            __m256d d = _mm256_sub_pd(ld, rd);
            diff2[h] = _mm256_add_pd(diff2[h], _mm256_mul_pd(d, d));
            ref2[h] = _mm256_add_pd(ref2[h], _mm256_mul_pd(rd, rd));
        }
        absmax = _mm256_max_ps(absmax, abs_f32(r));
    }
    amp_compare_scalar.sum(&odd, low + i, ref + i, n - i);
    float lanes[8];
    _mm256_storeu_ps(lanes, absmax);
    double am = s->ref_absmax > odd.ref_absmax ? s->ref_absmax : odd.ref_absmax;
    for (int j = 0; j < 8; j++)
        am = lanes[j] > am ? lanes[j] : am;
    s->diff2 += hsum(_mm256_add_pd(diff2[0], diff2[1])) + odd.diff2;
    s->ref2 += hsum(_mm256_add_pd(ref2[0], ref2[1])) + odd.ref2;
    s->ref_absmax = am;
    s->nonfinite += odd.nonfinite;
    s->count += (uint64_t)n;
}

AVX2 static double avx2_elem_max(const struct amp_compare_sums *s, const float *low,
                                 const float *ref, int64_t n, double elem_max)
{
    const __m256d floor = _mm256_set1_pd(s->ref_absmax * AMP_COMPARE_TINY);
    const __m256d one = _mm256_set1_pd(1.0), none = _mm256_set1_pd(-INFINITY);
    __m256d most = none;
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256 r = _mm256_loadu_ps(ref + i), l = _mm256_loadu_ps(low + i);
        __m256i finite = _mm256_xor_si256(_mm256_or_si256(nonfinite_f32(r), nonfinite_f32(l)),
                                          _mm256_set1_epi32(-1));
        for (int h = 0; h < 2; h++) {
            __m128i f32 = h ? _mm256_extracti128_si256(finite, 1) : _mm256_castsi256_si128(finite);
            __m256d rd =
                _mm256_cvtps_pd(h ? _mm256_extractf128_ps(r, 1) : _mm256_castps256_ps128(r));
            __m256d ld =
                _mm256_cvtps_pd(h ? _mm256_extractf128_ps(l, 1) : _mm256_castps256_ps128(l));
            __m256d ra = abs_f64(rd);
            /* finite, and |fp32| above the floor; the others divide 0 by 1
             * and count as -Inf */
            __m256d take = _mm256_and_pd(_mm256_castsi256_pd(_mm256_cvtepi32_epi64(f32)),
                                         _mm256_cmp_pd(ra, floor, _CMP_GT_OQ));
            __m256d num = _mm256_and_pd(abs_f64(_mm256_sub_pd(ld, rd)), take);
            __m256d den = _mm256_blendv_pd(one, ra, take);
            most = _mm256_max_pd(most, _mm256_blendv_pd(none, _mm256_div_pd(num, den), take));
        }
    }
    double lanes[4];
    _mm256_storeu_pd(lanes, most);
    for (int j = 0; j < 4; j++)
        elem_max = lanes[j] > elem_max ? lanes[j] : elem_max;
    return amp_compare_scalar.elem_max(s, low + i, ref + i, n - i, elem_max);
}

static const struct amp_compare_kernels kernels = {
    .name = "avx2", .sum = avx2_sum, .elem_max = avx2_elem_max};
const struct amp_compare_kernels *const amp_compare_avx2 = &kernels;
#else
const struct amp_compare_kernels *const amp_compare_avx2 = NULL;
#endif
