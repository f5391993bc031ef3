/* TEST-ONLY FAKE of libcublas.so.13: a CPU stand-in, never installed, so the
 * cuBLAS hooks can be tested on machines without a GPU. Compiled against the
 * real cublas_v2.h (so every signature is the real one), it works on host
 * memory, records the last call (function, data types, compute type) for
 * the tests, and emulates each compute type's precision: FAST_16F rounds
 * the inputs to fp16, FAST_16BF to bf16, FAST_TF32 to tf32, and every
 * product is accumulated in fp32 in a fixed order. */
#include <cublas_v2.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "shim/cublas_abi.h"

/* The shim's copy of the ABI values must match the real header's. */
#define SAME(real, ours) _Static_assert((int)(real) == (int)(ours), #ours)
SAME(CUBLAS_STATUS_SUCCESS, AMP_CUBLAS_STATUS_SUCCESS);
SAME(CUDA_R_32F, AMP_CUDA_R_32F);
SAME(CUBLAS_COMPUTE_32F, AMP_CUBLAS_COMPUTE_32F);
SAME(CUBLAS_COMPUTE_32F_PEDANTIC, AMP_CUBLAS_COMPUTE_32F_PEDANTIC);
SAME(CUBLAS_COMPUTE_32F_FAST_16F, AMP_CUBLAS_COMPUTE_32F_FAST_16F);
SAME(CUBLAS_COMPUTE_32F_FAST_16BF, AMP_CUBLAS_COMPUTE_32F_FAST_16BF);
SAME(CUBLAS_COMPUTE_32F_FAST_TF32, AMP_CUBLAS_COMPUTE_32F_FAST_TF32);
SAME(CUBLAS_PEDANTIC_MATH, AMP_CUBLAS_PEDANTIC_MATH);
SAME(CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION,
     AMP_CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION);
SAME(CUBLAS_POINTER_MODE_HOST, AMP_CUBLAS_POINTER_MODE_HOST);
SAME(CUBLAS_GEMM_DEFAULT, AMP_CUBLAS_GEMM_DEFAULT);

#define FAKE __attribute__((visibility("default")))

struct fake_cublas_record {
    char function[48];
    int atype, btype, ctype, compute;
    long calls;
};
static struct fake_cublas_record last;

FAKE const struct fake_cublas_record *fake_cublas_last_call(void)
{
    return &last;
}

static void record(const char *function, int at, int bt, int ct, int compute)
{
    strncpy(last.function, function, sizeof last.function - 1);
    last.atype = at;
    last.btype = bt;
    last.ctype = ct;
    last.compute = compute;
    last.calls++;
}

struct cublasContext {
    cublasMath_t math;
    cublasPointerMode_t pointer;
};

FAKE cublasStatus_t cublasCreate_v2(cublasHandle_t *handle)
{
    *handle = calloc(1, sizeof(struct cublasContext));
    return *handle ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_ALLOC_FAILED;
}

FAKE cublasStatus_t cublasDestroy_v2(cublasHandle_t handle)
{
    free(handle);
    return CUBLAS_STATUS_SUCCESS;
}

FAKE cublasStatus_t cublasSetMathMode(cublasHandle_t h, cublasMath_t mode)
{
    h->math = mode;
    return CUBLAS_STATUS_SUCCESS;
}

FAKE cublasStatus_t cublasGetMathMode(cublasHandle_t h, cublasMath_t *mode)
{
    *mode = h->math;
    return CUBLAS_STATUS_SUCCESS;
}

FAKE cublasStatus_t cublasSetPointerMode_v2(cublasHandle_t h, cublasPointerMode_t mode)
{
    h->pointer = mode;
    return CUBLAS_STATUS_SUCCESS;
}

FAKE cublasStatus_t cublasGetPointerMode_v2(cublasHandle_t h, cublasPointerMode_t *mode)
{
    *mode = h->pointer;
    return CUBLAS_STATUS_SUCCESS;
}

static float round_bits(float x, unsigned drop)
{
    uint32_t u;
    memcpy(&u, &x, 4);
    if ((u & 0x7fffffffu) <= 0x7f800000u)
        u = (u + ((1u << (drop - 1)) - 1) + ((u >> drop) & 1u)) & ~((1u << drop) - 1);
    memcpy(&x, &u, 4);
    return x;
}

