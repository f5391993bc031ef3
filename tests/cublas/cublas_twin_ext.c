/* Test-only: an "extension module" linked to one cuBLAS (built twice: against
 * the fake libcublas.so.13 and the fake libcublas.so.12, so its references
 * carry that library's symbol version), as torch built for CUDA 13 beside a
 * CuPy built for CUDA 12 would be. It multiplies once with cublasSgemm and
 * says which library ran the call. Also built with no soname, as two
 * copies of one cuBLAS 13 (tests/fakes/copies). */
#include <cublas_v2.h>
#include <stdio.h>

#include "tests/fakes/fake_cublas.h"

#define EXPORT __attribute__((visibility("default")))
#define PASTE2(a, b) a##b
#define PASTE(a, b) PASTE2(a, b)

/* Returns the cuBLAS status; *major: the library that recorded the call;
 * function: what that library's last call was (cublasGemmEx when the shim
 * lowered it there; a lowered call that went to another copy leaves this
 * copy's record at cublasCreate's, with a foreign handle refused there). */
EXPORT int PASTE(ext_sgemm_, EXT_MAJOR)(const float *a, const float *b, float *c, int n, int *major,
                                        char function[48])
{
    cublasHandle_t h;
    if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS)
        return -1;
    long before = fake_cublas_last_call()->calls;
    float alpha = 1.0f, beta = 0.0f;
    int status = cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &alpha, a, n, b, n, &beta, c, n);
    const struct fake_cublas_record *r = fake_cublas_last_call();
    *major = r->calls > before ? r->major : 0;
    snprintf(function, 48, "%s", r->calls > before ? r->function : "(no call in its own copy)");
    cublasDestroy(h);
    return status;
}
