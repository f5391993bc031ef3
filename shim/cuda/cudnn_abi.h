/* The few cuDNN ABI values the hooks need, so libampshim.so builds and runs
 * without the cuDNN headers or library. tests/fakes/fake_cudnn.c, compiled
 * against the real cudnn.h, checks each against the header. */
#ifndef AMPSHIM_CUDNN_ABI_H
#define AMPSHIM_CUDNN_ABI_H

enum {
    AMP_CUDNN_STATUS_SUCCESS = 0,
    AMP_CUDNN_DIM_MAX = 8,
    /* cudnnDataType_t */
    AMP_CUDNN_DATA_FLOAT = 0,
    AMP_CUDNN_DATA_HALF = 2,
    AMP_CUDNN_DATA_BFLOAT16 = 9,
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

/* A cuDNN call succeeded. */
#define AMP_DNN_OK AMP_CUDNN_STATUS_SUCCESS

#endif
