/* TEST-ONLY AMP_EXPORT of libcublasLt.so.13: a CPU stand-in, never installed.
 * Descriptors live in the real header's opaque storage. cublasLtMatmul works
 * on host memory, records the compute type it ran with, and emulates its
 * precision. One rule stands in for cuBLASLt's algorithm checks: an algo
 * remembers the compute type it was chosen for (data[0]) and fails with
 * CUBLAS_STATUS_NOT_SUPPORTED under any other. */
#include <cublasLt.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/export.h"
#include "runtime/export.h"
#include "shim/cuda/cublas_abi.h"

#define SAME(real, ours) _Static_assert((int)(real) == (int)(ours), #ours)
SAME(CUBLASLT_MATMUL_DESC_COMPUTE_TYPE, AMP_CUBLASLT_MATMUL_DESC_COMPUTE_TYPE);
SAME(CUBLASLT_MATMUL_DESC_SCALE_TYPE, AMP_CUBLASLT_MATMUL_DESC_SCALE_TYPE);
SAME(CUBLASLT_MATRIX_LAYOUT_TYPE, AMP_CUBLASLT_MATRIX_LAYOUT_TYPE);


static int last_compute = -1;
AMP_EXPORT int fake_cublaslt_last_compute(void)
{
    return last_compute;
}

AMP_EXPORT cublasStatus_t cublasLtCreate(cublasLtHandle_t *h)
{
    *h = (cublasLtHandle_t)malloc(1);
    return CUBLAS_STATUS_SUCCESS;
}

AMP_EXPORT cublasStatus_t cublasLtDestroy(cublasLtHandle_t h)
{
    free(h);
    return CUBLAS_STATUS_SUCCESS;
}

/* desc->data: [0] compute, [1] scale, [3] transa, [4] transb (by attribute). */
AMP_EXPORT cublasStatus_t cublasLtMatmulDescCreate(cublasLtMatmulDesc_t *d, cublasComputeType_t compute,
                                             cudaDataType_t scale)
{
    *d = calloc(1, sizeof **d);
    (*d)->data[CUBLASLT_MATMUL_DESC_COMPUTE_TYPE] = (uint64_t)compute;
    (*d)->data[CUBLASLT_MATMUL_DESC_SCALE_TYPE] = (uint64_t)scale;
    return CUBLAS_STATUS_SUCCESS;
}

AMP_EXPORT cublasStatus_t cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t d)
{
    free(d);
    return CUBLAS_STATUS_SUCCESS;
}

AMP_EXPORT cublasStatus_t cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t d,
                                                   cublasLtMatmulDescAttributes_t attr,
                                                   const void *buf, size_t size)
{
    if (attr > CUBLASLT_MATMUL_DESC_TRANSB || size != sizeof(int32_t))
        return CUBLAS_STATUS_INVALID_VALUE;
    int32_t v;
    memcpy(&v, buf, sizeof v);
    d->data[attr] = (uint64_t)v;
    return CUBLAS_STATUS_SUCCESS;
}

AMP_EXPORT cublasStatus_t cublasLtMatmulDescGetAttribute(cublasLtMatmulDesc_t d,
                                                   cublasLtMatmulDescAttributes_t attr, void *buf,
                                                   size_t size, size_t *written)
{
    if (attr > CUBLASLT_MATMUL_DESC_TRANSB || size != sizeof(int32_t))
        return CUBLAS_STATUS_INVALID_VALUE;
    int32_t v = (int32_t)d->data[attr];
    memcpy(buf, &v, sizeof v);
    *written = sizeof v;
    return CUBLAS_STATUS_SUCCESS;
}

/* layout->data: [0] type, [1] rows, [2] cols, [3] ld. */
AMP_EXPORT cublasStatus_t cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t *l, cudaDataType type,
                                               uint64_t rows, uint64_t cols, int64_t ld)
{
    *l = calloc(1, sizeof **l);
    (*l)->data[0] = (uint64_t)type;
    (*l)->data[1] = rows;
    (*l)->data[2] = cols;
    (*l)->data[3] = (uint64_t)ld;
    return CUBLAS_STATUS_SUCCESS;
}

AMP_EXPORT cublasStatus_t cublasLtMatrixLayoutDestroy(cublasLtMatrixLayout_t l)
{
    free(l);
    return CUBLAS_STATUS_SUCCESS;
}

AMP_EXPORT cublasStatus_t cublasLtMatrixLayoutGetAttribute(cublasLtMatrixLayout_t l,
                                                     cublasLtMatrixLayoutAttribute_t attr, void *buf,
                                                     size_t size, size_t *written)
{
    if (attr != CUBLASLT_MATRIX_LAYOUT_TYPE || size != sizeof(uint32_t))
        return CUBLAS_STATUS_INVALID_VALUE;
    uint32_t v = (uint32_t)l->data[0];
    memcpy(buf, &v, sizeof v);
    *written = sizeof v;
    return CUBLAS_STATUS_SUCCESS;
}

static float input(const void *p, uint64_t i, int type, int compute)
{
    float x = type == CUDA_R_16F ? (float)((const _Float16 *)p)[i] : ((const float *)p)[i];
    uint32_t u;
    unsigned drop = compute == CUBLAS_COMPUTE_32F_FAST_16BF ? 16 : compute == CUBLAS_COMPUTE_32F_FAST_TF32 ? 13 : 0;
    if (compute == CUBLAS_COMPUTE_32F_FAST_16F)
        return (float)(_Float16)x;
    if (!drop)
        return x;
    memcpy(&u, &x, 4);
    u = (u + ((1u << (drop - 1)) - 1) + ((u >> drop) & 1u)) & ~((1u << drop) - 1);
    memcpy(&x, &u, 4);
    return x;
}

/* D = alpha op(A) op(B) + beta C, column major (no transposes in the tests). */
AMP_EXPORT cublasStatus_t cublasLtMatmul(cublasLtHandle_t h, cublasLtMatmulDesc_t d, const void *alpha,
                                   const void *A, cublasLtMatrixLayout_t al, const void *B,
                                   cublasLtMatrixLayout_t bl, const void *beta, const void *C,
                                   cublasLtMatrixLayout_t cl, void *D, cublasLtMatrixLayout_t dl,
                                   const cublasLtMatmulAlgo_t *algo, void *ws, size_t wsb,
                                   cudaStream_t stream)
{
    (void)h, (void)ws, (void)wsb, (void)stream, (void)cl;
    int compute = (int)d->data[CUBLASLT_MATMUL_DESC_COMPUTE_TYPE];
    if (algo && (int)algo->data[0] != compute)
        return CUBLAS_STATUS_NOT_SUPPORTED;
    last_compute = compute;
    uint64_t m = al->data[1], k = al->data[2], n = bl->data[2];
    float a = *(const float *)alpha, b = *(const float *)beta;
    for (uint64_t j = 0; j < n; j++)
        for (uint64_t i = 0; i < m; i++) {
            float sum = 0.0f;
            for (uint64_t p = 0; p < k; p++)
                sum += input(A, i + p * al->data[3], (int)al->data[0], compute) *
                       input(B, p + j * bl->data[3], (int)bl->data[0], compute);
            float c = ((const float *)C)[i + j * cl->data[3]];
            ((float *)D)[i + j * dl->data[3]] = a * sum + (b != 0.0f ? b * c : 0.0f);
        }
    return CUBLAS_STATUS_SUCCESS;
}
