/* An ordinary cuBLAS program (compiled against the real cublas_v2.h, linked
 * to libcublas.so.13: here the test-only fake) run under the shim. It checks
 * what reached the library and the result: a lowered call must arrive as the
 * Ex form with the expected fast compute type, on the program's own buffers,
 * and its result must equal the library's own answer for that compute type
 * (asked directly through a dlopen handle, which the shim cannot intercept);
 * every call the caller pinned down (types, pedantic compute or math mode)
 * must arrive unchanged.
 * usage: cublas_check EXPECTED (74, 75 or 77: the fast compute type the
 * policy should give; none: nothing is lowered) */
#include <cublas_v2.h>
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/check.h"
#include "tests/fakes/fake_cublas.h"

long fake_cudart_outstanding(void);
long fake_cudart_allocations(void);

enum { M = 19, N = 13, K = 23 };
static float A[K * M * 2], B[K * N * 2];
static void *lib;

typedef cublasStatus_t (*gemmex_fn)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int,
                                    int, const void *, const void *, cudaDataType, int,
                                    const void *, cudaDataType, int, const void *, void *,
                                    cudaDataType, int, cublasComputeType_t, cublasGemmAlgo_t);

/* The library's own answer for a compute type, bypassing the shim. */
static void reference(cublasHandle_t h, int compute, float beta, float *C)
{
    gemmex_fn real = (gemmex_fn)dlsym(lib, "cublasGemmEx");
    float alpha = 1.25f;
    real(h, CUBLAS_OP_N, CUBLAS_OP_N, M, N, K, &alpha, A, CUDA_R_32F, M, B, CUDA_R_32F, K, &beta, C,
         CUDA_R_32F, M, (cublasComputeType_t)compute, CUBLAS_GEMM_DEFAULT);
}

static void fill(float *C)
{
    for (int i = 0; i < M * N; i++)
        C[i] = 0.5f + (float)i / 7.0f;
}

static const struct fake_cublas_record *last(void)
{
    return fake_cublas_last_call();
}

/* What every case shares: the handle, the compute type a lowered call must
 * arrive with (0: none), the same for gemv-shaped calls (EXPECT_GEMV), and
 * whether the expected type is a low-precision one. */
static cublasHandle_t h;
static int expect, gemv, lowp;
static float alpha = 1.25f, zero = 0.0f, half = 0.5f;

static void to_half(_Float16 *ah)
{
    for (int i = 0; i < K * M; i++)
        ah[i] = (_Float16)A[i];
}

/* cublasSgemm, its _64 form and strided batches: lowered to the Ex forms. */
static void case_sgemm(void)
{
    float got[M * N], want[M * N], plain[M * N];
    reference(h, CUBLAS_COMPUTE_32F, 0.0f, plain);

    /* cublasSgemm: lowered to GemmEx with the fast compute type. */
    for (int accumulate = 0; accumulate < 2; accumulate++) {
        float *beta = accumulate ? &half : &zero;
        fill(got);
        cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, M, N, K, &alpha, A, M, B, K, beta, got, M);
        CHECK(strcmp(last()->function, expect ? "cublasGemmEx" : "cublasSgemm_v2") == 0 &&
                  (!expect || last()->compute == expect),
              "Sgemm (beta %g) reached %s with compute %d, expected %d", *beta, last()->function,
              last()->compute, expect);
        fill(want);
        reference(h, expect ? expect : CUBLAS_COMPUTE_32F, *beta, want);
        CHECK(memcmp(got, want, sizeof got) == 0, "Sgemm (beta %g): result of compute %d", *beta,
              expect);
    }
    if (expect)
        CHECK(memcmp(got, plain, sizeof got) != 0, "a lowered result differs from plain fp32");

    /* The 64-bit entry point. */
    int64_t m = M, n = N, k = K;
    cublasSgemm_v2_64(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha, A, m, B, k, &zero, got, m);
    CHECK(strcmp(last()->function, expect ? "cublasGemmEx_64" : "cublasSgemm_v2_64") == 0,
          "Sgemm_v2_64 reached %s", last()->function);

    /* Strided batches. */
    float batched[M * N * 2];
    cublasSgemmStridedBatched(h, CUBLAS_OP_N, CUBLAS_OP_N, M, N, K, &alpha, A, M, K * M, B, K,
                              K * N, &zero, batched, M, M * N, 2);
    CHECK(strcmp(last()->function,
                 expect ? "cublasGemmStridedBatchedEx" : "cublasSgemmStridedBatched") == 0 &&
              (!expect || last()->compute == expect),
          "SgemmStridedBatched reached %s with compute %d", last()->function, last()->compute);
}

