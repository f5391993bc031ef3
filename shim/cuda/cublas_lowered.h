/* A lowered cuBLAS GEMM in cublasGemmEx's form, and what runs it besides
 * the hook itself: explicit fp16 (shim/cuda/cublas_fp16.c) and the
 * accuracy audit (shim/cuda/cublas_audit.c). */
#ifndef AMPSHIM_CUBLAS_LOWERED_H
#define AMPSHIM_CUBLAS_LOWERED_H

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

/* cublasGemmEx and cublasGemmEx_64. */
typedef int (*amp_gemmex_I32)(void *, int, int, int, int, int, const void *, const void *, int, int,
                              const void *, int, int, const void *, void *, int, int, int, int);
typedef int (*amp_gemmex_I64)(void *, int, int, int64_t, int64_t, int64_t, const void *,
                              const void *, int, int64_t, const void *, int, int64_t, const void *,
                              void *, int, int64_t, int, int);

/* Issues a through `gemmex` (cublasGemmEx; is64: its _64 form) with the
 * compute type `compute` (a->compute, or the fast one of a lowered call). */
static inline int amp_cublas_run_gemmex(void *gemmex, int is64, const struct amp_gemmex_args *a,
                                        int compute)
{
    if (is64)
        return ((amp_gemmex_I64)gemmex)(a->h, a->ta, a->tb, a->m, a->n, a->k, a->alpha, a->A, a->at,
                                        a->lda, a->B, a->bt, a->ldb, a->beta, a->C, a->ct, a->ldc,
                                        compute, a->algo);
    return ((amp_gemmex_I32)gemmex)(a->h, a->ta, a->tb, (int)a->m, (int)a->n, (int)a->k, a->alpha,
                                    a->A, a->at, (int)a->lda, a->B, a->bt, (int)a->ldb, a->beta,
                                    a->C, a->ct, (int)a->ldc, compute, a->algo);
}

/* Re-issues the program's own call c (its entry point, its compute type)
 * with the output C replaced by `out` (column major, leading dimension ld;
 * out = c->g.C and ld = c->g.ldc make it exactly as made). */
struct amp_cublas_call;
typedef int (*amp_cublas_as_made_fn)(const struct amp_cublas_call *c, void *out, int64_t ld);

/* AMPSHIM_CUDA_FP16=explicit (shim/cuda/cublas_fp16.c): runs the call with
 * A and B converted to fp16 (cudnnTransformTensor) and CUDA_R_16F inputs to
 * `gemmex` with CUBLAS_COMPUTE_32F; returns its status, or -1 when that
 * could not be done (the hook then makes the program's own call). */
int amp_cublas_fp16_explicit(void *gemmex, int is64, const struct amp_gemmex_args *a);

/* Runs the program's call c, lowered to `lowered`, under the audit (shim/
 * cuda/cublas_audit.c). `gemmex` is cublasGemmEx (c->is64: its _64 form),
 * through which `lowered` runs; c->as_made runs the call as the program made
 * it. Returns the status the program gets, or sets *run_as_made when the
 * hook is to make the program's own call instead (the sampling skipped this
 * call and AMPSHIM_AUDIT=1). */
int amp_cublas_audited(struct amp_thread *t, const struct amp_cublas_call *c, void *gemmex,
                       const struct amp_gemmex_args *lowered, int *run_as_made);

/* fork's share (shim/fork.c): the audit's lock; a child has none of the
 * parent's device arrays (CUDA does not survive fork) and reads nothing
 * back. */
void amp_cublas_audit_atfork(enum amp_fork_phase phase);

#endif
