/* A cuBLAS GEMM in cublasGemmEx's form: what the GEMM body (cublas_gemm.c),
 * explicit fp16 (cublas_fp16.c) and the accuracy audit (cublas_audit.c)
 * issue. */
#ifndef AMPSHIM_CUBLAS_GEMMEX_H
#define AMPSHIM_CUBLAS_GEMMEX_H

#include <stdint.h>

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

#endif