/* cublasGemmEx: plain fp32 compute follows the policy, the rest stays. */
static void case_gemmex(void)
{
    float got[M * N];
    /* GemmEx with plain fp32 compute follows the policy... */
    cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, M, N, K, &alpha, A, CUDA_R_32F, M, B, CUDA_R_32F, K,
                 &zero, got, CUDA_R_32F, M, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
    CHECK(last()->compute == (expect ? expect : CUBLAS_COMPUTE_32F),
          "GemmEx(COMPUTE_32F) reached compute %d", last()->compute);

    /* ... but whatever the caller pinned down arrives unchanged. */
    cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, M, N, K, &alpha, A, CUDA_R_32F, M, B, CUDA_R_32F, K,
                 &zero, got, CUDA_R_32F, M, CUBLAS_COMPUTE_32F_PEDANTIC, CUBLAS_GEMM_DEFAULT);
    CHECK(last()->compute == CUBLAS_COMPUTE_32F_PEDANTIC, "COMPUTE_32F_PEDANTIC kept (%d)",
          last()->compute);
    _Float16 ah[K * M];
    to_half(ah);
    cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, M, N, K, &alpha, ah, CUDA_R_16F, M, B, CUDA_R_32F, K,
                 &zero, got, CUDA_R_32F, M, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
    CHECK(last()->atype == CUDA_R_16F && last()->compute == CUBLAS_COMPUTE_32F,
          "explicit fp16 inputs kept (atype %d, compute %d)", last()->atype, last()->compute);
}

/* gemv and ger: passthrough unless a policy lowers them. */
static void case_gemv_ger(void)
{
    float got[M * N];
    fill(got);
    /* gemv, ger and batched gemv pass through by default (their bindings say
     * so: bandwidth-bound); under a policy that lowers them (EXPECT_GEMV=
     * lowered), gemv with unit strides is a one-column GEMM, other strides
     * stay. */
    float x[K], y[M], yref[M];
    for (int i = 0; i < K; i++)
        x[i] = B[i];
    for (int i = 0; i < M; i++)
        y[i] = yref[i] = 0.25f * (float)i;
    cublasSgemv(h, CUBLAS_OP_N, M, K, &alpha, A, M, x, 1, &half, y, 1);
    CHECK(strcmp(last()->function, gemv ? "cublasGemmEx" : "cublasSgemv_v2") == 0 &&
              (!gemv || last()->compute == gemv),
          "Sgemv reached %s with compute %d", last()->function, last()->compute);
    if (gemv) {
        ((gemmex_fn)dlsym(lib, "cublasGemmEx"))(
            h, CUBLAS_OP_N, CUBLAS_OP_N, M, 1, K, &alpha, A, CUDA_R_32F, M, x, CUDA_R_32F, K, &half,
            yref, CUDA_R_32F, M, (cublasComputeType_t)gemv, CUBLAS_GEMM_DEFAULT);
        CHECK(memcmp(y, yref, sizeof y) == 0, "Sgemv result of compute %d", gemv);
    }
    cublasSgemv(h, CUBLAS_OP_T, K, M, &alpha, A, K, B, 2, &zero, y, 1);
    CHECK(strcmp(last()->function, "cublasSgemv_v2") == 0, "Sgemv with incx 2 kept (%s)",
          last()->function);

    /* ger with unit strides is a rank-1 GEMM with beta 1. */
    cublasSger(h, M, N, &alpha, A, 1, B, 1, got, M);
    CHECK(strcmp(last()->function, gemv ? "cublasGemmEx" : "cublasSger_v2") == 0 &&
              (!gemv || last()->compute == gemv),
          "Sger reached %s with compute %d", last()->function, last()->compute);
}

