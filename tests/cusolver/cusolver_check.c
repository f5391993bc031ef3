/* An ordinary cuSOLVER program (real cusolverDn.h; here the test-only fakes
 * of libcusolver.so.12 and libcublas.so.13) under the shim. cuSOLVER calls
 * cuBLAS inside; those calls are the library's own business: they must reach
 * cuBLAS as made (cublasSgemm_v2, not lowered) and be counted as internal,
 * whether the entry point is listed (cusolverDnSgetrf, an fp32 region) or
 * not (cusolverDnXgetrf, the generic API), and whatever the policy says of
 * the listed one. The program's own cublasSgemm is still lowered.
 * usage: cusolver_check listed|region-off (the policy makes _lu_with_info
 * passthrough) */
#include <cublas_v2.h>
#include <cusolverDn.h>
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "tests/check.h"
#include "tests/fakes/fake_cublas.h"

enum { N = 24 };

static int (*ctl)(const char *, void *, size_t *, const void *, size_t);

static uint64_t stat(const char *name)
{
    uint64_t v = UINT64_MAX;
    size_t len = sizeof v;
    return ctl && ctl(name, &v, &len, NULL, 0) == 0 ? v : UINT64_MAX;
}

static void fill(float *a)
{
    for (int i = 0; i < N * N; i++)
        a[i] = (float)((i * 7919) % 1013) / 317.0f - 1.6f + (i % (N + 1) == 0 ? 8.0f : 0.0f);
}

int main(int argc, char **argv)
{
    int listed = argc > 1 && strcmp(argv[1], "listed") == 0;
    CHECK_SHIM_LOADED();
    ctl = (int (*)(const char *, void *, size_t *, const void *, size_t))dlsym(RTLD_DEFAULT,
                                                                               "ampshim_ctl");
    float a[N * N], work[1];
    int ipiv[N], info = -1;
    fill(a);
    cusolverDnHandle_t h;
    CHECK(cusolverDnCreate(&h) == CUSOLVER_STATUS_SUCCESS, "create");
    long before = fake_cublas_last_call()->calls;
    CHECK(cusolverDnSgetrf(h, N, N, a, N, work, ipiv, &info) == CUSOLVER_STATUS_SUCCESS &&
              info == 0,
          "Sgetrf succeeded (info %d)", info);
    const struct fake_cublas_record *r = fake_cublas_last_call();
    CHECK(r->calls > before, "Sgetrf called cuBLAS inside");
    CHECK(strcmp(r->function, "cublasSgemm_v2") == 0,
          "Sgetrf's inner call reached cuBLAS as made, not lowered (%s)", r->function);
    CHECK(stat(listed ? "stats.cusolverDnSgetrf.fp32" : "stats.cusolverDnSgetrf.passthrough") == 1,
          "cusolverDnSgetrf counted %s", listed ? "fp32" : "passthrough");
    uint64_t inner = stat("stats.cublasSgemm_v2.internal");
    CHECK(inner > 0 && inner != UINT64_MAX && stat("stats.cublasSgemm_v2.calls") == 0,
          "the inner cublasSgemm_v2 calls are internal (%llu), none the program's",
          (unsigned long long)inner);

    /* The generic 64-bit API, which ampshim does not list: its inner calls
     * (here through cusolverDnSgetrf, then cuBLAS) are internal too. */
    fill(a);
    int64_t ipiv64[N];
    before = fake_cublas_last_call()->calls;
    CHECK(cusolverDnXgetrf(h, NULL, N, N, CUDA_R_32F, a, N, ipiv64, CUDA_R_32F, NULL, 0, NULL, 0,
                           &info) == CUSOLVER_STATUS_SUCCESS &&
              info == 0,
          "Xgetrf succeeded (info %d)", info);
    r = fake_cublas_last_call();
    CHECK(r->calls > before && strcmp(r->function, "cublasSgemm_v2") == 0,
          "Xgetrf's inner call reached cuBLAS as made (%s)", r->function);
    CHECK(stat("stats.cublasSgemm_v2.internal") > inner, "and counted internal");
    CHECK(stat("stats.cusolverDnSgetrf.internal") == 1,
          "Xgetrf's own call of cusolverDnSgetrf is internal (%llu)",
          (unsigned long long)stat("stats.cusolverDnSgetrf.internal"));

    /* The program's own product is still lowered. */
    cublasHandle_t b;
    float alpha = 1.0f, beta = 0.0f, c[N * N];
    CHECK(cublasCreate(&b) == CUBLAS_STATUS_SUCCESS, "cublasCreate");
    cublasSgemm(b, CUBLAS_OP_N, CUBLAS_OP_N, N, N, N, &alpha, a, N, a, N, &beta, c, N);
    CHECK(strcmp(fake_cublas_last_call()->function, "cublasGemmEx") == 0 &&
              fake_cublas_last_call()->compute == CUBLAS_COMPUTE_32F_FAST_16F,
          "the program's cublasSgemm reached cuBLAS as %s, compute %d",
          fake_cublas_last_call()->function, fake_cublas_last_call()->compute);
    cublasDestroy(b);
    cusolverDnDestroy(h);
    printf("cusolver_check %s: %d passed, %d failed\n", argc > 1 ? argv[1] : "?", checks - failures,
           (int)failures);
    return failures ? 1 : 0;
}
