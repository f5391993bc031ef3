/* An ordinary cuSOLVER program (real cusolverDn.h; here the test-only fakes
 * of libcusolver.so.12 and libcublas.so.13) under the shim: cusolverDnSgetrf
 * runs in an fp32 region, so the cublasSgemm_v2 it makes inside must reach
 * cuBLAS as Sgemm, not lowered, and the call is counted fp32.
 * usage: cusolver_check inner-fp32|inner-lowered */
#include <cusolverDn.h>
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "tests/check.h"
#include "tests/fakes/fake_cublas.h"


enum { N = 24 };

int main(int argc, char **argv)
{
    int expect_fp32 = argc > 1 && strcmp(argv[1], "inner-fp32") == 0;
    CHECK_SHIM_LOADED();
    float a[N * N], work[1];
    int ipiv[N], info = -1;
    for (int i = 0; i < N * N; i++)
        a[i] = (float)((i * 7919) % 1013) / 317.0f - 1.6f + (i % (N + 1) == 0 ? 8.0f : 0.0f);
    cusolverDnHandle_t h;
    CHECK(cusolverDnCreate(&h) == CUSOLVER_STATUS_SUCCESS, "create");
    long before = fake_cublas_last_call()->calls;
    CHECK(cusolverDnSgetrf(h, N, N, a, N, work, ipiv, &info) == CUSOLVER_STATUS_SUCCESS &&
              info == 0,
          "Sgetrf succeeded (info %d)", info);
    const struct fake_cublas_record *r = fake_cublas_last_call();
    CHECK(r->calls > before, "Sgetrf called cuBLAS inside");
    CHECK(strcmp(r->function, expect_fp32 ? "cublasSgemm_v2" : "cublasGemmEx") == 0,
          "the inner call reached cuBLAS as %s", r->function);
    int (*ctl)(const char *, void *, size_t *, const void *, size_t) =
        (int (*)(const char *, void *, size_t *, const void *, size_t))dlsym(RTLD_DEFAULT, "ampshim_ctl");
    uint64_t fp32 = 0;
    size_t len = sizeof fp32;
    CHECK(ctl && ctl("stats.cusolverDnSgetrf.fp32", &fp32, &len, NULL, 0) == 0 &&
              fp32 == (uint64_t)expect_fp32,
          "stats.cusolverDnSgetrf.fp32 is %llu", (unsigned long long)fp32);
    cusolverDnDestroy(h);
    printf("cusolver_check %s: %d passed, %d failed\n", argc > 1 ? argv[1] : "?", checks - failures,
           (int)failures);
    return failures ? 1 : 0;
}
