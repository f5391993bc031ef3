#ifndef AMPSHIM_BLAS_NATIVE_H
#define AMPSHIM_BLAS_NATIVE_H

#include "shim/cpu/blas_plan.h"

/* The native executor (shim/cpu/blas_native.c): runs a planned, valid,
 * lowered gemm or syrk as oneDNN low-precision matmuls when AMPSHIM_CPU_KERNEL and
 * the size allow and oneDNN has a native kernel; returns 1 when it did (the
 * call is then done), 0 to let the emulated path run it. */
int amp_blas_native(struct amp_blas_call *c);

/* AMPSHIM_CPU_LOWER_MIN=auto's threshold for a dtype, in multiply-adds:
 * with AMPSHIM_CPU_KERNEL=auto the native crossover where this CPU has a
 * native kernel for the dtype, else UINT64_MAX (lowering never pays: said
 * once at info level); 0 (every size) with native or emulate. */
uint64_t amp_blas_native_lower_min(enum amp_lowp_dtype dtype);

/* The size rule on the CPU (AMPSHIM_CPU_LOWER_MIN), for every CPU family:
 * whether a call of `madds` multiply-adds lowered to dtype is smaller than
 * the threshold (auto: the crossover above). */
static inline int amp_cpu_too_small(enum amp_lowp_dtype dtype, double madds)
{
    uint32_t set = amp_live_load(&amp_rt.cfg.lower_min[AMP_DEVICE_CPU]);
    if (amp_likely(set == 0))
        return 0;
    return madds <
           (set == AMP_LOWER_MIN_AUTO ? (double)amp_blas_native_lower_min(dtype) : (double)set);
}

#endif
