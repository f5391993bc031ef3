/* The few cuBLAS ABI values the hooks need (shim/cuda/cuda_abi.h has the
 * status, data and compute types it shares with cuBLASLt), so libampshim.so
 * builds and runs without the CUDA headers or libraries. tests/abi checks
 * each against the real cublas_api.h. */
#ifndef AMPSHIM_CUBLAS_ABI_H
#define AMPSHIM_CUBLAS_ABI_H

#include "shim/cuda/cuda_abi.h"

enum {
    AMP_CUBLAS_PEDANTIC_MATH = 2,
    AMP_CUBLAS_FP32_EMULATED_BF16X9_MATH = 4, /* cuBLAS 13: fp32 accuracy asked for */
    AMP_CUBLAS_TF32_TENSOR_OP_MATH = 3,
    AMP_CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION = 16,
    AMP_CUBLAS_POINTER_MODE_HOST = 0,
    AMP_CUBLAS_GEMM_DEFAULT = -1,
};

#endif
