/* cuBLASLt's alignment rules under the shim (real cublasLt.h; the
 * test-only fake libcublasLt.so.13, which faults a launch on a pointer less
 * aligned than its algorithm assumes, as a real kernel does, and counts
 * it). A program that slices its tensors (A, B, C, D 4-byte aligned), sets
 * its own preferences' MIN_ALIGNMENT from its pointers as PyTorch does, and
 * passes the algorithm it got:
 *   - the shim's lowered call asks its heuristic for those alignments too:
 *     lowered, the fast answer, no misaligned launch;
 *   - a bias that is not 16-byte aligned is never lowered;
 *   - when the first algorithm the heuristic answers is refused at run time
 *     (FAKE_CUBLASLT_FIRST_FAILS=1), the next one runs, lowered;
 *   - a bias buffer that moves every call keeps its cached algorithm (the
 *     cache key has its alignment, not its address), and another device does
 *     not share it.
 * Run with AMPSHIM_LOWER_MIN=0 (its products are small). */
#include <cublasLt.h>
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/check.h"

int fake_cublaslt_last_compute(void);
int fake_cublaslt_heuristic_calls(void);
int fake_cublaslt_misaligned(void);

static uint64_t lowered_calls(void)
{
    int (*ctl)(const char *, void *, size_t *, const void *, size_t) =
        (int (*)(const char *, void *, size_t *, const void *, size_t))dlsym(RTLD_DEFAULT,
                                                                             "ampshim_ctl");
    uint64_t v = 0;
    size_t len = sizeof v;
    return ctl && ctl("stats.cublasLtMatmul.lowered", &v, &len, NULL, 0) == 0 ? v : UINT64_MAX;
}

enum { M = 16, N = 8, K = 12 };
#define ALIGNED __attribute__((aligned(256)))
/* Each buffer one float past a 256-byte boundary: 4-byte aligned. */
static float a_buf[M * K + 64] ALIGNED, b_buf[K * N + 64] ALIGNED, c_buf[M * N + 64] ALIGNED,
    d_buf[M * N + 64] ALIGNED, bias_buf[2][M + 128] ALIGNED;
static char workspace[1 << 16] ALIGNED;

static uint32_t alignment(const void *p)
{
    uintptr_t v = (uintptr_t)p, low = v & (~v + 1);
    return low == 0 || low > 256 ? 256u : (uint32_t)low;
}

/* The program's own algorithm for its fp32 descriptor, with preferences
 * that say how its pointers are aligned. */
static cublasLtMatmulAlgo_t program_algo(cublasLtHandle_t lt, cublasLtMatmulDesc_t desc,
                                         cublasLtMatrixLayout_t al, cublasLtMatrixLayout_t bl,
                                         cublasLtMatrixLayout_t cl, const void *const ptr[4])
{
    cublasLtMatmulPreference_t pref;
    cublasLtMatmulPreferenceCreate(&pref);
    uint64_t ws = sizeof workspace;
    cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws,
                                         sizeof ws);
    for (int i = 0; i < 4; i++) {
        uint32_t align = alignment(ptr[i]);
        cublasLtMatmulPreferenceSetAttribute(
            pref, (cublasLtMatmulPreferenceAttributes_t)(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES + i),
            &align, sizeof align);
    }
    cublasLtMatmulHeuristicResult_t result;
    int count = 0;
    memset(&result, 0, sizeof result);
    cublasLtMatmulAlgoGetHeuristic(lt, desc, al, bl, cl, cl, pref, 1, &result, &count);
    cublasLtMatmulPreferenceDestroy(pref);
    CHECK(count == 1, "the program's heuristic answers");
    return result.algo;
}

