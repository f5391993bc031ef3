/* The decision the CUDA hooks share (shim/cuda_policy.c): the cuBLAS,
 * cuBLASLt and cuDNN hooks all ask it. */
#ifndef AMPSHIM_CUDA_POLICY_H
#define AMPSHIM_CUDA_POLICY_H

#include "runtime/state.h"

/* The dtype (enum amp_lowp_dtype) a call of a lower-category hook runs in on
 * this thread, or -1 to run it as made: an fp32 region is open, the thread
 * or caller is not selected, the policy says otherwise, or the dtype is tf32
 * and NVIDIA_TF32_OVERRIDE=0. *outcome says how to count the call. */
int amp_cuda_lower_dtype(struct amp_thread *t, enum amp_hook_id hook, int accumulates,
                         enum amp_ctl_counter *outcome);

/* Whether a call of this hook must be computed in fp32 on this thread: an
 * fp32 region is open, or the hook's category is fp32 for a selected thread. */
int amp_cuda_wants_fp32(struct amp_thread *t, enum amp_hook_id hook);

/* How a call counts when its lowered form failed and it ran as made. */
static inline enum amp_ctl_counter amp_cuda_not_lowered(enum amp_ctl_counter outcome)
{
    return outcome == AMP_CTL_LOWERED ? AMP_CTL_PASSTHROUGH : outcome;
}

/* The fast compute type (CUBLAS_COMPUTE_32F_FAST_16F / _16BF / _TF32) for
 * a lowered fp32 GEMM on this thread, or 0 to run the call as made. */
int amp_cuda_fast_compute(struct amp_thread *t, enum amp_hook_id hook, int accumulates,
                          enum amp_ctl_counter *outcome);

#endif
