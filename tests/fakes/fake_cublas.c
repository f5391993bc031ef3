/* TEST-ONLY AMP_EXPORT of libcublas.so.13: a CPU stand-in, never installed, so the
 * cuBLAS hooks can be tested on machines without a GPU. Compiled against the
 * real cublas_v2.h (so every signature is the real one), it works on host
 * memory, records the last call (function, data types, compute type) for
 * the tests, and emulates each compute type's precision: FAST_16F rounds
 * the inputs to fp16, FAST_16BF to bf16, FAST_TF32 to tf32, and every
 * product is accumulated in fp32 in a fixed order. */
#include <cublas_v2.h>
#include <math.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/export.h"
#include "runtime/export.h"
#include "shim/cublas/cublas_abi.h"
#include "tests/fakes/fake_common.h"
#include "tests/fakes/fake_cublas.h"

/* Which soname this build is (13, or 12 for the second build that stands
 * in for an older cuBLAS beside it): handles carry it, and a GEMM given a
 * handle of the other library fails, as the real one would misbehave. */
#ifndef FAKE_CUBLAS_MAJOR
#define FAKE_CUBLAS_MAJOR 13
#endif

static struct fake_cublas_record last;

AMP_EXPORT const struct fake_cublas_record *fake_cublas_last_call(void)
{
    return &last;
}

/* The fake CUPTI, once the shim has it record kernels: each call of this
 * fake is one kernel it reports (it registers itself here). */
static void (*_Atomic on_launch)(void);

AMP_EXPORT void fake_cublas_on_launch(void (*launch)(void))
{
    atomic_store(&on_launch, launch);
}

static void record(const char *function, int at, int bt, int ct, int compute)
{
    void (*launch)(void) = atomic_load_explicit(&on_launch, memory_order_relaxed);
    if (launch)
        launch(); /* the fake CUPTI's activity record of this "kernel" */
    fake_record_name(last.function, sizeof last.function, function);
    last.atype = at;
    last.btype = bt;
    last.ctype = ct;
    last.compute = compute;
    last.major = FAKE_CUBLAS_MAJOR;
    last.calls++;
}

struct cublasContext {
    long math_writes;
    cublasMath_t math;
    cublasPointerMode_t pointer;
    cudaStream_t stream;
    int major;
    int device;        /* current when it was made, as a real handle's */
    const void *owner; /* the copy of this library that made it */
};

/* A handle another library made (another major, or another copy of this
 * one): a real cuBLAS would misread it; the fake refuses it. */
static int foreign(cublasHandle_t h)
{
    return h->major != FAKE_CUBLAS_MAJOR || h->owner != (const void *)&last;
}

/* The fake runtime's devices, when it is loaded (weak: this fake also runs
 * without it): a handle belongs to the device current at cublasCreate, and
 * a call that touches another device's memory is counted, as a real GPU
 * would fault or read another device's memory. */
extern cudaError_t cudaGetDevice(int *device) __attribute__((weak));
extern int fake_cudart_device_of(const void *p) __attribute__((weak));
static _Atomic long cross_device;

AMP_EXPORT long fake_cublas_cross_device(void)
{
    return atomic_load(&cross_device);
}

static void touch(cublasHandle_t h, const void *p)
{
    int d = fake_cudart_device_of ? fake_cudart_device_of(p) : -1;
    if (d >= 0 && d != h->device)
        atomic_fetch_add(&cross_device, 1);
}

AMP_EXPORT cublasStatus_t cublasCreate_v2(cublasHandle_t *handle)
{
    *handle = calloc(1, sizeof(struct cublasContext));
    if (*handle && cudaGetDevice)
        cudaGetDevice(&(*handle)->device);
    if (*handle) {
        (*handle)->major = FAKE_CUBLAS_MAJOR;
        (*handle)->owner = (const void *)&last;
    }
    return *handle ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_ALLOC_FAILED;
}

AMP_EXPORT cublasStatus_t cublasDestroy_v2(cublasHandle_t handle)
{
    free(handle);
    return CUBLAS_STATUS_SUCCESS;
}

/* How many times a handle's math mode was set: tests see none from the shim. */
AMP_EXPORT long fake_cublas_math_writes(cublasHandle_t h)
{
    return h->math_writes;
}