/* cublasSgemmEx. */
static void case_sgemmex(void)
{
    float got[M * N];
    _Float16 ah[K * M];
    to_half(ah);
    /* SgemmEx with fp32 types follows the policy; fp16 inputs stay. */
    cublasSgemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, M, N, K, &alpha, A, CUDA_R_32F, M, B, CUDA_R_32F, K,
                  &zero, got, CUDA_R_32F, M);
    CHECK(strcmp(last()->function, expect ? "cublasGemmEx" : "cublasSgemmEx") == 0,
          "SgemmEx reached %s", last()->function);
    cublasSgemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, M, N, K, &alpha, ah, CUDA_R_16F, M, B, CUDA_R_32F, K,
                  &zero, got, CUDA_R_32F, M);
    CHECK(strcmp(last()->function, "cublasSgemmEx") == 0, "SgemmEx with fp16 inputs kept (%s)",
          last()->function);
}

/* Pointer-array batches, and batched gemv in both forms. */
static void case_pointer_batches(void)
{
    float batched[M * N * 2], want[M * N];
    float x[K];
    for (int i = 0; i < K; i++)
        x[i] = B[i];
    /* Pointer-array batches go through GemmBatchedEx; batch 0 is A, B. */
    const float *as[2] = {A, A + K * M}, *bs[2] = {B, B + K * N};
    float *cs[2] = {batched, batched + M * N};
    cublasSgemmBatched(h, CUBLAS_OP_N, CUBLAS_OP_N, M, N, K, &alpha, as, M, bs, K, &zero, cs, M, 2);
    CHECK(strcmp(last()->function, expect ? "cublasGemmBatchedEx" : "cublasSgemmBatched") == 0 &&
              (!expect || last()->compute == expect),
          "SgemmBatched reached %s with compute %d", last()->function, last()->compute);
    reference(h, expect ? expect : CUBLAS_COMPUTE_32F, 0.0f, want);
    CHECK(memcmp(batched, want, sizeof want) == 0, "SgemmBatched: result of compute %d", expect);
    cublasGemmBatchedEx(h, CUBLAS_OP_N, CUBLAS_OP_N, M, N, K, &alpha, (const void *const *)as,
                        CUDA_R_32F, M, (const void *const *)bs, CUDA_R_32F, K, &zero,
                        (void *const *)cs, CUDA_R_32F, M, 2, CUBLAS_COMPUTE_32F,
                        CUBLAS_GEMM_DEFAULT);
    CHECK(last()->compute == (expect ? expect : CUBLAS_COMPUTE_32F),
          "GemmBatchedEx(COMPUTE_32F) reached compute %d", last()->compute);
    cublasGemmBatchedEx(h, CUBLAS_OP_N, CUBLAS_OP_N, M, N, K, &alpha, (const void *const *)as,
                        CUDA_R_32F, M, (const void *const *)bs, CUDA_R_32F, K, &zero,
                        (void *const *)cs, CUDA_R_32F, M, 2, CUBLAS_COMPUTE_32F_PEDANTIC,
                        CUBLAS_GEMM_DEFAULT);
    CHECK(last()->compute == CUBLAS_COMPUTE_32F_PEDANTIC, "GemmBatchedEx PEDANTIC kept (%d)",
          last()->compute);

    /* Batched gemv, both forms: unit strides become batched GEMMs. */
    const float *xs[2] = {x, x}, *wide[2] = {B, B + K}; /* wide: room for incx 2 */
    float y2[2 * M];
    float *yv[2] = {y2, y2 + M};
    cublasSgemvBatched(h, CUBLAS_OP_N, M, K, &alpha, as, M, xs, 1, &zero, yv, 1, 2);
    CHECK(strcmp(last()->function, gemv ? "cublasGemmBatchedEx" : "cublasSgemvBatched") == 0 &&
              (!gemv || last()->compute == gemv),
          "SgemvBatched reached %s with compute %d", last()->function, last()->compute);
    cublasSgemvBatched(h, CUBLAS_OP_N, M, K, &alpha, as, M, wide, 2, &zero, yv, 1, 2);
    CHECK(strcmp(last()->function, "cublasSgemvBatched") == 0, "SgemvBatched incx 2 kept (%s)",
          last()->function);
    cublasSgemvStridedBatched(h, CUBLAS_OP_T, K, M, &alpha, A, K, K * M, x, 1, 0, &zero, y2, 1, M,
                              2);
    CHECK(strcmp(last()->function,
                 gemv ? "cublasGemmStridedBatchedEx" : "cublasSgemvStridedBatched") == 0 &&
              (!gemv || last()->compute == gemv),
          "SgemvStridedBatched reached %s with compute %d", last()->function, last()->compute);
}

