/* The few cuBLAS ABI values the hooks need, so libampshim.so builds and runs
 * without the CUDA headers or libraries. tests/fakes/fake_cublas.c, compiled
 * against the real cublas_api.h, checks each against the header. */
#ifndef AMPSHIM_CUBLAS_ABI_H
#define AMPSHIM_CUBLAS_ABI_H

#include <stddef.h>
#include <stdint.h>

enum {
    AMP_CUBLAS_STATUS_SUCCESS = 0,
    AMP_CUDA_R_32F = 0, /* cudaDataType */
    AMP_CUDA_R_16F = 2,
    AMP_CUBLAS_COMPUTE_32F = 68,
    AMP_CUBLAS_COMPUTE_32F_FAST_16F = 74,
    AMP_CUBLAS_COMPUTE_32F_FAST_16BF = 75,
    AMP_CUBLAS_COMPUTE_32F_FAST_TF32 = 77,
    AMP_CUBLAS_PEDANTIC_MATH = 2,
    AMP_CUBLAS_FP32_EMULATED_BF16X9_MATH = 4, /* cuBLAS 13: fp32 accuracy asked for */
    AMP_CUBLAS_TF32_TENSOR_OP_MATH = 3,
    AMP_CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION = 16,
    AMP_CUBLAS_POINTER_MODE_HOST = 0,
    AMP_CUBLAS_GEMM_DEFAULT = -1,
    AMP_CUBLASLT_MATMUL_DESC_COMPUTE_TYPE = 0,          /* int32_t */
    AMP_CUBLASLT_MATMUL_DESC_SCALE_TYPE = 1,            /* int32_t (cudaDataType) */
    AMP_CUBLASLT_MATRIX_LAYOUT_TYPE = 0,                /* uint32_t (cudaDataType) */
    AMP_CUBLASLT_MATRIX_LAYOUT_ROWS = 2,                /* uint64_t */
    AMP_CUBLASLT_MATRIX_LAYOUT_COLS = 3,                /* uint64_t */
    AMP_CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT = 5,         /* int32_t */
    AMP_CUBLASLT_MATMUL_DESC_EPILOGUE = 7,              /* uint32_t */
    AMP_CUBLASLT_MATMUL_DESC_BIAS_POINTER = 8,          /* void * */
    AMP_CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES = 1,   /* uint64_t */
    AMP_CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES = 5, /* uint32_t; B, C, D follow */
    /* Attribute numbers a private copy of a descriptor walks: every matmul
     * descriptor attribute below this (CUDA 13 defines up to 38) and every
     * layout attribute below the other (up to 8); one the library does not
     * know is skipped. */
    AMP_CUBLASLT_MATMUL_DESC_ATTRIBUTES = 64,
    AMP_CUBLASLT_MATRIX_LAYOUT_ATTRIBUTES = 16,
};

/* cublasLtMatmulAlgo_t and cublasLtMatmulHeuristicResult_t, as laid out by
 * cublasLt.h (checked by the fake against the header). */
struct amp_lt_algo {
    uint64_t data[8];
};
struct amp_lt_heuristic {
    struct amp_lt_algo algo;
    size_t workspace_size;
    int state;
    float waves_count;
    int reserved[4];
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
