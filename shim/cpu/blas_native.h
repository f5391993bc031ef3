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

#endif
