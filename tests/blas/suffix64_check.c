/* A program calling the 64-bit-suffixed BLAS names (cblas_sgemm64_,
 * sgemm_64_) with 64-bit integers, as Julia-style ILP64 programs do. Under
 * ampshim both are lowered: the result must equal the real routine on
 * bf16-rounded operands, and m, n, k above 2^32 must never be misread. */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/oracle.h"

void cblas_sgemm64_(int, int, int, int64_t, int64_t, int64_t, float, const float *, int64_t,
                    const float *, int64_t, float, float *, int64_t);
void sgemm_64_(const char *, const char *, const int64_t *, const int64_t *, const int64_t *,
               const float *, const float *, const int64_t *, const float *, const int64_t *,
               const float *, float *, const int64_t *);

int main(void)
{
    void *lib = dlopen("libopenblas64.so.0", RTLD_NOW | RTLD_NOLOAD);
    void (*real)(int, int, int, int64_t, int64_t, int64_t, float, const float *, int64_t,
                 const float *, int64_t, float, float *, int64_t) =
        lib ? dlsym(lib, "cblas_sgemm") : NULL;
    if (!real) {
        fprintf(stderr, "suffix64_check: libopenblas64.so.0 not loaded\n");
        return 1;
    }
    enum { M = 33, N = 21, K = 47 };
    float a[M * K], b[K * N], ra[M * K], rb[K * N], want[M * N], got[M * N], plain[M * N];
    for (int i = 0; i < M * K; i++)
        ra[i] = oracle_bf16(a[i] = (float)((i * 7919) % 1013) / 317.0f - 1.6f);
    for (int i = 0; i < K * N; i++)
        rb[i] = oracle_bf16(b[i] = (float)((i * 6271) % 991) / 211.0f - 2.3f);
    real(102, 111, 111, M, N, K, 1.0f, ra, M, rb, K, 0.0f, want, M);
    real(102, 111, 111, M, N, K, 1.0f, a, M, b, K, 0.0f, plain, M);
    int failures = 0, checks = 0;

    memset(got, 0, sizeof got);
    cblas_sgemm64_(102, 111, 111, M, N, K, 1.0f, a, M, b, K, 0.0f, got, M);
    checks += 2;
    failures += memcmp(got, want, sizeof got) != 0;
    failures += memcmp(got, plain, sizeof got) == 0;

    int64_t m = M, n = N, k = K;
    float one = 1.0f, zero = 0.0f;
    memset(got, 0, sizeof got);
    sgemm_64_("N", "N", &m, &n, &k, &one, a, &m, b, &k, &zero, got, &m);
    checks++;
    failures += memcmp(got, want, sizeof got) != 0;

    printf("suffix64_check: %d passed, %d failed\n", checks - failures, failures);
    return failures ? 1 : 0;
}