/* Level-1 reductions. */
static void case_level1(void)
{
    /* Level-1 reductions are forwarded: the library's own answers. */
    float r = 0.0f, rr = 0.0f;
    typedef cublasStatus_t (*red_fn)(cublasHandle_t, int, const float *, int, float *);
    cublasSnrm2(h, K, A, 3, &r);
    ((red_fn)dlsym(lib, "cublasSnrm2_v2"))(h, K, A, 3, &rr);
    CHECK(strcmp(last()->function, "cublasSnrm2_v2") == 0 && r == rr && r > 0.0f,
          "Snrm2 forwarded (%g, %g)", r, rr);
    cublasSasum(h, K, A, 1, &r);
    ((red_fn)dlsym(lib, "cublasSasum_v2"))(h, K, A, 1, &rr);
    CHECK(strcmp(last()->function, "cublasSasum_v2") == 0 && r == rr, "Sasum forwarded");
    int64_t k64 = K;
    cublasSdot_64(h, k64, A, 1, B, 2, &r);
    rr = 0.0f;
    for (int i = 0; i < K; i++)
        rr += A[i] * B[2 * i];
    CHECK(strcmp(last()->function, "cublasSdot_v2_64") == 0 && r == rr,
          "Sdot_64 forwarded (%g, %g)", r, rr);
}

