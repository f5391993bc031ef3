/* TEST-ONLY AMP_EXPORT of libcusolver.so.12: a CPU stand-in, never installed. Its
 * cusolverDnSgetrf is a blocked LU with partial pivoting whose trailing
 * updates go through cublasSgemm_v2, as the real cuSOLVER calls cuBLAS
 * internally, so a test can see whether those inner calls were lowered. Its
 * cusolverDnXgetrf (the 64-bit generic API, which PyTorch uses and ampshim
 * does not list) runs the same LU on fp32 data. */
#include <cublas_v2.h>
#include <cusolverDn.h>
#include <math.h>
#include <stdlib.h>

#include "runtime/export.h"

struct cusolverDnContext {
    cublasHandle_t blas;
};

AMP_EXPORT cusolverStatus_t cusolverDnCreate(cusolverDnHandle_t *handle)
{
    *handle = calloc(1, sizeof(struct cusolverDnContext));
    if (!*handle || cublasCreate(&(*handle)->blas) != CUBLAS_STATUS_SUCCESS)
        return CUSOLVER_STATUS_ALLOC_FAILED;
    return CUSOLVER_STATUS_SUCCESS;
}

AMP_EXPORT cusolverStatus_t cusolverDnDestroy(cusolverDnHandle_t handle)
{
    cublasDestroy(handle->blas);
    free(handle);
    return CUSOLVER_STATUS_SUCCESS;
}

enum { PANEL = 4 };

/* Column-major LU of an m x n matrix; ipiv 1-based, as LAPACK's. */
AMP_EXPORT cusolverStatus_t cusolverDnSgetrf(cusolverDnHandle_t handle, int m, int n, float *A, int lda,
                                       float *work, int *ipiv, int *info)
{
    (void)work;
    *info = 0;
    int steps = m < n ? m : n;
    for (int p0 = 0; p0 < steps; p0 += PANEL) {
        int pend = p0 + PANEL < steps ? p0 + PANEL : steps;
        for (int j = p0; j < pend; j++) {
            int piv = j;
            for (int i = j + 1; i < m; i++)
                if (fabsf(A[i + j * lda]) > fabsf(A[piv + j * lda]))
                    piv = i;
            ipiv[j] = piv + 1;
            if (A[piv + j * lda] == 0.0f) {
                if (!*info)
                    *info = j + 1;
                continue;
            }
            if (piv != j)
                for (int c = 0; c < n; c++) {
                    float t = A[j + c * lda];
                    A[j + c * lda] = A[piv + c * lda];
                    A[piv + c * lda] = t;
                }
            for (int i = j + 1; i < m; i++)
                A[i + j * lda] /= A[j + j * lda];
            /* Update the rest of the panel's columns. */
            for (int c = j + 1; c < pend; c++)
                for (int i = j + 1; i < m; i++)
                    A[i + c * lda] -= A[i + j * lda] * A[j + c * lda];
        }
        if (pend >= n)
            continue;
        /* U12 = L11^-1 A12, then the trailing update by cuBLAS:
         * A22 -= L21 U12. */
        for (int c = pend; c < n; c++)
            for (int j = p0; j < pend; j++)
                for (int i = j + 1; i < pend; i++)
                    A[i + c * lda] -= A[i + j * lda] * A[j + c * lda];
        if (pend < m) {
            float minus_one = -1.0f, one = 1.0f;
            cublasSgemm(handle->blas, CUBLAS_OP_N, CUBLAS_OP_N, m - pend, n - pend, pend - p0,
                        &minus_one, A + pend + p0 * lda, lda, A + p0 + pend * lda, lda, &one,
                        A + pend + pend * lda, lda);
        }
    }
    return CUSOLVER_STATUS_SUCCESS;
}

AMP_EXPORT cusolverStatus_t cusolverDnXgetrf(cusolverDnHandle_t handle, cusolverDnParams_t params,
                                             int64_t m, int64_t n, cudaDataType type_a, void *A,
                                             int64_t lda, int64_t *ipiv, cudaDataType compute,
                                             void *device_buffer, size_t device_bytes,
                                             void *host_buffer, size_t host_bytes, int *info)
{
    (void)params, (void)device_buffer, (void)device_bytes, (void)host_buffer, (void)host_bytes;
    if (type_a != CUDA_R_32F || compute != CUDA_R_32F || m > 4096 || n > 4096 || lda > 4096)
        return CUSOLVER_STATUS_NOT_SUPPORTED;
    int pivots[4096];
    cusolverStatus_t status =
        cusolverDnSgetrf(handle, (int)m, (int)n, A, (int)lda, NULL, pivots, info);
    for (int64_t i = 0; i < (m < n ? m : n); i++)
        ipiv[i] = pivots[i];
    return status;
}