int main(void)
{
    CHECK_SHIM_LOADED();
    float *a = a_buf + 1, *b = b_buf + 1, *c = c_buf + 1, *d = d_buf + 1;
    for (int i = 0; i < M * K; i++)
        a[i] = (float)((i * 7919) % 1013) / 317.0f - 1.6f;
    for (int i = 0; i < K * N; i++)
        b[i] = (float)((i * 6271) % 991) / 211.0f - 2.3f;
    for (int i = 0; i < M * N; i++)
        c[i] = 0.1f * (float)i;
    cublasLtHandle_t lt;
    cublasLtCreate(&lt);
    cublasLtMatmulDesc_t desc;
    cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F);
    cublasLtMatrixLayout_t al, bl, cl;
    cublasLtMatrixLayoutCreate(&al, CUDA_R_32F, M, K, M);
    cublasLtMatrixLayoutCreate(&bl, CUDA_R_32F, K, N, K);
    cublasLtMatrixLayoutCreate(&cl, CUDA_R_32F, M, N, M);
    float alpha = 1.0f, beta = 1.0f;
    const void *ptr[4] = {a, b, c, d};
    cublasLtMatmulAlgo_t algo = program_algo(lt, desc, al, bl, cl, ptr);

    /* Sliced operands: lowered on an algorithm made for their alignment. */
    uint64_t before = lowered_calls();
    int status = cublasLtMatmul(lt, desc, &alpha, a, al, b, bl, &beta, c, cl, d, cl, &algo,
                                workspace, sizeof workspace, 0);
    CHECK(status == CUBLAS_STATUS_SUCCESS && fake_cublaslt_misaligned() == 0,
          "4-byte aligned operands: status %d, %d misaligned launches", status,
          fake_cublaslt_misaligned());
    CHECK(lowered_calls() == before + 1 &&
              fake_cublaslt_last_compute() == CUBLAS_COMPUTE_32F_FAST_16F,
          "4-byte aligned operands: lowered (compute %d)", fake_cublaslt_last_compute());

    /* A bias 4 bytes off a 16-byte boundary is never lowered (the program
     * lets cuBLASLt choose: its own call is fine). */
    uint32_t epilogue = CUBLASLT_EPILOGUE_BIAS;
    cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue, sizeof epilogue);
    const float *bias = bias_buf[0] + 1;
    cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof bias);
    before = lowered_calls();
    status = cublasLtMatmul(lt, desc, &alpha, a, al, b, bl, &beta, c, cl, d, cl, NULL, workspace,
                            sizeof workspace, 0);
    CHECK(status == CUBLAS_STATUS_SUCCESS && lowered_calls() == before &&
              fake_cublaslt_last_compute() == CUBLAS_COMPUTE_32F,
          "a bias under 16-byte alignment: as made (status %d, compute %d)", status,
          fake_cublaslt_last_compute());

    /* A bias that moves every call (each 16-byte aligned, 64 bytes off a
     * 256-byte boundary): one heuristic query. */
    int heuristics = fake_cublaslt_heuristic_calls();
    before = lowered_calls();
    for (int i = 0; i < 4; i++) {
        bias = bias_buf[i % 2] + 4 + 64 * (i / 2);
        cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof bias);
        status = cublasLtMatmul(lt, desc, &alpha, a, al, b, bl, &beta, c, cl, d, cl, &algo,
                                workspace, sizeof workspace, 0);
        CHECK(status == CUBLAS_STATUS_SUCCESS, "a moving bias, call %d: status %d", i, status);
    }
    CHECK(lowered_calls() == before + 4 && fake_cublaslt_misaligned() == 0,
          "a moving bias: all four lowered, none misaligned");
    CHECK(fake_cublaslt_heuristic_calls() - heuristics == 1,
          "a moving bias: one heuristic query for the four calls, not %d",
          fake_cublaslt_heuristic_calls() - heuristics);

    /* Another device has algorithms of its own. */
    CHECK(cudaSetDevice(1) == cudaSuccess, "device 1 (the fake runtime has two)");
    heuristics = fake_cublaslt_heuristic_calls();
    cublasLtMatmul(lt, desc, &alpha, a, al, b, bl, &beta, c, cl, d, cl, &algo, workspace,
                   sizeof workspace, 0);
    CHECK(fake_cublaslt_heuristic_calls() - heuristics == 1,
          "the same call on device 1 asks the heuristic again");
    cudaSetDevice(0);

    /* The first algorithm refused at run time: the next one runs. */
    setenv("FAKE_CUBLASLT_FIRST_FAILS", "1", 1);
    cublasLtMatrixLayout_t dl; /* another shape for D: not in the cache */
    cublasLtMatrixLayoutCreate(&dl, CUDA_R_32F, M, N, M + 4);
    static float e_buf[(M + 4) * N + 64] ALIGNED;
    before = lowered_calls();
    status = cublasLtMatmul(lt, desc, &alpha, a, al, b, bl, &beta, c, cl, e_buf, dl, &algo,
                            workspace, sizeof workspace, 0);
    CHECK(status == CUBLAS_STATUS_SUCCESS && lowered_calls() == before + 1 &&
              fake_cublaslt_last_compute() == CUBLAS_COMPUTE_32F_FAST_16F,
          "the first algorithm refused: the second runs lowered (status %d, compute %d)", status,
          fake_cublaslt_last_compute());
    unsetenv("FAKE_CUBLASLT_FIRST_FAILS");
    CHECK(fake_cublaslt_misaligned() == 0, "no launch was misaligned");
    printf("cublaslt_align_check: %d passed, %d failed\n", checks - failures, (int)failures);
    return failures ? 1 : 0;
}
