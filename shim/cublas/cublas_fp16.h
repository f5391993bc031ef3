/* AMPSHIM_CUDA_FP16=explicit: a GEMM lowered to fp16 with converted fp16
 * inputs (shim/cublas/cublas_fp16.c). */
#ifndef AMPSHIM_CUBLAS_FP16_H
#define AMPSHIM_CUBLAS_FP16_H

#include "shim/cublas/cublas_gemmex.h"

/* AMPSHIM_CUDA_FP16=explicit (shim/cublas/cublas_fp16.c): runs the call with
 * A and B converted to fp16 (cudnnTransformTensor) and CUDA_R_16F inputs to
 * `gemmex` with CUBLAS_COMPUTE_32F; returns its status, or -1 when that
 * could not be done (the hook then makes the program's own call). */
int amp_cublas_fp16_explicit(void *gemmex, int is64, const struct amp_gemmex_args *a);
#endif
