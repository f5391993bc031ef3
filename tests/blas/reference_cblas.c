/* A CBLAS program run against Debian's reference BLAS (libblas3, whose
 * libblas.so.3 carries CBLAS too: its cblas_sgemm calls its own sgemm_).
 * Under the shim the program's cblas_sgemm must be counted once and rounded
 * once: lowered, equal to the reference sgemm_ on bf16-rounded operands, and
 * the library's inner sgemm_ counted as internal, never as the program's.
 * Run with LD_LIBRARY_PATH at the reference BLAS's folder. */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "tests/check.h"
#include "tests/oracle.h"

void cblas_sgemm(int, int, int, int, int, int, float, const float *, int, const float *, int,
                 float, float *, int);
typedef void (*sgemm_fn)(const char *, const char *, const int *, const int *, const int *,
                         const float *, const float *, const int *, const float *, const int *,
                         const float *, float *, const int *);

enum { M = 13, N = 11, K = 17 };

static uint64_t stat(int (*ctl)(const char *, void *, size_t *, const void *, size_t),
                     const char *name)
{
    uint64_t v = UINT64_MAX;
    size_t len = sizeof v;
    return ctl && ctl(name, &v, &len, NULL, 0) == 0 ? v : UINT64_MAX;
}

int main(void)
{
    CHECK_SHIM_LOADED();
    float a[M * K], b[K * N], c[M * N], want[M * N];
    for (int i = 0; i < M * K; i++)
        a[i] = 1.0f + (float)i / 7.0f;
    for (int i = 0; i < K * N; i++)
        b[i] = 0.5f - (float)i / 11.0f;
    cblas_sgemm(102, 111, 111, M, N, K, 1.0f, a, M, b, K, 0.0f, c, M);

    void *lib = dlopen("libblas.so.3", RTLD_NOW | RTLD_NOLOAD);
    sgemm_fn real = lib ? (sgemm_fn)dlsym(lib, "sgemm_") : NULL;
    Dl_info info;
    CHECK(real && dladdr((void *)real, &info) && strstr(info.dli_fname, "/blas/"),
          "the reference BLAS is the one loaded (%s)", real ? info.dli_fname : "none");
    if (!real)
        return 1;
    for (int i = 0; i < M * K; i++)
        a[i] = oracle_bf16(a[i]);
    for (int i = 0; i < K * N; i++)
        b[i] = oracle_bf16(b[i]);
    int m = M, n = N, k = K;
    float one = 1.0f, zero = 0.0f;
    real("N", "N", &m, &n, &k, &one, a, &m, b, &k, &zero, want, &m);
    CHECK(memcmp(c, want, sizeof c) == 0, "cblas_sgemm equals sgemm_ on bf16 operands (rounded once)");

    int (*ctl)(const char *, void *, size_t *, const void *, size_t) =
        (int (*)(const char *, void *, size_t *, const void *, size_t))dlsym(RTLD_DEFAULT,
                                                                             "ampshim_ctl");
    CHECK(stat(ctl, "stats.cblas_sgemm.lowered") == 1, "cblas_sgemm lowered once (%llu)",
          (unsigned long long)stat(ctl, "stats.cblas_sgemm.lowered"));
    CHECK(stat(ctl, "stats.cblas_sgemm.calls") == 1, "cblas_sgemm counted once");
    CHECK(stat(ctl, "stats.sgemm_.internal") == 1, "the library's own sgemm_ counted internal (%llu)",
          (unsigned long long)stat(ctl, "stats.sgemm_.internal"));
    CHECK(stat(ctl, "stats.sgemm_.calls") == 0, "and never as the program's (%llu)",
          (unsigned long long)stat(ctl, "stats.sgemm_.calls"));
    printf("reference_cblas: %d passed, %d failed\n", checks - failures, (int)failures);
    return failures ? 1 : 0;
}
