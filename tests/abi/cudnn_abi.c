/* The ABI values ampshim copies by hand from cuDNN's legacy API (shim/cudnn/cudnn_abi.h) and the cuDNN values the wings share (shim/cuda/cuda_abi.h),
 * checked against the real header at compile time: this file compiling is
 * the test. */
#include <cudnn.h>
#include <stddef.h>

#include "shim/cudnn/cudnn_abi.h"

#define SAME(real, ours) _Static_assert((int)(real) == (int)(ours), #ours)
SAME(CUDNN_STATUS_SUCCESS, AMP_CUDNN_STATUS_SUCCESS);
SAME(CUDNN_DIM_MAX, AMP_CUDNN_DIM_MAX);
SAME(CUDNN_DATA_FLOAT, AMP_CUDNN_DATA_FLOAT);
SAME(CUDNN_DATA_HALF, AMP_CUDNN_DATA_HALF);
SAME(CUDNN_DATA_BFLOAT16, AMP_CUDNN_DATA_BFLOAT16);
SAME(CUDNN_DEFAULT_MATH, AMP_CUDNN_DEFAULT_MATH);
SAME(CUDNN_TENSOR_OP_MATH, AMP_CUDNN_TENSOR_OP_MATH);
SAME(CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION, AMP_CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION);
SAME(CUDNN_TENSOR_NCHW, AMP_CUDNN_TENSOR_NCHW);
SAME(CUDNN_TENSOR_NHWC, AMP_CUDNN_TENSOR_NHWC);
SAME(CUDNN_FWD_MODE_INFERENCE, AMP_CUDNN_FWD_MODE_INFERENCE);
SAME(CUDNN_NORM_OPS_NORM, AMP_CUDNN_NORM_OPS_NORM);
