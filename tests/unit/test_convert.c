/* Conversion kernels: the AVX2/F16C kernels against the scalar reference over
 * all 2^32 fp32 bit patterns (bf16, fp16, tf32; rounding and packing), the
 * scalar reference against independent oracles (F16C hardware, the
 * compiler's _Float16, and a nearest-value search in double), the special
 * cases by name, and odd lengths and misaligned arrays.
 * usage: test_convert [--sample]  (--sample: every 257th pattern only) */
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/cpu/convert.h"
#include "tests/check.h"

static uint32_t stride = 1;

static float f_of(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static uint32_t u_of(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

/* ---- exhaustive: vector kernels == scalar reference ---- */

enum { CHUNK = 1 << 20 };

struct range {
    uint64_t begin, end;
    int bad;
};

static void *compare_range(void *arg)
{
    struct range *r = arg;
    const struct amp_convert_kernels *v = amp_convert_avx2;
    float *src = malloc(CHUNK * 4), *got = malloc(CHUNK * 4);
    uint16_t *h = malloc(CHUNK * 2);
    for (uint64_t base = r->begin; base < r->end && r->bad < 10; base += (uint64_t)CHUNK * stride) {
        size_t n = 0;
        for (uint64_t u = base; u < r->end && n < CHUNK; u += stride)
            src[n++] = f_of((uint32_t)u);
        for (int d = 0; d < AMP_DTYPE_COUNT; d++) {
            v->round[d](src, got, n);
            for (size_t i = 0; i < n; i++) {
                float want = amp_round_to_dtype_rne((enum amp_lowp_dtype)d, src[i]);
                if (u_of(got[i]) != u_of(want) && r->bad++ < 10)
                    printf("FAIL round %s(0x%08x): kernel 0x%08x, reference 0x%08x\n",
                           amp_dtype_names[d], u_of(src[i]), u_of(got[i]), u_of(want));
            }
        }
        v->f32_to_bf16(src, h, n);
        for (size_t i = 0; i < n; i++)
            if (h[i] != amp_f32_to_bf16_rne(src[i]) && r->bad++ < 10)
                printf("FAIL f32_to_bf16(0x%08x): kernel 0x%04x, reference 0x%04x\n", u_of(src[i]),
                       h[i], amp_f32_to_bf16_rne(src[i]));
        v->f32_to_f16(src, h, n);
        for (size_t i = 0; i < n; i++)
            if (h[i] != amp_f32_to_f16_rne(src[i]) && r->bad++ < 10)
                printf("FAIL f32_to_f16(0x%08x): F16C 0x%04x, reference 0x%04x\n", u_of(src[i]),
                       h[i], amp_f32_to_f16_rne(src[i]));
    }
    free(src);
    free(got);
    free(h);
    return NULL;
}

static void exhaustive(void)
{
    if (!amp_convert_avx2 || !amp_cpu_has_avx2_f16c()) {
        printf("skip: no AVX2/F16C on this CPU; vector kernels not compared\n");
        return;
    }
    enum { THREADS = 4 };
    pthread_t tid[THREADS];
    struct range r[THREADS];
    uint64_t per = (1ull << 32) / THREADS;
    for (int t = 0; t < THREADS; t++) {
        r[t] = (struct range){per * t, per * (t + 1), 0};
        pthread_create(&tid[t], NULL, compare_range, &r[t]);
    }
    int bad = 0;
    for (int t = 0; t < THREADS; t++) {
        pthread_join(tid[t], NULL);
        bad += r[t].bad;
    }
    checks++;
    if (bad)
        failures++;
    printf("vector kernels vs reference over %s 2^32 patterns: %d mismatches\n",
           stride == 1 ? "all" : "a sample of", bad);
}

/* ---- the reference against independent oracles ---- */

/* The nearest value with `bits` mantissa bits (bf16 7, tf32 10) found by
 * searching in double, ties to even: independent of the integer trick. */
static float nearest_by_search(float x, int bits)
{
    if (isnan(x) || isinf(x) || x == 0.0f)
        return x;
    double mag = fabs((double)x);
    int e;
    frexp(mag, &e); /* |x| in [2^(e-1), 2^e) */
    if (e < -125)
        e = -125; /* subnormal fp32: same absolute grid */
    double ulp = ldexp(1.0, e - 1 - bits);
    double lo = floor(mag / ulp) * ulp, hi = lo + ulp;
    double dlo = mag - lo, dhi = hi - mag;
    double pick;
    if (dlo < dhi)
        pick = lo;
    else if (dhi < dlo)
        pick = hi;
    else
        pick = fmod(fabs(lo / ulp), 2.0) == 0.0 ? lo : hi;
    /* Overflow past FLT_MAX becomes Inf, as RNE says; the sign is x's. */
    return copysignf((float)pick, x);
}

static void reference_vs_oracles(void)
{
    int bad_f16 = 0, bad_bf16 = 0, bad_tf32 = 0;
    /* Every 61st pattern (70 million): the oracles are slow. */
    for (uint64_t u = 0; u < (1ull << 32); u += 61) {
        float x = f_of((uint32_t)u);
        if (isnan(x))
            continue;
        _Float16 h = (_Float16)x;
        uint16_t hb;
        memcpy(&hb, &h, 2);
        if (hb != amp_f32_to_f16_rne(x) && bad_f16++ < 5)
            printf("FAIL f16 of 0x%08x: reference 0x%04x, _Float16 0x%04x\n", (uint32_t)u,
                   amp_f32_to_f16_rne(x), hb);
        if ((u & 0xfff) < 61) { /* the search is slower still: a sub-sample */
            float b = nearest_by_search(x, 7), t = nearest_by_search(x, 10);
            if (u_of(b) != u_of(amp_round_to_dtype_rne(AMP_DTYPE_BF16, x)) && bad_bf16++ < 5)
                printf("FAIL bf16 of 0x%08x: reference 0x%08x, search 0x%08x\n", (uint32_t)u,
                       u_of(amp_round_to_dtype_rne(AMP_DTYPE_BF16, x)), u_of(b));
            if (u_of(t) != u_of(amp_round_to_dtype_rne(AMP_DTYPE_TF32, x)) && bad_tf32++ < 5)
                printf("FAIL tf32 of 0x%08x: reference 0x%08x, search 0x%08x\n", (uint32_t)u,
                       u_of(amp_round_to_dtype_rne(AMP_DTYPE_TF32, x)), u_of(t));
        }
    }
    CHECK(bad_f16 == 0, "fp16 reference disagrees with _Float16 %d times", bad_f16);
    CHECK(bad_bf16 == 0, "bf16 reference disagrees with the search %d times", bad_bf16);
    CHECK(bad_tf32 == 0, "tf32 reference disagrees with the search %d times", bad_tf32);

    /* Every half back to fp32: reference, _Float16, F16C agree. */
    int bad_back = 0;
    for (uint32_t hb = 0; hb < 65536; hb++) {
        uint16_t h16 = (uint16_t)hb;
        _Float16 h;
        memcpy(&h, &h16, 2);
        float want = (float)h, got = amp_f16_to_f32(h16);
        int both_nan = isnan(want) && isnan(got);
        if (!both_nan && u_of(want) != u_of(got) && bad_back++ < 5)
            printf("FAIL f16_to_f32(0x%04x): reference 0x%08x, _Float16 0x%08x\n", hb, u_of(got),
                   u_of(want));
        if (amp_convert_avx2 && amp_cpu_has_avx2_f16c()) {
            float v;
            amp_convert_avx2->f16_to_f32(&h16, &v, 1);
            float v8[8];
            uint16_t h8[8] = {h16, h16, h16, h16, h16, h16, h16, h16};
            amp_convert_avx2->f16_to_f32(h8, v8, 8); /* the F16C path, not the tail */
            if (u_of(v8[3]) != u_of(got) && bad_back++ < 5)
                printf("FAIL f16_to_f32(0x%04x): reference 0x%08x, F16C 0x%08x\n", hb, u_of(got),
                       u_of(v8[3]));
        }
    }
    CHECK(bad_back == 0, "half to float disagrees %d times", bad_back);
}

/* ---- named special cases ---- */

static void special_cases(void)
{
    const float inf = INFINITY;
    for (int d = 0; d < AMP_DTYPE_COUNT; d++) {
        enum amp_lowp_dtype dt = (enum amp_lowp_dtype)d;
        CHECK(isnan(amp_round_to_dtype_rne(dt, NAN)), "%s: NaN stays NaN", amp_dtype_names[d]);
        CHECK(isnan(amp_round_to_dtype_rne(dt, f_of(0x7f800001u))),
              "%s: a NaN with only the lowest payload bit stays NaN", amp_dtype_names[d]);
        CHECK(isnan(amp_round_to_dtype_rne(dt, f_of(0xff800001u))) &&
                  signbit(amp_round_to_dtype_rne(dt, f_of(0xff800001u))),
              "%s: negative NaN keeps its sign", amp_dtype_names[d]);
        CHECK(amp_round_to_dtype_rne(dt, inf) == inf, "%s: Inf stays Inf", amp_dtype_names[d]);
        CHECK(amp_round_to_dtype_rne(dt, -inf) == -inf, "%s: -Inf stays -Inf", amp_dtype_names[d]);
        CHECK(u_of(amp_round_to_dtype_rne(dt, -0.0f)) == 0x80000000u, "%s: -0 stays -0",
              amp_dtype_names[d]);
        CHECK(amp_round_to_dtype_rne(dt, 1.0f) == 1.0f, "%s: 1 is exact", amp_dtype_names[d]);
    }
    /* bf16: 1 + 2^-8 is halfway between 1 and 1 + 2^-7: ties to even (1). */
    CHECK(amp_round_to_dtype_rne(AMP_DTYPE_BF16, 1.0f + 0x1p-8f) == 1.0f, "bf16 tie to even down");
    CHECK(amp_round_to_dtype_rne(AMP_DTYPE_BF16, 1.0f + 0x1p-7f + 0x1p-8f) == 1.0f + 0x1p-6f,
          "bf16 tie to even up");
    CHECK(amp_round_to_dtype_rne(AMP_DTYPE_BF16, f_of(0x7f7fffffu)) == inf,
          "bf16: FLT_MAX rounds to Inf");
    CHECK(u_of(amp_round_to_dtype_rne(AMP_DTYPE_BF16, f_of(0x00012345u))) == 0x00010000u,
          "bf16 keeps fp32 subnormals");
    /* fp16 range. */
    CHECK(amp_round_to_dtype_rne(AMP_DTYPE_FP16, 65504.0f) == 65504.0f, "fp16 max finite");
    CHECK(amp_round_to_dtype_rne(AMP_DTYPE_FP16, 65519.0f) == 65504.0f, "fp16 below the midpoint");
    CHECK(amp_round_to_dtype_rne(AMP_DTYPE_FP16, 65520.0f) == inf, "fp16 overflow to Inf");
    CHECK(amp_round_to_dtype_rne(AMP_DTYPE_FP16, -1.0e6f) == -inf, "fp16 overflow to -Inf");
    CHECK(amp_round_to_dtype_rne(AMP_DTYPE_FP16, 0x1p-24f) == 0x1p-24f, "fp16 smallest subnormal");
    CHECK(amp_round_to_dtype_rne(AMP_DTYPE_FP16, 0x1p-25f) == 0.0f, "fp16 2^-25 ties to 0");
    CHECK(amp_round_to_dtype_rne(AMP_DTYPE_FP16, 0x1.000002p-25f) == 0x1p-24f,
          "fp16 just above 2^-25 rounds up");
    CHECK(amp_round_to_dtype_rne(AMP_DTYPE_FP16, 3.0f * 0x1p-25f) == 2.0f * 0x1p-24f,
          "fp16 subnormal tie to even");
    CHECK(amp_f32_to_f16_rne(0x1p-14f) == 0x0400, "fp16 smallest normal");
    CHECK(amp_f32_to_f16_rne(0x1.ffcp-15f) == 0x0400, "fp16 rounds up into the normals");
    /* tf32: 10-bit mantissa, fp32 range. */
    CHECK(amp_round_to_dtype_rne(AMP_DTYPE_TF32, 1.0f + 0x1p-11f) == 1.0f, "tf32 tie to even");
    CHECK(amp_round_to_dtype_rne(AMP_DTYPE_TF32, 1.0f + 0x1p-11f + 0x1p-20f) == 1.0f + 0x1p-10f,
          "tf32 above the tie");
    CHECK(amp_round_to_dtype_rne(AMP_DTYPE_TF32, 1.0e38f) < inf, "tf32 keeps the fp32 range");
}

/* ---- odd lengths and misaligned arrays, in place and out of place ---- */

static void lengths_and_alignment(void)
{
    const struct amp_convert_kernels *k = amp_convert();
    float src[160], dst[160];
    uint16_t h[160];
    int bad = 0;
    for (int off = 0; off < 8; off++)
        for (int n = 0; n <= 150; n++) {
            for (int i = 0; i < 160; i++)
                src[i] = (float)(i * 7919 % 1013) / 3.3f - 150.0f + 0.0001f * (float)i;
            for (int d = 0; d < AMP_DTYPE_COUNT; d++) {
                for (int i = 0; i < 160; i++)
                    dst[i] = -7.0f;
                k->round[d](src + off, dst + off, (size_t)n);
                for (int i = 0; i < 160; i++) {
                    float want = i >= off && i < off + n
                                     ? amp_round_to_dtype_rne((enum amp_lowp_dtype)d, src[i])
                                     : -7.0f;
                    bad += u_of(dst[i]) != u_of(want);
                }
                float inplace[160];
                memcpy(inplace, src, sizeof inplace);
                k->round[d](inplace + off, inplace + off, (size_t)n);
                for (int i = off; i < off + n; i++)
                    bad += u_of(inplace[i]) !=
                           u_of(amp_round_to_dtype_rne((enum amp_lowp_dtype)d, src[i]));
            }
            for (int i = 0; i < 160; i++)
                h[i] = 0xdead;
            k->f32_to_bf16(src + off, h + off, (size_t)n);
            for (int i = 0; i < 160; i++)
                bad += h[i] != (i >= off && i < off + n ? amp_f32_to_bf16_rne(src[i]) : 0xdead);
            k->bf16_to_f32(h + off, dst + off, (size_t)n);
            for (int i = off; i < off + n; i++)
                bad += u_of(dst[i]) != u_of(amp_bf16_to_f32(h[i]));
            k->f32_to_f16(src + off, h + off, (size_t)n);
            for (int i = off; i < off + n; i++)
                bad += h[i] != amp_f32_to_f16_rne(src[i]);
            k->f16_to_f32(h + off, dst + off, (size_t)n);
            for (int i = off; i < off + n; i++)
                bad += u_of(dst[i]) != u_of(amp_f16_to_f32(h[i]));
        }
    CHECK(bad == 0, "%s kernels: %d wrong elements over lengths 0..150, offsets 0..7", k->name,
          bad);
}

/* The cpuid reading of low-precision units agrees with the kernel's flags
 * in /proc/cpuinfo (x86 only): bf16 with avx512_bf16 or amx_bf16, fp16 with
 * avx512_fp16 or amx_fp16, tf32 never. */
static void units_by_cpuid(void)
{
#if defined(__x86_64__)
    FILE *f = fopen("/proc/cpuinfo", "r");
    static char line[16384];
    int bf16 = 0, fp16 = 0, found = 0;
    while (f && !found && fgets(line, sizeof line, f)) {
        if (strncmp(line, "flags", 5) != 0)
            continue;
        found = 1;
        bf16 = strstr(line, " avx512_bf16") || strstr(line, " amx_bf16");
        fp16 = strstr(line, " avx512_fp16") || strstr(line, " amx_fp16");
    }
    if (f)
        fclose(f);
    if (!found)
        return;
    printf("cpuid: bf16 units %d, fp16 units %d\n", amp_cpu_may_have_units(AMP_DTYPE_BF16),
           amp_cpu_may_have_units(AMP_DTYPE_FP16));
    CHECK(amp_cpu_may_have_units(AMP_DTYPE_BF16) == bf16, "bf16 units by cpuid match the flags");
    CHECK(amp_cpu_may_have_units(AMP_DTYPE_FP16) == fp16, "fp16 units by cpuid match the flags");
    CHECK(amp_cpu_may_have_units(AMP_DTYPE_TF32) == 0, "no CPU has tf32 units");
#endif
    /* oneDNN's ISA cap: below AVX512_CORE_BF16 no bf16 kernels (a sure no
     * without asking oneDNN), below AVX512_CORE_FP16 no fp16 ones; a name
     * it does not know caps nothing; the older name counts too */
    const char *keep = getenv("ONEDNN_MAX_CPU_ISA");
    char saved[64] = "";
    if (keep)
        snprintf(saved, sizeof saved, "%s", keep);
    setenv("ONEDNN_MAX_CPU_ISA", "avx2", 1);
    CHECK(amp_onednn_isa_cap(AMP_DTYPE_BF16) && !amp_cpu_may_have_units(AMP_DTYPE_BF16) &&
              !amp_cpu_may_have_units(AMP_DTYPE_FP16),
          "ONEDNN_MAX_CPU_ISA=avx2: no bf16 or fp16 units");
    setenv("ONEDNN_MAX_CPU_ISA", "AVX512_CORE_BF16", 1);
    CHECK(!amp_onednn_isa_cap(AMP_DTYPE_BF16) && amp_onednn_isa_cap(AMP_DTYPE_FP16),
          "ONEDNN_MAX_CPU_ISA=AVX512_CORE_BF16 caps fp16 only");
    setenv("ONEDNN_MAX_CPU_ISA", "SOMETHING_NEW", 1);
    CHECK(!amp_onednn_isa_cap(AMP_DTYPE_BF16) && !amp_onednn_isa_cap(AMP_DTYPE_FP16),
          "an unknown ISA name caps nothing");
    unsetenv("ONEDNN_MAX_CPU_ISA");
    setenv("DNNL_MAX_CPU_ISA", "AVX512_CORE", 1);
    CHECK(amp_onednn_isa_cap(AMP_DTYPE_BF16) != NULL, "DNNL_MAX_CPU_ISA=AVX512_CORE caps bf16");
    unsetenv("DNNL_MAX_CPU_ISA");
    if (keep)
        setenv("ONEDNN_MAX_CPU_ISA", saved, 1);
}

int main(int argc, char **argv)
{
    units_by_cpuid();
    if (argc > 1 && strcmp(argv[1], "--sample") == 0)
        stride = 257;
    printf("kernels chosen for this CPU: %s\n", amp_convert()->name);
    special_cases();
    lengths_and_alignment();
    reference_vs_oracles();
    exhaustive();
    printf("test_convert: %d passed, %d failed\n", checks - failures, (int)failures);
    return failures ? 1 : 0;
}
