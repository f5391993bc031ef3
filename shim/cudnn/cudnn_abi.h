/* The few cuDNN ABI values the legacy-API hooks need (shim/cuda/cuda_abi.h
 * has the status and data types the cuDNN wings share), so libampshim.so
 * builds and runs without the cuDNN headers or library. tests/abi checks
 * each against the real cudnn.h. */
#ifndef AMPSHIM_CUDNN_ABI_H
#define AMPSHIM_CUDNN_ABI_H

#include "shim/cuda/cuda_abi.h"

enum {
    AMP_CUDNN_DIM_MAX = 8,
    /* cudnnMathType_t */
    AMP_CUDNN_DEFAULT_MATH = 0,
    AMP_CUDNN_TENSOR_OP_MATH = 1,
    AMP_CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION = 2,
    /* cudnnTensorFormat_t */
    AMP_CUDNN_TENSOR_NCHW = 0,
    AMP_CUDNN_TENSOR_NHWC = 1,
    /* cudnnForwardMode_t */
    AMP_CUDNN_FWD_MODE_INFERENCE = 0,
    AMP_CUDNN_RNN_ALGO_PERSIST_DYNAMIC = 2,
    /* cudnnNormOps_t */
    AMP_CUDNN_NORM_OPS_NORM = 0,
};

#endif
