/* The decision every CUDA hook shares: which precision a call of a given
 * hook runs in on this thread. */
#include "shim/cuda_policy.h"

#include "shim/cublas_abi.h"

/* The thread's CUDA dtype: a region's if one is open, else the process's. */
static enum amp_lowp_dtype cuda_dtype(const struct amp_thread *t)
{
    for (uint32_t i = t->region_depth; i-- > 0;)
        if (t->regions[i] & 0x80)
            return (enum amp_lowp_dtype)(t->regions[i] & 0x7f);
    return (enum amp_lowp_dtype)amp_live_load(&amp_rt.cfg.dtype[AMP_DEVICE_CUDA]);
}

static int thread_selected(const struct amp_thread *t)
{
    return t->selected && !(t->caller_filter && !amp_caller_selected(amp_tls_caller));
}

int amp_cuda_lower_dtype(struct amp_thread *t, enum amp_hook_id hook, int accumulates,
                         enum amp_ctl_counter *outcome)
{
    *outcome = AMP_CTL_PASSTHROUGH;
    if (t->fp32_depth) {
        *outcome = AMP_CTL_FP32;
        return -1;
    }
    if (!thread_selected(t))
        return -1;
    uint8_t category = amp_live_load(&amp_rt.category[AMP_DEVICE_CUDA][hook][accumulates != 0]);
    if (category != AMP_CAT_LOWER) {
        *outcome = category == AMP_CAT_FP32 ? AMP_CTL_FP32 : AMP_CTL_PASSTHROUGH;
        return -1;
    }
    enum amp_lowp_dtype dtype = cuda_dtype(t);
    if (dtype >= AMP_DTYPE_COUNT || (dtype == AMP_DTYPE_TF32 && !amp_rt.cfg.cuda_tf32_allowed))
        return -1;
    *outcome = AMP_CTL_LOWERED;
    return (int)dtype;
}

int amp_cuda_wants_fp32(struct amp_thread *t, enum amp_hook_id hook)
{
    return t->fp32_depth ||
           (thread_selected(t) &&
            amp_live_load(&amp_rt.category[AMP_DEVICE_CUDA][hook][0]) == AMP_CAT_FP32);
}

int amp_cuda_fast_compute(struct amp_thread *t, enum amp_hook_id hook, int accumulates,
                          enum amp_ctl_counter *outcome)
{
    static const int compute[AMP_DTYPE_COUNT] = {
        [AMP_DTYPE_FP16] = AMP_CUBLAS_COMPUTE_32F_FAST_16F,
        [AMP_DTYPE_BF16] = AMP_CUBLAS_COMPUTE_32F_FAST_16BF,
        [AMP_DTYPE_TF32] = AMP_CUBLAS_COMPUTE_32F_FAST_TF32,
    };
    int dtype = amp_cuda_lower_dtype(t, hook, accumulates, outcome);
    return dtype < 0 ? 0 : compute[dtype];
}
