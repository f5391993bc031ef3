#ifndef AMPSHIM_BLAS_NATIVE_H
#define AMPSHIM_BLAS_NATIVE_H

#include "shim/blas/blas_plan.h"

/* The native executor (shim/blas/blas_native.c): runs a planned, valid,
 * lowered gemm or syrk as oneDNN low-precision matmuls when AMPSHIM_CPU_KERNEL and
 * the size allow and oneDNN has a native kernel; returns 1 when it did (the
 * call is then done), 0 to let the emulated path run it. */
int amp_blas_native(struct amp_blas_call *c);

/* Whether the native executor would take a planned, lowered call as
 * AMPSHIM_CPU_KERNEL=auto runs it: a gemm or syrk in bf16 or fp16, every
 * side at least AMP_NATIVE_MIN_SIDE (the units are known to be there: the
 * gate asked). Under the defaults a call it would not take runs as made,
 * counted nonative (emulating it costs more than fp32). */
int amp_blas_native_fits(const struct amp_blas_call *c);

/* Whether the native executor will take the call as the settings stand
 * (AMPSHIM_CPU_KERNEL; at or above the crossover under auto), unless
 * oneDNN refuses it or memory runs out. */
int amp_blas_native_takes(const struct amp_blas_call *c);

/* Whether a lowered CPU call the native executor does not take may be
 * emulated (rounded operands, the fp32 routine): only when asked
 * (AMPSHIM_CPU_KERNEL or AMPSHIM_LOWER_MIN set, an explicit request). */
static inline int amp_blas_emulation_asked(const struct amp_blas_call *c)
{
    return c->explicit_request || amp_live_load(&amp_rt.cfg.cpu_kernel) != AMP_CPU_KERNEL_AUTO ||
           amp_live_load(&amp_rt.cfg.lower_min[AMP_DEVICE_CPU]) != AMP_LOWER_MIN_AUTO;
}

/* The CPU's size rule and its gate (amp_cpu_gate, amp_cpu_auto_gate,
 * amp_cpu_native_units) are declared in runtime/decide.h, beside the CUDA
 * one; the two functions that need oneDNN's answers are defined in
 * blas_native.c, which knows the native crossover. */

#endif
