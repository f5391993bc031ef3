/* The few cuBLASLt ABI values the hooks need (shim/cuda/cuda_abi.h has
 * the status, data and compute types it shares with cuBLAS), so
 * libampshim.so builds and runs without the CUDA headers or libraries.
 * tests/abi checks each against the real cublasLt.h. */
#ifndef AMPSHIM_CUBLASLT_ABI_H
#define AMPSHIM_CUBLASLT_ABI_H

#include <stddef.h>
#include <stdint.h>

#include "shim/cuda/cuda_abi.h"

enum {
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

#endif
