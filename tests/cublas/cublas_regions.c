/* A cuBLAS program that opens autocast regions with the in-process API
 * (found with dlsym, so a missing shim fails the test): inside
 * ampshim_autocast_push(AMPSHIM_DEFAULT) a CUDA GEMM runs in the process's CUDA
 * dtype, not the CPU's; inside an explicit dtype it runs in that dtype, and
 * after the last pop in the process's again. The fast compute type that
 * reaches the (fake) cuBLAS tells which.
 * usage: cublas_regions OUTSIDE (the compute type expected outside regions,
 * or "none" when AMPSHIM_THREADS leaves the thread off outside them) */
#include <cublas_v2.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ampshim.h"
#include "tests/check.h"
#include "tests/fakes/fake_cublas.h"


enum { N = 8 };
static float a[N * N], b[N * N], c[N * N];

/* The compute type one Sgemm reached cuBLAS with: 68 when not lowered. */
static int sgemm_compute(cublasHandle_t h)
{
    float alpha = 1.0f, beta = 0.0f;
    cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, N, N, N, &alpha, a, N, b, N, &beta, c, N);
    return fake_cublas_last_call()->compute;
}

int main(int argc, char **argv)
{
    if (argc != 2)
        return 2;
    int outside = strcmp(argv[1], "none") == 0 ? CUBLAS_COMPUTE_32F : atoi(argv[1]);
    int (*push)(int) = (int (*)(int))dlsym(RTLD_DEFAULT, "ampshim_autocast_push");
    int (*pop)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "ampshim_autocast_pop");
    if (!push || !pop) {
        printf("FAIL: ampshim's in-process API is not in the process (no shim?)\n");
        return 1;
    }
    /* The 0.1 names stay as aliases of the same functions. */
    CHECK(dlsym(RTLD_DEFAULT, "amp_autocast_push") == (void *)push &&
              dlsym(RTLD_DEFAULT, "amp_autocast_pop") == (void *)pop,
          "amp_autocast_push/pop are aliases of ampshim_autocast_push/pop");
    cublasHandle_t h;
    CHECK(cublasCreate(&h) == CUBLAS_STATUS_SUCCESS, "cublasCreate");
    CHECK(sgemm_compute(h) == outside, "outside regions: compute %d, want %d",
          fake_cublas_last_call()->compute, outside);
    CHECK(push(AMPSHIM_DEFAULT) == 0, "push(AMPSHIM_DEFAULT)");
    /* The process's CUDA dtype is fp16 by default, whatever the CPU's is. */
    CHECK(sgemm_compute(h) == CUBLAS_COMPUTE_32F_FAST_16F,
          "inside ampshim_autocast_push(AMPSHIM_DEFAULT): compute %d, want %d (the CUDA default, fp16)",
          fake_cublas_last_call()->compute, CUBLAS_COMPUTE_32F_FAST_16F);
    CHECK(push(AMPSHIM_BF16) == 0, "push(AMPSHIM_BF16)");
    CHECK(sgemm_compute(h) == CUBLAS_COMPUTE_32F_FAST_16BF, "inside a bf16 region: compute %d",
          fake_cublas_last_call()->compute);
    CHECK(push(AMPSHIM_DEFAULT) == 0, "push(AMPSHIM_DEFAULT) inside bf16");
    CHECK(sgemm_compute(h) == CUBLAS_COMPUTE_32F_FAST_16F,
          "a DEFAULT region inside a bf16 one: compute %d, want fp16",
          fake_cublas_last_call()->compute);
    CHECK(pop() == 0 && pop() == 0, "pop twice");
    CHECK(sgemm_compute(h) == CUBLAS_COMPUTE_32F_FAST_16F, "back in the DEFAULT region: compute %d",
          fake_cublas_last_call()->compute);
    CHECK(pop() == 0, "last pop");
    CHECK(sgemm_compute(h) == outside, "after the last pop: compute %d, want %d",
          fake_cublas_last_call()->compute, outside);
    cublasDestroy(h);
    printf("cublas_regions: %d passed, %d failed\n", checks - failures, (int)failures);
    return failures ? 1 : 0;
}
