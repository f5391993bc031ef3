/* The decision the CUDA GEMM hooks share (shim/cublas.c defines it; the
 * cuBLAS and cuBLASLt hooks use it). */
#ifndef AMPSHIM_CUDA_POLICY_H
#define AMPSHIM_CUDA_POLICY_H

#include "runtime/state.h"

/* The fast compute type (CUBLAS_COMPUTE_32F_FAST_16F / _16BF / _TF32) for
 * a lowered fp32 GEMM on this thread, or 0 to run the call as made;
 * *outcome says how to count it. */
int amp_cuda_fast_compute(struct amp_thread *t, enum amp_hook_id hook, int accumulates,
                          enum amp_ctl_counter *outcome);

#endif
