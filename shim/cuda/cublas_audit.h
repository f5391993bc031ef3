/* The accuracy audit of a lowered cuBLAS GEMM (shim/cuda/cublas_audit.c). */
#ifndef AMPSHIM_CUBLAS_AUDIT_H
#define AMPSHIM_CUBLAS_AUDIT_H

#include <stdint.h>

#include "runtime/hook_state.h"

/* A lowered call in cublasGemmEx's form (sizes as int64_t whatever the
 * entry point's width), as the hooks issue it. */
struct amp_gemmex_args {
    void *h;
    int ta, tb;
    int64_t m, n, k;
    const void *alpha, *A;
    int at;
    int64_t lda;
    const void *B;
    int bt;
    int64_t ldb;
    const void *beta;
    void *C;
    int ct;
    int64_t ldc;
    int compute, algo;
};

/* Re-issues the program's own call (its entry point, its compute type) with
 * the output C replaced by `out` (column major, leading dimension ld). */
typedef int (*amp_cublas_as_made_fn)(const struct amp_gemmex_args *a, void *out, int64_t ld);

/* Runs a lowered call under the audit. `gemmex` is cublasGemmEx (is64: its
 * _64 form), through which the lowered call runs with a->compute; `as_made`
 * runs the call as the program made it. Returns the status the program
 * gets, or sets *run_as_made when the hook is to make the program's own
 * call instead (the sampling skipped this call and AMPSHIM_AUDIT=1). */
/* AMPSHIM_CUDA_FP16=explicit (shim/cuda/cublas_fp16.c): runs the call with
 * A and B converted to fp16 (cudnnTransformTensor) and CUDA_R_16F inputs to
 * `gemmex` with CUBLAS_COMPUTE_32F; returns its status, or -1 when that
 * could not be done (the hook then makes the program's own call). */
int amp_cublas_fp16_explicit(void *gemmex, int is64, const struct amp_gemmex_args *a);

int amp_cublas_audited(struct amp_thread *t, enum amp_hook_id hook, int dtype, void *gemmex,
                       int is64, const struct amp_gemmex_args *a, amp_cublas_as_made_fn as_made,
                       int *run_as_made);

#endif