/* Symmetric and triangular level 3, strsm, device pointer mode. */
static void case_level3(void)
{
    float got[M * N];
    /* Symmetric and triangular level 3, every dtype (tf32 included): rebuilt
     * on GemmEx with the fast compute type; the answer is GemmEx's on the
     * full matrices, built here on the host. The program's handle is never
     * reconfigured (its math mode is never written). */
    int level3_compute = CUBLAS_COMPUTE_32F;
    long math_writes = fake_cublas_math_writes(h);
    const char *reached_syrk = lowp ? "cublasGemmEx" : "cublasSsyrk_v2";
    gemmex_fn ex = (gemmex_fn)dlsym(lib, "cublasGemmEx");
    typedef cublasStatus_t (*syrk_fn)(cublasHandle_t, cublasFillMode_t, cublasOperation_t, int, int,
                                      const float *, const float *, int, const float *, float *,
                                      int);
    float s1[M * M], s2[M * M], wfull[M * M];
    for (int i = 0; i < M * M; i++)
        s1[i] = s2[i] = 0.125f * (float)(i % 11);
    cublasSsyrk(h, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, M, K, &alpha, A, M, &half, s1, M);
    CHECK(strcmp(last()->function, reached_syrk) == 0 &&
              last()->compute == (lowp ? expect : level3_compute),
          "Ssyrk reached %s with compute %d", last()->function, last()->compute);
    if (lowp) {
        /* W = alpha A A^T; the lower triangle becomes beta C + W, the upper stays */
        ex(h, CUBLAS_OP_N, CUBLAS_OP_T, M, M, K, &alpha, A, CUDA_R_32F, M, A, CUDA_R_32F, M, &zero,
           wfull, CUDA_R_32F, M, (cublasComputeType_t)expect, CUBLAS_GEMM_DEFAULT);
        for (int j = 0; j < M; j++)
            for (int i = j; i < M; i++) {
                float scaled = half * s2[i + j * M];
                s2[i + j * M] = scaled + wfull[i + j * M];
            }
    } else {
        ((syrk_fn)dlsym(lib, "cublasSsyrk_v2"))(h, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, M, K,
                                                &alpha, A, M, &half, s2, M);
    }
    CHECK(memcmp(s1, s2, sizeof s1) == 0, "Ssyrk: the library's answer for compute %d",
          lowp ? expect : level3_compute);
    cublasMath_t mode = 99;
    cublasGetMathMode(h, &mode);
    CHECK(mode == CUBLAS_DEFAULT_MATH && fake_cublas_math_writes(h) == math_writes,
          "the handle's math mode was never written (%d)", mode);

    /* symm, left, A's upper triangle: S = the symmetric matrix it stands for */
    float full[M * M], ref[M * N];
    cublasSsymm(h, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_UPPER, M, N, &alpha, A, M, B, M, &zero, got,
                M);
    CHECK(strcmp(last()->function, lowp ? "cublasGemmEx" : "cublasSsymm_v2") == 0 &&
              last()->compute == (lowp ? expect : level3_compute),
          "Ssymm reached %s with compute %d", last()->function, last()->compute);
    if (lowp) {
        for (int j = 0; j < M; j++)
            for (int i = 0; i < M; i++)
                full[i + j * M] = i <= j ? A[i + j * M] : A[j + i * M];
        ex(h, CUBLAS_OP_N, CUBLAS_OP_N, M, N, M, &alpha, full, CUDA_R_32F, M, B, CUDA_R_32F, M,
           &zero, ref, CUDA_R_32F, M, (cublasComputeType_t)expect, CUBLAS_GEMM_DEFAULT);
        CHECK(memcmp(got, ref, sizeof ref) == 0, "Ssymm: GemmEx's answer on the full matrix");
    }

    /* trmm, left, lower, transposed, unit diagonal: op(T0) B, then + alpha B */
    cublasStrmm(h, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_T, CUBLAS_DIAG_UNIT, M, N,
                &alpha, A, M, B, M, got, M);
    CHECK(strcmp(last()->function, lowp ? "cublasGemmEx" : "cublasStrmm_v2") == 0 &&
              last()->compute == (lowp ? expect : level3_compute),
          "Strmm (unit) reached %s with compute %d", last()->function, last()->compute);
    if (lowp) {
        for (int j = 0; j < M; j++)
            for (int i = 0; i < M; i++)
                full[i + j * M] = i > j ? A[i + j * M] : 0.0f;
        ex(h, CUBLAS_OP_T, CUBLAS_OP_N, M, N, M, &alpha, full, CUDA_R_32F, M, B, CUDA_R_32F, M,
           &zero, ref, CUDA_R_32F, M, (cublasComputeType_t)expect, CUBLAS_GEMM_DEFAULT);
        for (int i = 0; i < M * N; i++)
            ref[i] = 1.0f * ref[i] + alpha * B[i];
        CHECK(memcmp(got, ref, sizeof ref) == 0, "Strmm (unit): GemmEx's answer, + alpha B");
        /* right side, upper, non-unit: B op(T), T N x N from A (lda N) */
        cublasStrmm(h, CUBLAS_SIDE_RIGHT, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_N, CUBLAS_DIAG_NON_UNIT,
                    M, N, &alpha, A, N, B, M, got, M);
        for (int j = 0; j < N; j++)
            for (int i = 0; i < N; i++)
                full[i + j * N] = i <= j ? A[i + j * N] : 0.0f;
        ex(h, CUBLAS_OP_N, CUBLAS_OP_N, M, N, N, &alpha, B, CUDA_R_32F, M, full, CUDA_R_32F, N,
           &zero, ref, CUDA_R_32F, M, (cublasComputeType_t)expect, CUBLAS_GEMM_DEFAULT);
        CHECK(strcmp(last()->function, "cublasGemmEx") == 0 && memcmp(got, ref, sizeof ref) == 0,
              "Strmm (right, non-unit): GemmEx's answer");
        /* in place (C is B): as made */
        float inplace[M * N];
        memcpy(inplace, B, sizeof inplace);
        cublasStrmm(h, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, CUBLAS_DIAG_NON_UNIT,
                    M, N, &alpha, A, M, inplace, M, inplace, M);
        CHECK(strcmp(last()->function, "cublasStrmm_v2") == 0, "in-place Strmm kept (%s)",
              last()->function);
    }
    /* strsm is triangular_solve: unlisted on CUDA, so never changed */
    cublasStrsm(h, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, CUBLAS_DIAG_UNIT, M, N,
                &alpha, A, M, got, M);
    CHECK(strcmp(last()->function, "cublasStrsm_v2") == 0 && last()->compute == CUBLAS_COMPUTE_32F,
          "Strsm reached compute %d", last()->compute);
    /* device pointer mode: the helpers would need device scalars; as made */
    if (lowp) {
        float *dev_alpha = &alpha, *dev_beta = &half; /* host memory stands in for device */
        cublasSetPointerMode(h, CUBLAS_POINTER_MODE_DEVICE);
        cublasSsyrk(h, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, M, K, dev_alpha, A, M, dev_beta, s1, M);
        cublasSetPointerMode(h, CUBLAS_POINTER_MODE_HOST);
        CHECK(strcmp(last()->function, "cublasSsyrk_v2") == 0,
              "device pointer mode: Ssyrk kept (%s)", last()->function);
    }
}

