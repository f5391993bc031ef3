#ifndef AMPSHIM_BLAS_NATIVE_H
#define AMPSHIM_BLAS_NATIVE_H

#include "shim/blas/blas_plan.h"

/* The native executor (shim/blas/blas_native.c): runs a planned, valid,
 * lowered gemm or syrk as oneDNN low-precision matmuls when AMPSHIM_CPU_KERNEL and
 * the size allow and oneDNN has a native kernel; returns 1 when it did (the
 * call is then done), 0 to let the emulated path run it. */
int amp_blas_native(struct amp_blas_call *c);

/* The CPU's size rule and its gate (amp_cpu_gate, amp_cpu_auto_gate,
 * amp_cpu_native_units) are declared in runtime/decide.h, beside the CUDA
 * one; the two functions that need oneDNN's answers are defined in
 * blas_native.c, which knows the native crossover. */

#endif
