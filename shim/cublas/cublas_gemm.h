/* The body behind every GEMM-shaped cuBLAS door (shim/cublas/cublas.c): a
 * call packed in cublasGemmEx's form with what the door knows of it, and
 * the one function that decides and runs it (shim/cublas/cublas_gemm.c). */
#ifndef AMPSHIM_CUBLAS_GEMM_H
#define AMPSHIM_CUBLAS_GEMM_H

#include <stdint.h>

#include "runtime/threads.h"
#include "shim/cublas/cublas_gemmex.h"

/* The Ex form a lowered call is re-issued through. */
enum amp_cublas_target {
    AMP_CUBLAS_TO_GEMMEX,  /* cublasGemmEx(_64): the audit and explicit fp16 apply */
    AMP_CUBLAS_TO_STRIDED, /* cublasGemmStridedBatchedEx(_64) */
    AMP_CUBLAS_TO_BATCHED, /* cublasGemmBatchedEx(_64) */
};

/* One call of a GEMM-shaped entry point, as its door packs it. */
struct amp_cublas_call {
    enum amp_hook_id hook;
    void *real;                    /* the program's function (amp_real(hook)) */
    amp_cublas_as_made_fn as_made; /* re-issues the program's own call */
    enum amp_cublas_target target;
    uint8_t is64;     /* a _64 entry point: its sizes are int64_t */
    uint8_t is_ex;    /* the call is itself an Ex form: lowering changes its compute type only */
    uint8_t eligible; /* its types and shape allow a lowered form (an Ex form:
                         fp32 data and plain CUBLAS_COMPUTE_32F; the door says) */
    struct amp_gemmex_args g; /* in GemmEx form; g.compute is the program's
                                 (CUBLAS_COMPUTE_32F for the S routines) */
    int64_t incx, incy;       /* a gemv's or ger's own strides */
    long long sa, sb, sc;     /* strided batches: the matrix strides */
    int64_t batch;
};

/* Runs c: lowered through its target with the fast compute type of the
 * policy's dtype when it is all fp32, eligible and the policy lowers it
 * (explicit fp16 and the audit for the GemmEx target), else as made. Counts
 * it; returns the status the program gets. */
int amp_cublas_gemm(const struct amp_cublas_call *c);

/* What the level-3 body (shim/cublas/cublas_level3.c) shares with it. */
/* A handle's math mode (cublasGetMathMode of real's own library, real being
 * a hook's real function); 0 when it cannot be read. */
int amp_cublas_math_mode(const void *real, void *handle, int *mode);
/* Whether a math mode (pedantic, bf16x9 emulation, no reduced-precision
 * reduction) keeps the handle's calls as made. */
int amp_cublas_mode_keeps_calls(int mode);
/* Whether a handle's scalars are host pointers (asked of real's library). */
int amp_cublas_host_pointers(const void *real, void *handle);
/* Whether a call counts as accumulating (its op_beta): beta is read only
 * when the policy tells the two apart and it is a host pointer; an unknown
 * beta (NULL, or a device pointer) counts as accumulating. */
int amp_cublas_accumulates(enum amp_hook_id hook, const void *real, void *handle,
                           const float *beta);

#endif
