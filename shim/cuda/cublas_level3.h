/* fp16 and bf16 for cuBLAS's symmetric and triangular level-3 routines
 * (shim/cuda/cublas_level3.c): the call rebuilt on cublasGemmEx. */
#ifndef AMPSHIM_CUBLAS_LEVEL3_H
#define AMPSHIM_CUBLAS_LEVEL3_H

#include <stdint.h>

enum amp_level3 { AMP_LEVEL3_SYRK, AMP_LEVEL3_SYMM, AMP_LEVEL3_TRMM, AMP_LEVEL3_TRSM };

/* Runs the call whose arguments are the words w (is64: the _64 entry
 * point's int64_t sizes) through `gemmex` (cublasGemmEx) with the fast
 * compute type `compute`; returns the cuBLAS status, or -1 when it could
 * not (the caller then makes the call as the program made it). */
int amp_cublas_level3_lowp(enum amp_level3 kind, int is64, const uintptr_t *w, int compute,
                           void *gemmex);

#endif
