/* The cuBLAS hooks against the real cuBLAS on a real GPU: cublasSgemm under
 * the shim must give exactly what cublasGemmEx with the fast compute type
 * gives when asked directly (through a dlopen handle, which the shim cannot
 * intercept), for fp16, bf16 and tf32, and differ from plain fp32. The dtype
 * is switched in-process with ampshim_ctl. Exits 77 without a GPU. */
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
typedef cublasStatus_t (*sgemm_fn)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int,
                                   int, const float *, const float *, int, const float *, int,
                                   const float *, float *, int);
enum { N = 512 };

int main(void)
{
    gpu_ctl_fn ctl;
    void *lib;
    int start = gpu_start("cublas_gpu", "libcublas.so.13", &ctl, &lib);
    if (start == 77)
        return 77;
    CHECK(start == 0, "run under the shim, with libcublas.so.13 loaded");
    if (start)
        return 1;
    gemmex_fn direct_ex = (gemmex_fn)dlsym(lib, "cublasGemmEx");
    sgemm_fn direct_sgemm = (sgemm_fn)dlsym(lib, "cublasSgemm_v2");
    size_t bytes = sizeof(float) * N * N;
    float *h = malloc(bytes), *got = malloc(bytes), *want = malloc(bytes), *plain = malloc(bytes);
    gpu_fill(h, (size_t)N * N, 7919, 1013, 317.0f, 1.6f);
    float *a, *b, *c;
    cudaMalloc((void **)&a, bytes);
    cudaMalloc((void **)&b, bytes);
    cudaMalloc((void **)&c, bytes);
    cudaMemcpy(a, h, bytes, cudaMemcpyHostToDevice);
    cudaMemcpy(b, h, bytes, cudaMemcpyHostToDevice);
    cublasHandle_t handle;
    cublasCreate(&handle);
    float one = 1.0f, zero = 0.0f;
    direct_sgemm(handle, CUBLAS_OP_N, CUBLAS_OP_T, N, N, N, &one, a, N, b, N, &zero, c, N);
    cudaMemcpy(plain, c, bytes, cudaMemcpyDeviceToHost);
    static const struct {
        const char *dtype;
        cublasComputeType_t compute;
    } modes[] = {{"fp16", CUBLAS_COMPUTE_32F_FAST_16F},
                 {"bf16", CUBLAS_COMPUTE_32F_FAST_16BF},
                 {"tf32", CUBLAS_COMPUTE_32F_FAST_TF32}};
    for (int m = 0; m < 3; m++) {
        ctl("opt.cuda_dtype", NULL, NULL, modes[m].dtype, strlen(modes[m].dtype));
        cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_T, N, N, N, &one, a, N, b, N, &zero, c, N);
        cudaMemcpy(got, c, bytes, cudaMemcpyDeviceToHost);
        direct_ex(handle, CUBLAS_OP_N, CUBLAS_OP_T, N, N, N, &one, a, CUDA_R_32F, N, b, CUDA_R_32F,
                  N, &zero, c, CUDA_R_32F, N, modes[m].compute, CUBLAS_GEMM_DEFAULT);
        cudaMemcpy(want, c, bytes, cudaMemcpyDeviceToHost);
        CHECK(memcmp(got, want, bytes) == 0, "%s: Sgemm under the shim equals GemmEx(%d)",
              modes[m].dtype, modes[m].compute);
        CHECK(memcmp(got, plain, bytes) != 0, "%s: and differs from plain fp32", modes[m].dtype);
    }
    cublasDestroy(handle);
    printf("cublas_gpu: %d passed, %d failed\n", checks - failures, (int)failures);
    return failures ? 1 : 0;
}
