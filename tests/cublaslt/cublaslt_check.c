/* An ordinary cuBLASLt program (real cublasLt.h; here the test-only fake
 * libcublasLt.so.13) under the shim. An all-fp32 matmul with plain 32F
 * compute runs with the expected fast compute type and gives the library's
 * own answer for it, and the program's descriptor is never changed. An
 * algorithm the program chose for the plain compute type (as PyTorch does
 * for nn.Linear with a bias: epilogue BIAS, a heuristic algo) is replaced by
 * one the shim asks cublasLtMatmulAlgoGetHeuristic for, once per shape
 * (cached): the call runs lowered, epilogue and bias kept, whether the
 * library would refuse the program's algo or silently run its compute type
 * (FAKE_CUBLASLT_MISMATCH=silent). No algorithm within the program's
 * workspace: the program's own call runs, counted not lowered. fp16 inputs
 * and a pedantic compute type stay as they are. The shim's lowered counter
 * moves exactly for the calls that ran lowered.
 * usage: cublaslt_check EXPECTED (74, 75, 77, or none) */
#include <cublasLt.h>
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/check.h"

int fake_cublaslt_last_compute(void);
int fake_cublaslt_heuristic_calls(void);

static uint64_t lowered_calls(void)
{
    return shim_counter("stats.cublasLtMatmul.lowered");
}
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
    /* 256-byte aligned, as cudaMalloc gives: the program's own algo (from
     * default preferences) assumes it. */
#define ALIGNED __attribute__((aligned(256)))
    static float a[M * K] ALIGNED, b[K * N] ALIGNED, c[M * N] ALIGNED, d[M * N] ALIGNED,
        want[M * N] ALIGNED, plain[M * N] ALIGNED;
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
    CHECK(compute == CUBLAS_COMPUTE_32F, "the descriptor is unchanged (%d)", compute);

    /* nn.Linear with a bias: epilogue BIAS, an algo chosen for 32F. */
    static float bias[M] ALIGNED, want_bias[M * N] ALIGNED;
    for (int i = 0; i < M; i++)
        bias[i] = 0.25f * (float)i - 1.0f;
    uint32_t epilogue = CUBLASLT_EPILOGUE_BIAS;
    const float *bias_ptr = bias;
    cublasLtMatmulDesc_t descs[2] = {desc, fast_desc};
    for (int i = 0; i < 2; i++) {
        cublasLtMatmulDescSetAttribute(descs[i], CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue,
                                       sizeof epilogue);
        cublasLtMatmulDescSetAttribute(descs[i], CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias_ptr,
                                       sizeof bias_ptr);
    }
    direct(lt, fast_desc, &alpha, a, al, b, bl, &beta, c, cl, want_bias, cl, NULL, NULL, 0, 0);
    cublasLtMatmulPreference_t pref;
    cublasLtMatmulPreferenceCreate(&pref);
    uint64_t ws = 1 << 20;
    cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws,
                                         sizeof ws);
    cublasLtMatmulHeuristicResult_t result;
    int count = 0;
    cublasLtMatmulAlgoGetHeuristic(lt, desc, al, bl, cl, cl, pref, 1, &result, &count);
    CHECK(count == 1 && (int)result.algo.data[0] == CUBLAS_COMPUTE_32F, "the program's algo");
    static char workspace[1 << 20] ALIGNED;
    int heuristics = fake_cublaslt_heuristic_calls();
    uint64_t before = lowered_calls();
    for (int round = 0; round < 2; round++) {
        memset(d, 0, sizeof d);
        CHECK(cublasLtMatmul(lt, desc, &alpha, a, al, b, bl, &beta, c, cl, d, cl, &result.algo,
                             workspace, sizeof workspace, 0) == CUBLAS_STATUS_SUCCESS,
              "bias epilogue, program's algo: succeeds");
        CHECK(fake_cublaslt_last_compute() == (expect ? expect : CUBLAS_COMPUTE_32F),
              "bias epilogue, program's algo: ran with compute %d, expected %d",
              fake_cublaslt_last_compute(), expect);
        CHECK(memcmp(d, want_bias, sizeof d) == 0, "bias epilogue kept: the library's own answer");
    }
    CHECK(lowered_calls() - before == (expect ? 2u : 0u), "counted lowered: %llu",
          (unsigned long long)(lowered_calls() - before));
    CHECK(fake_cublaslt_heuristic_calls() - heuristics == (expect ? 1 : 0),
          "one heuristic query for the shape (cached): %d",
          fake_cublaslt_heuristic_calls() - heuristics);
    uint32_t kept = 0;
    const float *kept_bias = NULL;
    cublasLtMatmulDescGetAttribute(desc, CUBLASLT_MATMUL_DESC_COMPUTE_TYPE, &compute, sizeof compute,
                                   &written);
    cublasLtMatmulDescGetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &kept, sizeof kept, &written);
    cublasLtMatmulDescGetAttribute(desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &kept_bias,
                                   sizeof kept_bias, &written);
    CHECK(compute == CUBLAS_COMPUTE_32F && kept == CUBLASLT_EPILOGUE_BIAS && kept_bias == bias,
          "the program's descriptor is unchanged");

    /* No algorithm within the program's workspace (none given): its own
     * call runs, in 32F, not counted lowered. */
    setenv("FAKE_CUBLASLT_WORKSPACE", "64", 1);
    cublasLtMatrixLayout_t wl; /* another shape: not in the cache */
    cublasLtMatrixLayoutCreate(&wl, CUDA_R_32F, M, N, M + 1);
    static float e[(M + 1) * N] ALIGNED;
    before = lowered_calls();
    CHECK(cublasLtMatmul(lt, desc, &alpha, a, al, b, bl, &beta, c, cl, e, wl, &result.algo, NULL, 0,
                         0) == CUBLAS_STATUS_SUCCESS &&
              fake_cublaslt_last_compute() == CUBLAS_COMPUTE_32F &&
              lowered_calls() == before,
          "no algo within the workspace: the program's own call, not counted lowered");
    unsetenv("FAKE_CUBLASLT_WORKSPACE");
    epilogue = CUBLASLT_EPILOGUE_DEFAULT;
    cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue, sizeof epilogue);

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
