/* The accuracy audit of a lowered cuBLAS GEMM (shim/cublas/cublas_audit.c). */
#ifndef AMPSHIM_CUBLAS_AUDIT_H
#define AMPSHIM_CUBLAS_AUDIT_H

#include "loader/atfork.h"
#include "shim/cublas/cublas_gemmex.h"


/* Runs the program's call c, lowered to `lowered`, under the audit (shim/
 * cuda/cublas_audit.c). `gemmex` is cublasGemmEx (c->is64: its _64 form),
 * through which `lowered` runs; c->as_made runs the call as the program made
 * it. Returns the status the program gets, or sets *run_as_made when the
 * hook is to make the program's own call instead (the sampling skipped this
 * call and AMPSHIM_AUDIT=1). */
int amp_cublas_audited(const struct amp_cublas_call *c, void *gemmex,
                       const struct amp_gemmex_args *lowered, int *run_as_made);

/* fork's share (shim/fork.c): the audit's lock; a child has none of the
 * parent's device arrays (CUDA does not survive fork) and reads nothing
 * back. */
void amp_cublas_audit_atfork(enum amp_fork_phase phase);

#endif
