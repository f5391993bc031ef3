/* The ABI values ampshim copies by hand from cuBLASLt (shim/cublaslt/cublaslt_abi.h),
 * checked against the real header at compile time: this file compiling is
 * the test. */
#include <cublasLt.h>
#include <stddef.h>

#include "shim/cublaslt/cublaslt_abi.h"

#define SAME(real, ours) _Static_assert((int)(real) == (int)(ours), #ours)
SAME(CUBLASLT_MATMUL_DESC_COMPUTE_TYPE, AMP_CUBLASLT_MATMUL_DESC_COMPUTE_TYPE);
SAME(CUBLASLT_MATMUL_DESC_SCALE_TYPE, AMP_CUBLASLT_MATMUL_DESC_SCALE_TYPE);
SAME(CUBLASLT_MATRIX_LAYOUT_TYPE, AMP_CUBLASLT_MATRIX_LAYOUT_TYPE);
SAME(CUBLASLT_MATRIX_LAYOUT_ROWS, AMP_CUBLASLT_MATRIX_LAYOUT_ROWS);
SAME(CUBLASLT_MATRIX_LAYOUT_COLS, AMP_CUBLASLT_MATRIX_LAYOUT_COLS);
SAME(CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, AMP_CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT);
SAME(CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, AMP_CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES);
SAME(CUBLASLT_MATMUL_DESC_EPILOGUE, AMP_CUBLASLT_MATMUL_DESC_EPILOGUE);
SAME(CUBLASLT_MATMUL_DESC_BIAS_POINTER, AMP_CUBLASLT_MATMUL_DESC_BIAS_POINTER);
SAME(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, AMP_CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES);
SAME(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
     AMP_CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES + 1);
SAME(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES,
     AMP_CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES + 2);
SAME(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES,
     AMP_CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES + 3);
/* Every descriptor attribute that holds a device pointer (the shim keys
 * its algorithm cache on their alignment, not their value). */
SAME(CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, 11);
SAME(CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, 17);
SAME(CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, 18);
SAME(CUBLASLT_MATMUL_DESC_C_SCALE_POINTER, 19);
SAME(CUBLASLT_MATMUL_DESC_D_SCALE_POINTER, 20);
SAME(CUBLASLT_MATMUL_DESC_AMAX_D_POINTER, 21);
SAME(CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_SCALE_POINTER, 23);
SAME(CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_AMAX_POINTER, 24);
SAME(CUBLASLT_MATMUL_DESC_D_OUT_SCALE_POINTER, 36);
_Static_assert((int)CUBLASLT_MATMUL_DESC_EMULATION_DESCRIPTOR <
                   (int)AMP_CUBLASLT_MATMUL_DESC_ATTRIBUTES,
               "the shim walks every descriptor attribute");
_Static_assert((int)CUBLASLT_MATRIX_LAYOUT_BATCH_MODE < (int)AMP_CUBLASLT_MATRIX_LAYOUT_ATTRIBUTES,
               "the shim walks every layout attribute");
_Static_assert(sizeof(cublasLtMatmulAlgo_t) == sizeof(struct amp_lt_algo), "algo");
_Static_assert(sizeof(cublasLtMatmulHeuristicResult_t) == sizeof(struct amp_lt_heuristic),
               "result");
_Static_assert(offsetof(cublasLtMatmulHeuristicResult_t, workspaceSize) ==
                   offsetof(struct amp_lt_heuristic, workspace_size),
               "result");
_Static_assert(offsetof(cublasLtMatmulHeuristicResult_t, state) ==
                   offsetof(struct amp_lt_heuristic, state),
               "result");