/* Math modes that ask for fp32: every call kept. */
static void case_math_modes(void)
{
    float got[M * N], s1[M * M];
    for (int i = 0; i < M * M; i++)
        s1[i] = 0.125f * (float)(i % 11);
    cublasMath_t mode = 99;
    cublasSetMathMode(h, CUBLAS_PEDANTIC_MATH);
    cublasSsyrk(h, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, M, K, &alpha, A, M, &half, s1, M);
    CHECK(last()->compute == CUBLAS_COMPUTE_32F, "CUBLAS_PEDANTIC_MATH: Ssyrk kept (%d)",
          last()->compute);
    cublasGetMathMode(h, &mode);
    CHECK(mode == CUBLAS_PEDANTIC_MATH, "a pedantic handle stays pedantic (%d)", mode);

    cublasSetMathMode(h, CUBLAS_PEDANTIC_MATH);
    cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, M, N, K, &alpha, A, M, B, K, &zero, got, M);
    CHECK(strcmp(last()->function, "cublasSgemm_v2") == 0, "CUBLAS_PEDANTIC_MATH: Sgemm kept (%s)",
          last()->function);
    /* cuBLAS 13's bf16x9 emulation: the program asks for fp32 accuracy. */
    cublasSetMathMode(h, CUBLAS_FP32_EMULATED_BF16X9_MATH);
    cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, M, N, K, &alpha, A, M, B, K, &zero, got, M);
    CHECK(strcmp(last()->function, "cublasSgemm_v2") == 0,
          "CUBLAS_FP32_EMULATED_BF16X9_MATH: Sgemm kept (%s)", last()->function);
    cublasSsyrk(h, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, M, K, &alpha, A, M, &half, s1, M);
    CHECK(last()->compute == CUBLAS_COMPUTE_32F,
          "CUBLAS_FP32_EMULATED_BF16X9_MATH: Ssyrk kept (%d)", last()->compute);
    cublasSetMathMode(h, CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION);
    cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, M, N, K, &alpha, A, M, B, K, &zero, got, M);
    CHECK(strcmp(last()->function, "cublasSgemm_v2") == 0,
          "DISALLOW_REDUCED_PRECISION_REDUCTION: Sgemm kept (%s)", last()->function);
    cublasSetMathMode(h, CUBLAS_DEFAULT_MATH);
}

int main(int argc, char **argv)
{
    if (argc != 2)
        return 2;
    expect = strcmp(argv[1], "none") == 0 ? 0 : atoi(argv[1]);
    const char *gemv_env = getenv("EXPECT_GEMV");
    gemv = expect && gemv_env && strcmp(gemv_env, "lowered") == 0 ? expect : 0;
    lowp = expect == CUBLAS_COMPUTE_32F_FAST_16F || expect == CUBLAS_COMPUTE_32F_FAST_16BF ||
           expect == CUBLAS_COMPUTE_32F_FAST_TF32;
    CHECK_SHIM_LOADED();
    lib = dlopen("libcublas.so.13", RTLD_NOW | RTLD_NOLOAD);
    CHECK(lib != NULL, "libcublas.so.13 is loaded");
    for (int i = 0; i < K * M * 2; i++)
        A[i] = (float)((i * 7919) % 1013) / 317.0f - 1.6f;
    for (int i = 0; i < K * N * 2; i++)
        B[i] = (float)((i * 6271) % 991) / 211.0f - 2.3f;
    cublasCreate(&h);
    case_sgemm();
    case_gemmex();
    case_gemv_ger();
    case_sgemmex();
    case_pointer_batches();
    case_level1();
    case_level3();
    case_math_modes();
    CHECK(fake_cudart_outstanding() == 0 &&
              (lowp ? fake_cudart_allocations() > 0 : fake_cudart_allocations() == 0),
          "device scratch: %ld allocations, %ld not given back", fake_cudart_allocations(),
          fake_cudart_outstanding());
    cublasDestroy(h);
    printf("cublas_check %s: %d passed, %d failed\n", argv[1], checks - failures, (int)failures);
    return failures ? 1 : 0;
}