/* An input as the tensor cores would see it under this compute type. */
static float input(const void *p, int64_t i, int type, int compute)
{
    float x = type == CUDA_R_16F ? (float)((const _Float16 *)p)[i] : ((const float *)p)[i];
    switch (compute) {
    case CUBLAS_COMPUTE_32F_FAST_16F:
        return (float)(_Float16)x;
    case CUBLAS_COMPUTE_32F_FAST_16BF:
        return round_bits(x, 16);
    case CUBLAS_COMPUTE_32F_FAST_TF32:
        return round_bits(x, 13);
    default:
        return x;
    }
}

/* The type mixes this fake multiplies: fp32 or fp16 inputs into fp32. */
static int fake_types_supported(int at, int bt, int ct)
{
    return ct == CUDA_R_32F && (at == CUDA_R_32F || at == CUDA_R_16F) &&
           (bt == CUDA_R_32F || bt == CUDA_R_16F);
}

/* Column-major C = alpha op(A) op(B) + beta C, fp32 accumulation. */
static void gemm(int ta, int tb, int64_t m, int64_t n, int64_t k, float alpha, const void *A,
                 int at, int64_t lda, const void *B, int bt, int64_t ldb, float beta, float *C,
                 int64_t ldc, int compute)
{
    for (int64_t j = 0; j < n; j++)
        for (int64_t i = 0; i < m; i++) {
            float sum = 0.0f;
            for (int64_t p = 0; p < k; p++) {
                float a = input(A, ta == CUBLAS_OP_N ? i + p * lda : p + i * lda, at, compute);
                float b = input(B, tb == CUBLAS_OP_N ? p + j * ldb : j + p * ldb, bt, compute);
                sum += a * b;
            }
            C[i + j * ldc] = alpha * sum + (beta != 0.0f ? beta * C[i + j * ldc] : 0.0f);
        }
}

