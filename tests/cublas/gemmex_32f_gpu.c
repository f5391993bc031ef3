/* cublasGemmEx on fp32 buffers with CUBLAS_COMPUTE_32F, the call torch 2.15
 * makes for every fp32 matmul on a GPU (it no longer imports
 * cublasSgemm_v2), under the shim on a real GPU: for each CUDA dtype
 * (switched in-process with ampshim_ctl) the result must be exactly what
 * GemmEx with that dtype's fast compute type gives when asked directly
 * (through a dlopen handle, which the shim cannot intercept), and must
 * differ from plain COMPUTE_32F: a result bit-identical to fp32 means the
 * lowering did not happen, and fails. The same call under
 * CUBLAS_COMPUTE_32F_PEDANTIC (the program asking for exact fp32) must stay
 * bit-identical to fp32. Exits 77 without a GPU; built against the fakes
 * too (FAKE_CUDART_DEVICES=1), where it must fail with lowering off. */
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/check.h"
#include "tests/cuda_gpu.h"

typedef cublasStatus_t (*gemmex_fn)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int,
                                    int, const void *, const void *, cudaDataType, int,
                                    const void *, cudaDataType, int, const void *, void *,
                                    cudaDataType, int, cublasComputeType_t, cublasGemmAlgo_t);
#ifndef GEMM_N
#define GEMM_N 512 /* the fakes multiply on the CPU: their build asks for less */
#endif
enum { N = GEMM_N };

static float *a, *b, *c;
static float one = 1.0f, zero = 0.0f;

static void gemm(gemmex_fn f, cublasHandle_t h, cublasComputeType_t compute, float *out)
{
    f(h, CUBLAS_OP_N, CUBLAS_OP_T, N, N, N, &one, a, CUDA_R_32F, N, b, CUDA_R_32F, N, &zero, c,
      CUDA_R_32F, N, compute, CUBLAS_GEMM_DEFAULT);
    cudaMemcpy(out, c, sizeof(float) * N * N, cudaMemcpyDeviceToHost);
}

int main(void)
{
    gpu_ctl_fn ctl;
    void *lib;
    int start = gpu_start("gemmex_32f_gpu", "libcublas.so.13", &ctl, &lib);
    if (start == 77)
        return 77;
    CHECK(start == 0, "run under the shim, with libcublas.so.13 loaded");
    if (start)
        return 1;
    gemmex_fn direct = (gemmex_fn)dlsym(lib, "cublasGemmEx");
    size_t bytes = sizeof(float) * N * N;
    float *h = malloc(bytes), *got = malloc(bytes), *want = malloc(bytes), *plain = malloc(bytes);
    gpu_fill(h, (size_t)N * N, 7919, 1013, 317.0f, 1.6f);
    cudaMalloc((void **)&a, bytes);
    cudaMalloc((void **)&b, bytes);
    cudaMalloc((void **)&c, bytes);
    cudaMemcpy(a, h, bytes, cudaMemcpyHostToDevice);
    cudaMemcpy(b, h, bytes, cudaMemcpyHostToDevice);
    cublasHandle_t handle;
    cublasCreate(&handle);
    gemm(direct, handle, CUBLAS_COMPUTE_32F, plain);
    static const struct {
        const char *dtype;
        cublasComputeType_t compute;
    } modes[] = {{"fp16", CUBLAS_COMPUTE_32F_FAST_16F},
                 {"bf16", CUBLAS_COMPUTE_32F_FAST_16BF},
                 {"tf32", CUBLAS_COMPUTE_32F_FAST_TF32}};
    for (int m = 0; m < 3; m++) {
        ctl("opt.cuda_dtype", NULL, NULL, modes[m].dtype, strlen(modes[m].dtype));
        gemm(cublasGemmEx, handle, CUBLAS_COMPUTE_32F, got);
        gemm(direct, handle, modes[m].compute, want);
        CHECK(memcmp(got, plain, bytes) != 0,
              "%s: GemmEx(COMPUTE_32F) under the shim is not fp32's result (it was lowered)",
              modes[m].dtype);
        CHECK(memcmp(got, want, bytes) == 0, "%s: ... it equals GemmEx(%d) asked directly",
              modes[m].dtype, modes[m].compute);
        gemm(cublasGemmEx, handle, CUBLAS_COMPUTE_32F_PEDANTIC, got);
        CHECK(memcmp(got, plain, bytes) == 0, "%s: COMPUTE_32F_PEDANTIC stays fp32, bit for bit",
              modes[m].dtype);
    }
    cublasDestroy(handle);
    printf("gemmex_32f_gpu: %d passed, %d failed\n", checks - failures, (int)failures);
    return failures ? 1 : 0;
}