AMP_EXPORT cublasStatus_t cublasSetMathMode(cublasHandle_t h, cublasMath_t mode)
{
    h->math_writes++;
    h->math = mode;
    return CUBLAS_STATUS_SUCCESS;
}

AMP_EXPORT cublasStatus_t cublasGetMathMode(cublasHandle_t h, cublasMath_t *mode)
{
    *mode = h->math;
    return CUBLAS_STATUS_SUCCESS;
}

AMP_EXPORT cublasStatus_t cublasSetPointerMode_v2(cublasHandle_t h, cublasPointerMode_t mode)
{
    h->pointer = mode;
    return CUBLAS_STATUS_SUCCESS;
}

AMP_EXPORT cublasStatus_t cublasGetPointerMode_v2(cublasHandle_t h, cublasPointerMode_t *mode)
{
    *mode = h->pointer;
    return CUBLAS_STATUS_SUCCESS;
}

/* An input as the tensor cores would see it under this compute type. */
static float input(const void *p, int64_t i, int type, int compute)
{
    float x = type == CUDA_R_16F ? (float)((const _Float16 *)p)[i] : ((const float *)p)[i];
    switch (compute) {
    case CUBLAS_COMPUTE_32F_FAST_16F:
        return (float)(_Float16)x;
    case CUBLAS_COMPUTE_32F_FAST_16BF:
        return fake_round_bits(x, 16);
    case CUBLAS_COMPUTE_32F_FAST_TF32:
        return fake_round_bits(x, 13);
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
    AMP_EXPORT cublasStatus_t name(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb,   \
                                   INT m, INT n, INT k, const float *alpha, const float *A,        \
                                   INT lda, const float *B, INT ldb, const float *beta, float *C,  \
                                   INT ldc)                                                        \
    {                                                                                              \
        if (foreign(h))                                                                            \
            return CUBLAS_STATUS_INVALID_VALUE;                                                    \
        record(#name, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F);                     \
        gemm(ta, tb, m, n, k, *alpha, A, CUDA_R_32F, lda, B, CUDA_R_32F, ldb, *beta, C, ldc,       \
             CUBLAS_COMPUTE_32F);                                                                  \
        return CUBLAS_STATUS_SUCCESS;                                                              \
    }
FAKE_SGEMM(cublasSgemm_v2, int)
FAKE_SGEMM(cublasSgemm_v2_64, int64_t)

#define FAKE_GEMMEX(name, INT)                                                                     \
    AMP_EXPORT cublasStatus_t name(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb,   \
                                   INT m, INT n, INT k, const void *alpha, const void *A,          \
                                   cudaDataType at, INT lda, const void *B, cudaDataType bt,       \
                                   INT ldb, const void *beta, void *C, cudaDataType ct, INT ldc,   \
                                   cublasComputeType_t compute, cublasGemmAlgo_t algo)             \
    {                                                                                              \
        (void)algo;                                                                                \
        if (foreign(h))                                                                            \
            return CUBLAS_STATUS_INVALID_VALUE;                                                    \
        record(#name, at, bt, ct, compute);                                                        \
        if (!fake_types_supported(at, bt, ct))                                                     \
            return CUBLAS_STATUS_NOT_SUPPORTED;                                                    \
        gemm(ta, tb, m, n, k, *(const float *)alpha, A, at, lda, B, bt, ldb, *(const float *)beta, \
             C, ldc, compute);                                                                     \
        return CUBLAS_STATUS_SUCCESS;                                                              \
    }
FAKE_GEMMEX(cublasGemmEx, int)
FAKE_GEMMEX(cublasGemmEx_64, int64_t)

#define FAKE_SGEMM_STRIDED(name, INT)                                                              \
    AMP_EXPORT cublasStatus_t name(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb,   \
                                   INT m, INT n, INT k, const float *alpha, const float *A,        \
                                   INT lda, long long sa, const float *B, INT ldb, long long sb,   \
                                   const float *beta, float *C, INT ldc, long long sc, INT batch)  \
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
    AMP_EXPORT cublasStatus_t name(                                                                \
        cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, INT m, INT n, INT k,         \
        const void *alpha, const void *A, cudaDataType at, INT lda, long long sa, const void *B,   \
        cudaDataType bt, INT ldb, long long sb, const void *beta, void *C, cudaDataType ct,        \
        INT ldc, long long sc, INT batch, cublasComputeType_t compute, cublasGemmAlgo_t algo)      \
    {                                                                                              \
        (void)h;                                                                                   \
        (void)algo;                                                                                \
        record(#name, at, bt, ct, compute);                                                        \
        if (at != CUDA_R_32F || bt != CUDA_R_32F || ct != CUDA_R_32F)                              \
            return CUBLAS_STATUS_NOT_SUPPORTED;                                                    \
        for (INT b = 0; b < batch; b++)                                                            \
            gemm(ta, tb, m, n, k, *(const float *)alpha, (const float *)A + b * sa, at, lda,       \
                 (const float *)B + b * sb, bt, ldb, *(const float *)beta, (float *)C + b * sc,    \
                 ldc, compute);                                                                    \
        return CUBLAS_STATUS_SUCCESS;                                                              \
    }
FAKE_GEMMEX_STRIDED(cublasGemmStridedBatchedEx, int)
FAKE_GEMMEX_STRIDED(cublasGemmStridedBatchedEx_64, int64_t)

#define FAKE_SGEMMEX(name, INT)                                                                    \
    AMP_EXPORT cublasStatus_t name(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb,   \
                                   INT m, INT n, INT k, const float *alpha, const void *A,         \
                                   cudaDataType at, INT lda, const void *B, cudaDataType bt,       \
                                   INT ldb, const float *beta, void *C, cudaDataType ct, INT ldc)  \
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
static void gemv(int trans, int64_t m, int64_t n, float alpha, const float *A, int64_t lda,
                 const float *x, int64_t incx, float beta, float *y, int64_t incy)
{
    int64_t rows = trans == CUBLAS_OP_N ? m : n, inner = trans == CUBLAS_OP_N ? n : m;
    for (int64_t i = 0; i < rows; i++) {
        float sum = 0.0f;
        for (int64_t p = 0; p < inner; p++)
            sum += (trans == CUBLAS_OP_N ? A[i + p * lda] : A[p + i * lda]) * x[p * incx];
        y[i * incy] = alpha * sum + (beta != 0.0f ? beta * y[i * incy] : 0.0f);
    }
}

#define FAKE_SGEMV(name, INT)                                                                      \
    AMP_EXPORT cublasStatus_t name(cublasHandle_t h, cublasOperation_t trans, INT m, INT n,        \
                                   const float *alpha, const float *A, INT lda, const float *x,    \
                                   INT incx, const float *beta, float *y, INT incy)                \
    {                                                                                              \
        (void)h;                                                                                   \
        record(#name, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F);                     \
        gemv(trans, m, n, *alpha, A, lda, x, incx, *beta, y, incy);                                \
        return CUBLAS_STATUS_SUCCESS;                                                              \
    }
FAKE_SGEMV(cublasSgemv_v2, int)
FAKE_SGEMV(cublasSgemv_v2_64, int64_t)

#define FAKE_SGER(name, INT)                                                                       \
    AMP_EXPORT cublasStatus_t name(cublasHandle_t h, INT m, INT n, const float *alpha,             \
                                   const float *x, INT incx, const float *y, INT incy, float *A,   \
                                   INT lda)                                                        \
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

/* Pointer-array batches. */
#define FAKE_SGEMM_BATCHED(name, INT)                                                              \
    AMP_EXPORT cublasStatus_t name(                                                                \
        cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, INT m, INT n, INT k,         \
        const float *alpha, const float *const A[], INT lda, const float *const B[], INT ldb,      \
        const float *beta, float *const C[], INT ldc, INT batch)                                   \
    {                                                                                              \
        (void)h;                                                                                   \
        record(#name, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F);                     \
        for (INT b = 0; b < batch; b++)                                                            \
            gemm(ta, tb, m, n, k, *alpha, A[b], CUDA_R_32F, lda, B[b], CUDA_R_32F, ldb, *beta,     \
                 C[b], ldc, CUBLAS_COMPUTE_32F);                                                   \
        return CUBLAS_STATUS_SUCCESS;                                                              \
    }
FAKE_SGEMM_BATCHED(cublasSgemmBatched, int)
FAKE_SGEMM_BATCHED(cublasSgemmBatched_64, int64_t)

#define FAKE_GEMMEX_BATCHED(name, INT)                                                             \
    AMP_EXPORT cublasStatus_t name(                                                                \
        cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, INT m, INT n, INT k,         \
        const void *alpha, const void *const A[], cudaDataType at, INT lda, const void *const B[], \
        cudaDataType bt, INT ldb, const void *beta, void *const C[], cudaDataType ct, INT ldc,     \
        INT batch, cublasComputeType_t compute, cublasGemmAlgo_t algo)                             \
    {                                                                                              \
        (void)h;                                                                                   \
        (void)algo;                                                                                \
        record(#name, at, bt, ct, compute);                                                        \
        if (!fake_types_supported(at, bt, ct))                                                     \
            return CUBLAS_STATUS_NOT_SUPPORTED;                                                    \
        for (INT b = 0; b < batch; b++)                                                            \
            gemm(ta, tb, m, n, k, *(const float *)alpha, A[b], at, lda, B[b], bt, ldb,             \
                 *(const float *)beta, C[b], ldc, compute);                                        \
        return CUBLAS_STATUS_SUCCESS;                                                              \
    }
FAKE_GEMMEX_BATCHED(cublasGemmBatchedEx, int)
FAKE_GEMMEX_BATCHED(cublasGemmBatchedEx_64, int64_t)

/* Batched gemv: the single-vector fake per batch entry (any strides). */
#define FAKE_SGEMV_BATCHED(name, INT)                                                              \
    AMP_EXPORT cublasStatus_t name(cublasHandle_t h, cublasOperation_t trans, INT m, INT n,        \
                                   const float *alpha, const float *const A[], INT lda,            \
                                   const float *const x[], INT incx, const float *beta,            \
                                   float *const y[], INT incy, INT batch)                          \
    {                                                                                              \
        (void)h;                                                                                   \
        for (INT b = 0; b < batch; b++)                                                            \
            gemv(trans, m, n, *alpha, A[b], lda, x[b], incx, *beta, y[b], incy);                   \
        record(#name, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F);                     \
        return CUBLAS_STATUS_SUCCESS;                                                              \
    }
FAKE_SGEMV_BATCHED(cublasSgemvBatched, int)
FAKE_SGEMV_BATCHED(cublasSgemvBatched_64, int64_t)

#define FAKE_SGEMV_STRIDED(name, INT)                                                              \
    AMP_EXPORT cublasStatus_t name(cublasHandle_t h, cublasOperation_t trans, INT m, INT n,        \
                                   const float *alpha, const float *A, INT lda, long long sa,      \
                                   const float *x, INT incx, long long sx, const float *beta,      \
                                   float *y, INT incy, long long sy, INT batch)                    \
    {                                                                                              \
        (void)h;                                                                                   \
        for (INT b = 0; b < batch; b++)                                                            \
            gemv(trans, m, n, *alpha, A + b * sa, lda, x + b * sx, incx, *beta, y + b * sy, incy); \
        record(#name, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F);                     \
        return CUBLAS_STATUS_SUCCESS;                                                              \
    }
FAKE_SGEMV_STRIDED(cublasSgemvStridedBatched, int)
FAKE_SGEMV_STRIDED(cublasSgemvStridedBatched_64, int64_t)

/* Level-1 reductions, host pointer mode. */
#define FAKE_REDUCTION(name, INT, TERM, FINISH)                                                    \
    AMP_EXPORT cublasStatus_t name(cublasHandle_t h, INT n, const float *x, INT incx,              \
                                   float *result)                                                  \
    {                                                                                              \
        touch(h, x);                                                                               \
        touch(h, result);                                                                          \
        record(#name, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F);                     \
        float acc = 0.0f;                                                                          \
        for (INT i = 0; i < n; i++)                                                                \
            acc += TERM(x[i * incx]);                                                              \
        *result = FINISH(acc);                                                                     \
        return CUBLAS_STATUS_SUCCESS;                                                              \
    }
#define FAKE_SQUARE(v) ((v) * (v))
#define FAKE_SAME(v) (v)
FAKE_REDUCTION(cublasSnrm2_v2, int, FAKE_SQUARE, sqrtf)
FAKE_REDUCTION(cublasSnrm2_v2_64, int64_t, FAKE_SQUARE, sqrtf)
FAKE_REDUCTION(cublasSasum_v2, int, fabsf, FAKE_SAME)
FAKE_REDUCTION(cublasSasum_v2_64, int64_t, fabsf, FAKE_SAME)

#define FAKE_SDOT(name, INT)                                                                       \
    AMP_EXPORT cublasStatus_t name(cublasHandle_t h, INT n, const float *x, INT incx,              \
                                   const float *y, INT incy, float *result)                        \
    {                                                                                              \
        (void)h;                                                                                   \
        record(#name, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F);                     \
        float acc = 0.0f;                                                                          \
        for (INT i = 0; i < n; i++)                                                                \
            acc += x[i * incx] * y[i * incy];                                                      \
        *result = acc;                                                                             \
        return CUBLAS_STATUS_SUCCESS;                                                              \
    }
FAKE_SDOT(cublasSdot_v2, int)
FAKE_SDOT(cublasSdot_v2_64, int64_t)

/* Symmetric and triangular level 3. The handle's math mode decides the
 * precision, as in cuBLAS: CUBLAS_TF32_TENSOR_OP_MATH rounds the inputs to
 * tf32 (not under NVIDIA_TF32_OVERRIDE=0); the record's compute type says
 * which was used. Column-major; A's unused triangle is never read. */
static int level3_compute(cublasHandle_t h)
{
    const char *o = getenv("NVIDIA_TF32_OVERRIDE");
    return (h->math & 0xf) == CUBLAS_TF32_TENSOR_OP_MATH && !(o && strcmp(o, "0") == 0)
               ? CUBLAS_COMPUTE_32F_FAST_TF32
               : CUBLAS_COMPUTE_32F;
}

/* Element (i, j) of a symmetric A stored in its `uplo` triangle. */
static float sym_at(const float *A, int64_t lda, int uplo, int64_t i, int64_t j)
{
    int lower_stored = uplo == CUBLAS_FILL_MODE_LOWER;
    if ((i >= j) != lower_stored && i != j) {
        int64_t t = i;
        i = j, j = t;
    }
    return A[i + j * lda];
}

/* Element (i, j) of op(A) for a triangular A. */
static float tri_at(const float *A, int64_t lda, int uplo, int trans, int diag, int64_t i,
                    int64_t j)
{
    if (trans != CUBLAS_OP_N) {
        int64_t t = i;
        i = j, j = t;
    }
    if (i == j)
        return diag == CUBLAS_DIAG_UNIT ? 1.0f : A[i + j * lda];
    if ((i > j) != (uplo == CUBLAS_FILL_MODE_LOWER))
        return 0.0f;
    return A[i + j * lda];
}

#define FAKE_SSYRK(name, INT)                                                                      \
    AMP_EXPORT cublasStatus_t name(cublasHandle_t h, cublasFillMode_t uplo,                        \
                                   cublasOperation_t trans, INT n, INT k, const float *alpha,      \
                                   const float *A, INT lda, const float *beta, float *C, INT ldc)  \
    {                                                                                              \
        int compute = level3_compute(h);                                                           \
        record(#name, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, compute);                                \
        for (INT j = 0; j < n; j++)                                                                \
            for (INT i = uplo == CUBLAS_FILL_MODE_LOWER ? j : 0;                                   \
                 i < (uplo == CUBLAS_FILL_MODE_LOWER ? n : j + 1); i++) {                          \
                float sum = 0.0f;                                                                  \
                for (INT p = 0; p < k; p++) {                                                      \
                    int64_t ai = trans == CUBLAS_OP_N ? i + p * lda : p + i * lda;                 \
                    int64_t aj = trans == CUBLAS_OP_N ? j + p * lda : p + j * lda;                 \
                    sum += input(A, ai, CUDA_R_32F, compute) * input(A, aj, CUDA_R_32F, compute);  \
                }                                                                                  \
                C[i + j * ldc] = *alpha * sum + (*beta != 0.0f ? *beta * C[i + j * ldc] : 0.0f);   \
            }                                                                                      \
        return CUBLAS_STATUS_SUCCESS;                                                              \
    }
FAKE_SSYRK(cublasSsyrk_v2, int)
FAKE_SSYRK(cublasSsyrk_v2_64, int64_t)

#define FAKE_SSYMM(name, INT)                                                                      \
    AMP_EXPORT cublasStatus_t name(cublasHandle_t h, cublasSideMode_t side, cublasFillMode_t uplo, \
                                   INT m, INT n, const float *alpha, const float *A, INT lda,      \
                                   const float *B, INT ldb, const float *beta, float *C, INT ldc)  \
    {                                                                                              \
        int compute = level3_compute(h);                                                           \
        record(#name, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, compute);                                \
        INT inner = side == CUBLAS_SIDE_LEFT ? m : n;                                              \
        for (INT j = 0; j < n; j++)                                                                \
            for (INT i = 0; i < m; i++) {                                                          \
                float sum = 0.0f;                                                                  \
                for (INT p = 0; p < inner; p++) {                                                  \
                    float a = side == CUBLAS_SIDE_LEFT ? sym_at(A, lda, uplo, i, p)                \
                                                       : sym_at(A, lda, uplo, p, j);               \
                    float b = side == CUBLAS_SIDE_LEFT ? B[p + j * ldb] : B[i + p * ldb];          \
                    sum += input(&a, 0, CUDA_R_32F, compute) * input(&b, 0, CUDA_R_32F, compute);  \
                }                                                                                  \
                C[i + j * ldc] = *alpha * sum + (*beta != 0.0f ? *beta * C[i + j * ldc] : 0.0f);   \
            }                                                                                      \
        return CUBLAS_STATUS_SUCCESS;                                                              \
    }
FAKE_SSYMM(cublasSsymm_v2, int)
FAKE_SSYMM(cublasSsymm_v2_64, int64_t)

/* Out of place, as cuBLAS's v2 trmm: C = alpha op(A) B or alpha B op(A). */
#define FAKE_STRMM(name, INT)                                                                      \
    AMP_EXPORT cublasStatus_t name(cublasHandle_t h, cublasSideMode_t side, cublasFillMode_t uplo, \
                                   cublasOperation_t trans, cublasDiagType_t diag, INT m, INT n,   \
                                   const float *alpha, const float *A, INT lda, const float *B,    \
                                   INT ldb, float *C, INT ldc)                                     \
    {                                                                                              \
        int compute = level3_compute(h);                                                           \
        record(#name, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, compute);                                \
        INT inner = side == CUBLAS_SIDE_LEFT ? m : n;                                              \
        for (INT j = 0; j < n; j++)                                                                \
            for (INT i = 0; i < m; i++) {                                                          \
                float sum = 0.0f;                                                                  \
                for (INT p = 0; p < inner; p++) {                                                  \
                    float a = side == CUBLAS_SIDE_LEFT ? tri_at(A, lda, uplo, trans, diag, i, p)   \
                                                       : tri_at(A, lda, uplo, trans, diag, p, j);  \
                    float b = side == CUBLAS_SIDE_LEFT ? B[p + j * ldb] : B[i + p * ldb];          \
                    sum += input(&a, 0, CUDA_R_32F, compute) * input(&b, 0, CUDA_R_32F, compute);  \
                }                                                                                  \
                C[i + j * ldc] = *alpha * sum;                                                     \
            }                                                                                      \
        return CUBLAS_STATUS_SUCCESS;                                                              \
    }
FAKE_STRMM(cublasStrmm_v2, int)
FAKE_STRMM(cublasStrmm_v2_64, int64_t)

/* op(A) X = alpha B, left side only (this fake refuses the right side). */
#define FAKE_STRSM(name, INT)                                                                      \
    AMP_EXPORT cublasStatus_t name(cublasHandle_t h, cublasSideMode_t side, cublasFillMode_t uplo, \
                                   cublasOperation_t trans, cublasDiagType_t diag, INT m, INT n,   \
                                   const float *alpha, const float *A, INT lda, float *B, INT ldb) \
    {                                                                                              \
        int compute = level3_compute(h);                                                           \
        if (side != CUBLAS_SIDE_LEFT)                                                              \
            return CUBLAS_STATUS_NOT_SUPPORTED;                                                    \
        record(#name, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, compute);                                \
        int lower = (uplo == CUBLAS_FILL_MODE_LOWER) == (trans == CUBLAS_OP_N);                    \
        for (INT j = 0; j < n; j++)                                                                \
            for (INT s = 0; s < m; s++) {                                                          \
                INT i = lower ? s : m - 1 - s;                                                     \
                float v = *alpha * B[i + j * ldb];                                                 \
                for (INT t = 0; t < s; t++) {                                                      \
                    INT p = lower ? t : m - 1 - t;                                                 \
                    float a = tri_at(A, lda, uplo, trans, diag, i, p);                             \
                    v -= input(&a, 0, CUDA_R_32F, compute) *                                       \
                         input(&B[p + j * ldb], 0, CUDA_R_32F, compute);                           \
                }                                                                                  \
                B[i + j * ldb] = v / tri_at(A, lda, uplo, trans, diag, i, i);                      \
            }                                                                                      \
        return CUBLAS_STATUS_SUCCESS;                                                              \
    }
FAKE_STRSM(cublasStrsm_v2, int)
FAKE_STRSM(cublasStrsm_v2_64, int64_t)

/* The helpers ampshim builds fp16/bf16 level 3 from. Not recorded: the
 * record keeps the GEMM that did the arithmetic. */
AMP_EXPORT cublasStatus_t cublasSetStream_v2(cublasHandle_t h, cudaStream_t stream)
{
    h->stream = stream;
    return CUBLAS_STATUS_SUCCESS;
}

AMP_EXPORT cublasStatus_t cublasGetStream_v2(cublasHandle_t h, cudaStream_t *stream)
{
    *stream = h->stream;
    return CUBLAS_STATUS_SUCCESS;
}

/* Packed index of (i, j) in the uplo triangle of an n x n matrix (LAPACK). */
static int64_t packed_at(int uplo, int n, int i, int j)
{
    return uplo == CUBLAS_FILL_MODE_UPPER ? i + (int64_t)j * (j + 1) / 2
                                          : i + (int64_t)j * (2 * n - j - 1) / 2;
}

AMP_EXPORT cublasStatus_t cublasStrttp(cublasHandle_t h, cublasFillMode_t uplo, int n,
                                       const float *A, int lda, float *AP)
{
    (void)h;
    for (int j = 0; j < n; j++)
        for (int i = uplo == CUBLAS_FILL_MODE_UPPER ? 0 : j;
             i < (uplo == CUBLAS_FILL_MODE_UPPER ? j + 1 : n); i++)
            AP[packed_at(uplo, n, i, j)] = A[i + (int64_t)j * lda];
    return CUBLAS_STATUS_SUCCESS;
}

AMP_EXPORT cublasStatus_t cublasStpttr(cublasHandle_t h, cublasFillMode_t uplo, int n,
                                       const float *AP, float *A, int lda)
{
    (void)h;
    for (int j = 0; j < n; j++)
        for (int i = uplo == CUBLAS_FILL_MODE_UPPER ? 0 : j;
             i < (uplo == CUBLAS_FILL_MODE_UPPER ? j + 1 : n); i++)
            A[i + (int64_t)j * lda] = AP[packed_at(uplo, n, i, j)];
    return CUBLAS_STATUS_SUCCESS;
}

/* C = alpha op(A) + beta op(B); in place when C is A with op(A) = A. */
AMP_EXPORT cublasStatus_t cublasSgeam(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb,
                                      int m, int n, const float *alpha, const float *A, int lda,
                                      const float *beta, const float *B, int ldb, float *C, int ldc)
{
    touch(h, A);
    touch(h, B);
    touch(h, C);
    if ((C == A && ta != CUBLAS_OP_N) || (C == B && tb != CUBLAS_OP_N))
        return CUBLAS_STATUS_INVALID_VALUE;
    for (int j = 0; j < n; j++)
        for (int i = 0; i < m; i++) {
            float a = ta == CUBLAS_OP_N ? A[i + (int64_t)j * lda] : A[j + (int64_t)i * lda];
            float b = tb == CUBLAS_OP_N ? B[i + (int64_t)j * ldb] : B[j + (int64_t)i * ldb];
            C[i + (int64_t)j * ldc] = *alpha * a + *beta * b;
        }
    return CUBLAS_STATUS_SUCCESS;
}

AMP_EXPORT cublasStatus_t cublasSscal_v2(cublasHandle_t h, int n, const float *alpha, float *x,
                                         int incx)
{
    (void)h;
    for (int i = 0; i < n; i++)
        x[(int64_t)i * incx] *= *alpha;
    return CUBLAS_STATUS_SUCCESS;
}

AMP_EXPORT cublasStatus_t cublasSaxpy_v2(cublasHandle_t h, int n, const float *alpha,
                                         const float *x, int incx, float *y, int incy)
{
    (void)h;
    for (int i = 0; i < n; i++)
        y[(int64_t)i * incy] += *alpha * x[(int64_t)i * incx];
    return CUBLAS_STATUS_SUCCESS;
}
