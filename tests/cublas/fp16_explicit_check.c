/* AMPSHIM_CUDA_FP16=explicit against the test-only fakes (cuBLAS, cuDNN and
 * the runtime on host memory): a lowered cublasSgemm reaches cuBLAS as
 * cublasGemmEx with CUDA_R_16F inputs and CUBLAS_COMPUTE_32F, its inputs
 * converted by cudnnTransformTensor into scratch; the result is bit for bit
 * the library's GemmEx on the same fp16 inputs (converted here, on the
 * host), for N and T operands and a padded leading dimension; the scratch is
 * given back and the calls count as lowered. With "fast" (the default) the
 * same call uses the fast compute type on the fp32 buffers instead.
 * usage: fp16_explicit_check explicit|fast */
#include <cublas_v2.h>
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "tests/check.h"
#include "tests/fakes/fake_cublas.h"

enum { M = 17, N = 11, K = 29, LDA = 32 };

typedef cublasStatus_t (*gemmex_fn)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int,
                                    int, const void *, const void *, cudaDataType, int,
                                    const void *, cudaDataType, int, const void *, void *,
                                    cudaDataType, int, cublasComputeType_t, cublasGemmAlgo_t);

static uint64_t lowered(void)
{
    return shim_counter("stats.cublasSgemm_v2.lowered");
}

int main(int argc, char **argv)
{
    if (argc != 2)
        return 2;
    int explicit_mode = strcmp(argv[1], "explicit") == 0;
    CHECK_SHIM_LOADED();
    void *lib = dlopen("libcublas.so.13", RTLD_NOW | RTLD_NOLOAD);
    void *rt = dlopen("libcudart.so.13", RTLD_NOW);
    gemmex_fn ex = lib ? (gemmex_fn)dlsym(lib, "cublasGemmEx") : NULL;
    long (*outstanding)(void) = rt ? (long (*)(void))dlsym(rt, "fake_cudart_outstanding") : NULL;
    if (!ex || !outstanding) {
        printf("FAIL: not run with the fakes\n");
        return 1;
    }
    cublasHandle_t h;
    cublasCreate(&h);
    /* A is stored K x M (op T) or M x K (op N), with leading dimension LDA;
     * values that fp16 rounds, and one above its range. */
    static float a[LDA * K * 2], b[K * N], c[M * N], got[M * N], want[M * N];
    static _Float16 ah[M * K], bh[K * N];
    for (int i = 0; i < LDA * K * 2; i++)
        a[i] = (float)((i * 7919) % 1013) / 317.0f - 1.6f + 1e-4f;
    a[3] = 7e4f; /* Inf in fp16: fp16 numerics show it, TF32 would not */
    for (int i = 0; i < K * N; i++)
        b[i] = (float)((i * 6271) % 991) / 211.0f - 2.3f;
    for (int i = 0; i < M * N; i++)
        c[i] = 0.1f * (float)i;
    const float alpha = 1.5f, beta = 0.5f;
    for (int trans = 0; trans < 2; trans++) {
        int rows = trans ? K : M, cols = trans ? M : K; /* A as stored */
        for (int j = 0; j < cols; j++)
            for (int i = 0; i < rows; i++)
                ah[i + j * rows] = (_Float16)a[i + j * LDA];
        for (int i = 0; i < K * N; i++)
            bh[i] = (_Float16)b[i];
        memcpy(got, c, sizeof got);
        memcpy(want, c, sizeof want);
        uint64_t before = lowered();
        cublasStatus_t st = cublasSgemm(h, trans ? CUBLAS_OP_T : CUBLAS_OP_N, CUBLAS_OP_N, M, N, K,
                                        &alpha, a, LDA, b, K, &beta, got, M);
        const struct fake_cublas_record *r = fake_cublas_last_call();
        if (explicit_mode) {
            CHECK(st == CUBLAS_STATUS_SUCCESS && strcmp(r->function, "cublasGemmEx") == 0 &&
                      r->atype == CUDA_R_16F && r->btype == CUDA_R_16F && r->ctype == CUDA_R_32F &&
                      r->compute == CUBLAS_COMPUTE_32F,
                  "op %c: GemmEx with fp16 inputs and COMPUTE_32F (%s, %d/%d/%d, compute %d)",
                  trans ? 'T' : 'N', r->function, r->atype, r->btype, r->ctype, r->compute);
            ex(h, trans ? CUBLAS_OP_T : CUBLAS_OP_N, CUBLAS_OP_N, M, N, K, &alpha, ah, CUDA_R_16F,
               rows, bh, CUDA_R_16F, K, &beta, want, CUDA_R_32F, M, CUBLAS_COMPUTE_32F,
               CUBLAS_GEMM_DEFAULT);
            CHECK(memcmp(got, want, sizeof got) == 0, "op %c: the library's answer on fp16 inputs",
                  trans ? 'T' : 'N');
        } else {
            CHECK(st == CUBLAS_STATUS_SUCCESS && r->atype == CUDA_R_32F &&
                      r->compute == CUBLAS_COMPUTE_32F_FAST_16F,
                  "op %c: fast compute type on fp32 inputs (%d, compute %d)", trans ? 'T' : 'N',
                  r->atype, r->compute);
        }
        CHECK(lowered() - before == 1, "op %c: counted lowered", trans ? 'T' : 'N');
    }
    CHECK(outstanding() == 0, "all scratch given back (%ld)", outstanding());
    cublasDestroy(h);
    printf("fp16_explicit_check %s: %d passed, %d failed\n", argv[1], checks - failures,
           (int)failures);
    return failures ? 1 : 0;
}
