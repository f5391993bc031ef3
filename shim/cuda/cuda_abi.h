/* The CUDA ABI values more than one wing uses, hand-copied so libampshim.so
 * builds and runs without the CUDA headers or libraries: cudaDataType and
 * cuBLAS's status and compute types (cuBLAS and cuBLASLt share them), and
 * cuDNN's status and data types (both cuDNN wings, and the fp16 conversion
 * cuBLAS's explicit fp16 runs through cuDNN). A wing's own values are in
 * shim/<wing>/<wing>_abi.h. tests/abi checks each against the real header. */
#ifndef AMPSHIM_CUDA_ABI_H
#define AMPSHIM_CUDA_ABI_H

enum {
    AMP_CUBLAS_STATUS_SUCCESS = 0,
    AMP_CUDA_R_32F = 0, /* cudaDataType */
    AMP_CUDA_R_16F = 2,
    AMP_CUBLAS_COMPUTE_32F = 68,
    AMP_CUBLAS_COMPUTE_32F_FAST_16F = 74,
    AMP_CUBLAS_COMPUTE_32F_FAST_16BF = 75,
    AMP_CUBLAS_COMPUTE_32F_FAST_TF32 = 77,
    AMP_CUDNN_STATUS_SUCCESS = 0,
    /* cudnnDataType_t */
    AMP_CUDNN_DATA_FLOAT = 0,
    AMP_CUDNN_DATA_HALF = 2,
    AMP_CUDNN_DATA_BFLOAT16 = 9,
};

/* A cuDNN call succeeded. */
#define AMP_DNN_OK AMP_CUDNN_STATUS_SUCCESS

/* The fast compute type a lowered fp32 GEMM runs with in cuBLAS and
 * cuBLASLt (enum amp_lowp_dtype order: bf16, fp16, tf32), or 0 for none. */
static inline int amp_cublas_fast_compute(int dtype)
{
    static const int compute[] = {AMP_CUBLAS_COMPUTE_32F_FAST_16BF, AMP_CUBLAS_COMPUTE_32F_FAST_16F,
                                  AMP_CUBLAS_COMPUTE_32F_FAST_TF32};
    return dtype >= 0 && dtype < (int)(sizeof compute / sizeof *compute) ? compute[dtype] : 0;
}

/* The dtype (enum amp_lowp_dtype order) a fast compute type stands for. */
static inline int amp_cublas_compute_dtype(int compute)
{
    return compute == AMP_CUBLAS_COMPUTE_32F_FAST_16BF  ? 0
           : compute == AMP_CUBLAS_COMPUTE_32F_FAST_16F ? 1
                                                        : 2;
}

#endif