#define FAKE_SGEMM(name, INT)                                                                      \
    FAKE cublasStatus_t name(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, INT m,  \
                             INT n, INT k, const float *alpha, const float *A, INT lda,            \
                             const float *B, INT ldb, const float *beta, float *C, INT ldc)        \
    {                                                                                              \
        (void)h;                                                                                   \
        record(#name, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F);                     \
        gemm(ta, tb, m, n, k, *alpha, A, CUDA_R_32F, lda, B, CUDA_R_32F, ldb, *beta, C, ldc,       \
             CUBLAS_COMPUTE_32F);                                                                  \
        return CUBLAS_STATUS_SUCCESS;                                                              \
    }
FAKE_SGEMM(cublasSgemm_v2, int)
FAKE_SGEMM(cublasSgemm_v2_64, int64_t)

#define FAKE_GEMMEX(name, INT)                                                                     \
    FAKE cublasStatus_t name(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, INT m,  \
                             INT n, INT k, const void *alpha, const void *A, cudaDataType at,      \
                             INT lda, const void *B, cudaDataType bt, INT ldb, const void *beta,   \
                             void *C, cudaDataType ct, INT ldc, cublasComputeType_t compute,       \
                             cublasGemmAlgo_t algo)                                                \
    {                                                                                              \
        (void)h;                                                                                   \
        (void)algo;                                                                                \
        record(#name, at, bt, ct, compute);                                                        \
        if (!fake_types_supported(at, bt, ct))                                                     \
            return CUBLAS_STATUS_NOT_SUPPORTED;                                                    \
        gemm(ta, tb, m, n, k, *(const float *)alpha, A, at, lda, B, bt, ldb,                       \
             *(const float *)beta, C, ldc, compute);                                               \
        return CUBLAS_STATUS_SUCCESS;                                                              \
    }
FAKE_GEMMEX(cublasGemmEx, int)
FAKE_GEMMEX(cublasGemmEx_64, int64_t)

#define FAKE_SGEMM_STRIDED(name, INT)                                                              \
    FAKE cublasStatus_t name(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, INT m,  \
                             INT n, INT k, const float *alpha, const float *A, INT lda,            \
                             long long sa, const float *B, INT ldb, long long sb,                  \
                             const float *beta, float *C, INT ldc, long long sc, INT batch)        \
    {                                                                                              \
        (void)h;                                                                                   \
        record(#name, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F);                     \
        for (INT b = 0; b < batch; b++)                                                            \
            gemm(ta, tb, m, n, k, *alpha, A + b * sa, CUDA_R_32F, lda, B + b * sb, CUDA_R_32F,     \
                 ldb, *beta, C + b * sc, ldc, CUBLAS_COMPUTE_32F);                                 \
        return CUBLAS_STATUS_SUCCESS;                                                              \
    }
FAKE_SGEMM_STRIDED(cublasSgemmStridedBatched, int)
FAKE_SGEMM_STRIDED(cublasSgemmStridedBatched_64, int64_t)

#define FAKE_GEMMEX_STRIDED(name, INT)                                                             \
    FAKE cublasStatus_t name(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, INT m,  \
                             INT n, INT k, const void *alpha, const void *A, cudaDataType at,      \
                             INT lda, long long sa, const void *B, cudaDataType bt, INT ldb,       \
                             long long sb, const void *beta, void *C, cudaDataType ct, INT ldc,    \
                             long long sc, INT batch, cublasComputeType_t compute,                 \
                             cublasGemmAlgo_t algo)                                                \
    {                                                                                              \
        (void)h;                                                                                   \
        (void)algo;                                                                                \
        record(#name, at, bt, ct, compute);                                                        \
        if (at != CUDA_R_32F || bt != CUDA_R_32F || ct != CUDA_R_32F)                             \
            return CUBLAS_STATUS_NOT_SUPPORTED;                                                    \
        for (INT b = 0; b < batch; b++)                                                            \
            gemm(ta, tb, m, n, k, *(const float *)alpha, (const float *)A + b * sa, at, lda,       \
                 (const float *)B + b * sb, bt, ldb, *(const float *)beta,                         \
                 (float *)C + b * sc, ldc, compute);                                               \
        return CUBLAS_STATUS_SUCCESS;                                                              \
    }
FAKE_GEMMEX_STRIDED(cublasGemmStridedBatchedEx, int)
FAKE_GEMMEX_STRIDED(cublasGemmStridedBatchedEx_64, int64_t)

#define FAKE_SGEMMEX(name, INT)                                                                    \
    FAKE cublasStatus_t name(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, INT m,  \
                             INT n, INT k, const float *alpha, const void *A, cudaDataType at,     \
                             INT lda, const void *B, cudaDataType bt, INT ldb, const float *beta,  \
                             void *C, cudaDataType ct, INT ldc)                                    \
    {                                                                                              \
        (void)h;                                                                                   \
        record(#name, at, bt, ct, CUBLAS_COMPUTE_32F);                                             \
        if (!fake_types_supported(at, bt, ct))                                                     \
            return CUBLAS_STATUS_NOT_SUPPORTED;                                                    \
        gemm(ta, tb, m, n, k, *alpha, A, at, lda, B, bt, ldb, *beta, C, ldc, CUBLAS_COMPUTE_32F);  \
        return CUBLAS_STATUS_SUCCESS;                                                              \
    }
FAKE_SGEMMEX(cublasSgemmEx, int)
FAKE_SGEMMEX(cublasSgemmEx_64, int64_t)

/* y = alpha op(A) x + beta y, any strides. */
#define FAKE_SGEMV(name, INT)                                                                      \
    FAKE cublasStatus_t name(cublasHandle_t h, cublasOperation_t trans, INT m, INT n,              \
                             const float *alpha, const float *A, INT lda, const float *x,          \
                             INT incx, const float *beta, float *y, INT incy)                      \
    {                                                                                              \
        (void)h;                                                                                   \
        record(#name, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F);                     \
        INT rows = trans == CUBLAS_OP_N ? m : n, inner = trans == CUBLAS_OP_N ? n : m;             \
        for (INT i = 0; i < rows; i++) {                                                           \
            float sum = 0.0f;                                                                      \
            for (INT p = 0; p < inner; p++)                                                        \
                sum += (trans == CUBLAS_OP_N ? A[i + p * lda] : A[p + i * lda]) * x[p * incx];     \
            y[i * incy] = *alpha * sum + (*beta != 0.0f ? *beta * y[i * incy] : 0.0f);             \
        }                                                                                          \
        return CUBLAS_STATUS_SUCCESS;                                                              \
    }
FAKE_SGEMV(cublasSgemv_v2, int)
FAKE_SGEMV(cublasSgemv_v2_64, int64_t)

#define FAKE_SGER(name, INT)                                                                       \
    FAKE cublasStatus_t name(cublasHandle_t h, INT m, INT n, const float *alpha, const float *x,   \
                             INT incx, const float *y, INT incy, float *A, INT lda)                \
    {                                                                                              \
        (void)h;                                                                                   \
        record(#name, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F);                     \
        for (INT j = 0; j < n; j++)                                                                \
            for (INT i = 0; i < m; i++)                                                            \
                A[i + j * lda] += *alpha * x[i * incx] * y[j * incy];                              \
        return CUBLAS_STATUS_SUCCESS;                                                              \
    }
FAKE_SGER(cublasSger_v2, int)
FAKE_SGER(cublasSger_v2_64, int64_t)
