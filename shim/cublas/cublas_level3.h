/* cuBLAS's symmetric and triangular level-3 routines behind their doors
 * (shim/cublas/cublas.c): decided, and for fp16 and bf16 rebuilt on
 * cublasGemmEx (shim/cublas/cublas_level3.c). */
#ifndef AMPSHIM_CUBLAS_LEVEL3_H
#define AMPSHIM_CUBLAS_LEVEL3_H

#include <stdint.h>

#include "runtime/threads.h"
#include "shim/forward_words.h"

/* A cuBLAS entry point called with machine words (shim/forward_words.h). */
typedef int (*amp_cublas_words_fn)(AMP_WORD_TYPES);

enum amp_level3 { AMP_LEVEL3_SYRK, AMP_LEVEL3_SYMM, AMP_LEVEL3_TRMM, AMP_LEVEL3_TRSM };

/* A call of hook (a syrk, symm, trmm or trsm entry point; is64: its _64
 * form) whose arguments are the words w: decided, counted and run, lowered
 * or as made. Returns the status the program gets. The program's handle is
 * never reconfigured (no math mode set on it): a thread sharing it sees
 * nothing. trsm has no GemmEx form and always runs as made. */
int amp_cublas_level3(enum amp_hook_id hook, enum amp_level3 kind, int is64, const uintptr_t *w);

/* Runs the call whose arguments are the words w (is64: the _64 entry
 * point's int64_t sizes) through `gemmex` (cublasGemmEx) with the fast
 * compute type `compute` and the helpers f of the program's cuBLAS;
 * returns the cuBLAS status, or -1 when it could not (the caller then makes
 * the call as the program made it). */
struct amp_cublas_helpers;
int amp_cublas_level3_lowp(enum amp_level3 kind, int is64, const uintptr_t *w, int compute,
                           void *gemmex, const struct amp_cublas_helpers *f);

#endif
