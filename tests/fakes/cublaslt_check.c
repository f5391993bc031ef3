/* An ordinary cuBLASLt program (real cublasLt.h; here the test-only fake
 * libcublasLt.so.13) under the shim. An all-fp32 matmul with plain 32F
 * compute runs with the expected fast compute type and gives the library's
 * own answer for it; the descriptor is restored afterwards; an algorithm
 * chosen for the plain compute type makes the shim fall back to the
 * program's own call, which succeeds; fp16 inputs and a pedantic compute type
 * stay as they are.
 * usage: cublaslt_check EXPECTED (74, 75, 77, or none) */
#include <cublasLt.h>
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/check.h"

int fake_cublaslt_last_compute(void);
enum { M = 17, N = 11, K = 29 };

typedef cublasStatus_t (*matmul_fn)(cublasLtHandle_t, cublasLtMatmulDesc_t, const void *,
                                    const void *, cublasLtMatrixLayout_t, const void *,
                                    cublasLtMatrixLayout_t, const void *, const void *,
                                    cublasLtMatrixLayout_t, void *, cublasLtMatrixLayout_t,
                                    const cublasLtMatmulAlgo_t *, void *, size_t, cudaStream_t);

int main(int argc, char **argv)
{
    if (argc != 2)
        return 2;
    int expect = strcmp(argv[1], "none") == 0 ? 0 : atoi(argv[1]);
    CHECK_SHIM_LOADED();
    matmul_fn direct = (matmul_fn)dlsym(dlopen("libcublasLt.so.13", RTLD_NOW | RTLD_NOLOAD),
                                        "cublasLtMatmul");
    static float a[M * K], b[K * N], c[M * N], d[M * N], want[M * N], plain[M * N];
    for (int i = 0; i < M * K; i++)
        a[i] = (float)((i * 7919) % 1013) / 317.0f - 1.6f;
    for (int i = 0; i < K * N; i++)
        b[i] = (float)((i * 6271) % 991) / 211.0f - 2.3f;
    for (int i = 0; i < M * N; i++)
        c[i] = 0.1f * (float)i; /* a bias-like C */
    cublasLtHandle_t lt;
    cublasLtCreate(&lt);
    cublasLtMatmulDesc_t desc, fast_desc;
    cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F);
    cublasLtMatmulDescCreate(&fast_desc, expect ? (cublasComputeType_t)expect : CUBLAS_COMPUTE_32F,
                             CUDA_R_32F);
    cublasLtMatrixLayout_t al, bl, cl;
    cublasLtMatrixLayoutCreate(&al, CUDA_R_32F, M, K, M);
    cublasLtMatrixLayoutCreate(&bl, CUDA_R_32F, K, N, K);
    cublasLtMatrixLayoutCreate(&cl, CUDA_R_32F, M, N, M);
    float alpha = 1.5f, beta = 1.0f;

    direct(lt, fast_desc, &alpha, a, al, b, bl, &beta, c, cl, want, cl, NULL, NULL, 0, 0);
    direct(lt, desc, &alpha, a, al, b, bl, &beta, c, cl, plain, cl, NULL, NULL, 0, 0);
    CHECK(cublasLtMatmul(lt, desc, &alpha, a, al, b, bl, &beta, c, cl, d, cl, NULL, NULL, 0, 0) ==
              CUBLAS_STATUS_SUCCESS,
          "matmul succeeds");
    CHECK(fake_cublaslt_last_compute() == (expect ? expect : CUBLAS_COMPUTE_32F),
          "ran with compute %d, expected %d", fake_cublaslt_last_compute(), expect);
    CHECK(memcmp(d, want, sizeof d) == 0, "the library's own answer for that compute type");
    if (expect)
        CHECK(memcmp(d, plain, sizeof d) != 0, "which differs from plain fp32");
    int32_t compute = 0;
    size_t written;
    cublasLtMatmulDescGetAttribute(desc, CUBLASLT_MATMUL_DESC_COMPUTE_TYPE, &compute, sizeof compute,
                                   &written);
    CHECK(compute == CUBLAS_COMPUTE_32F, "the descriptor is restored (%d)", compute);

    cublasLtMatmulAlgo_t algo;
    memset(&algo, 0, sizeof algo);
    algo.data[0] = CUBLAS_COMPUTE_32F; /* chosen for the plain compute type */
    memset(d, 0, sizeof d);
    CHECK(cublasLtMatmul(lt, desc, &alpha, a, al, b, bl, &beta, c, cl, d, cl, &algo, NULL, 0, 0) ==
              CUBLAS_STATUS_SUCCESS && fake_cublaslt_last_compute() == CUBLAS_COMPUTE_32F &&
              memcmp(d, plain, sizeof d) == 0,
          "an algo for the plain compute type: the program's own call runs and succeeds");

    cublasLtMatrixLayout_t hl;
    cublasLtMatrixLayoutCreate(&hl, CUDA_R_16F, M, K, M);
    _Float16 ah[M * K];
    for (int i = 0; i < M * K; i++)
        ah[i] = (_Float16)a[i];
    cublasLtMatmul(lt, desc, &alpha, ah, hl, b, bl, &beta, c, cl, d, cl, NULL, NULL, 0, 0);
    CHECK(fake_cublaslt_last_compute() == CUBLAS_COMPUTE_32F, "fp16 inputs: unchanged (%d)",
          fake_cublaslt_last_compute());
    cublasLtMatmulDesc_t pedantic;
    cublasLtMatmulDescCreate(&pedantic, CUBLAS_COMPUTE_32F_PEDANTIC, CUDA_R_32F);
    cublasLtMatmul(lt, pedantic, &alpha, a, al, b, bl, &beta, c, cl, d, cl, NULL, NULL, 0, 0);
    CHECK(fake_cublaslt_last_compute() == CUBLAS_COMPUTE_32F_PEDANTIC, "pedantic: unchanged (%d)",
          fake_cublaslt_last_compute());
    printf("cublaslt_check %s: %d passed, %d failed\n", argv[1], checks - failures, (int)failures);
    return failures ? 1 : 0;
}
