/* The few cuBLAS ABI values the hooks need, so libampshim.so builds and runs
 * without the CUDA headers or libraries. tests/fakes/fake_cublas.c, compiled
 * against the real cublas_api.h, checks each against the header. */
#ifndef AMPSHIM_CUBLAS_ABI_H
#define AMPSHIM_CUBLAS_ABI_H

enum {
    AMP_CUBLAS_STATUS_SUCCESS = 0,
    AMP_CUDA_R_32F = 0, /* cudaDataType */
    AMP_CUBLAS_COMPUTE_32F = 68,
    AMP_CUBLAS_COMPUTE_32F_FAST_16F = 74,
    AMP_CUBLAS_COMPUTE_32F_FAST_16BF = 75,
    AMP_CUBLAS_COMPUTE_32F_FAST_TF32 = 77,
    AMP_CUBLAS_PEDANTIC_MATH = 2,
    AMP_CUBLAS_TF32_TENSOR_OP_MATH = 3,
    AMP_CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION = 16,
    AMP_CUBLAS_POINTER_MODE_HOST = 0,
    AMP_CUBLAS_GEMM_DEFAULT = -1,
    AMP_CUBLASLT_MATMUL_DESC_COMPUTE_TYPE = 0, /* int32_t */
    AMP_CUBLASLT_MATMUL_DESC_SCALE_TYPE = 1,   /* int32_t (cudaDataType) */
    AMP_CUBLASLT_MATRIX_LAYOUT_TYPE = 0,       /* uint32_t (cudaDataType) */
};

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
