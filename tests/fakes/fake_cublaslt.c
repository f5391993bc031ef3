/* TEST-ONLY AMP_EXPORT of libcublasLt.so.13: a CPU stand-in, never installed.
 * Descriptors live in the real header's opaque storage, one slot per
 * attribute with the attribute's real size (a size query answers it).
 * cublasLtMatmul works on host memory, records the compute type it ran with,
 * emulates its precision and applies the BIAS and RELU epilogues.
 * cublasLtMatmulAlgoGetHeuristic hands out an algo that remembers the
 * compute type it was chosen for (data[0]); given one for another compute
 * type, cublasLtMatmul does what the real library may do: refuses it
 * (CUBLAS_STATUS_NOT_SUPPORTED), or with FAKE_CUBLASLT_MISMATCH=silent runs
 * the algo's own compute type.
 *
 * Alignment, as the real library has it: a preference assumes A, B, C and D
 * 256-byte aligned unless its MIN_ALIGNMENT_*_BYTES say less, and an algo
 * the heuristic answers is made for the smallest of those (data[1]); run on
 * a pointer less aligned than that (or a bias under 16 bytes), a real
 * kernel faults with a misaligned address and the context is lost: the fake
 * counts such a launch (fake_cublaslt_misaligned) and answers
 * CUBLAS_STATUS_EXECUTION_FAILED. The heuristic answers two algos; under
 * FAKE_CUBLASLT_FIRST_FAILS=1 the first is refused at run time
 * (data[2]: CUBLAS_STATUS_NOT_SUPPORTED, nothing written). */
#include <cublasLt.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/export.h"
#include "shim/cublaslt/cublaslt_abi.h"

static int heuristic_calls;
AMP_EXPORT int fake_cublaslt_heuristic_calls(void)
{
    return heuristic_calls;
}

static int misaligned;
AMP_EXPORT int fake_cublaslt_misaligned(void)
{
    return misaligned;
}

static int last_compute = -1;
AMP_EXPORT int fake_cublaslt_last_compute(void)
{
    return last_compute;
}

AMP_EXPORT cublasStatus_t cublasLtCreate(cublasLtHandle_t *h)
{
    *h = (cublasLtHandle_t)malloc(1);
    return CUBLAS_STATUS_SUCCESS;
}

AMP_EXPORT cublasStatus_t cublasLtDestroy(cublasLtHandle_t h)
{
    free(h);
    return CUBLAS_STATUS_SUCCESS;
}

/* A get-attribute answer, as cuBLASLt gives it: with size 0 the size
 * needed; else the value, when size is exactly its size. The value is the
 * low `have` bytes of *v (little endian). */
static cublasStatus_t answer(const uint64_t *v, size_t have, void *buf, size_t size,
                             size_t *written)
{
    if (size == 0) {
        if (!written)
            return CUBLAS_STATUS_INVALID_VALUE;
        *written = have;
        return CUBLAS_STATUS_SUCCESS;
    }
    if (size != have || !buf)
        return CUBLAS_STATUS_INVALID_VALUE;
    memcpy(buf, v, have);
    *written = have;
    return CUBLAS_STATUS_SUCCESS;
}

/* desc->data[attr]: each attribute the fake knows (those below 27 but 9
 * and 16), stored in its real size: 8 bytes for pointers, strides and
 * leading dimensions, 1 for FAST_ACCUM, 4 for the rest. */
static size_t attribute_size(int attr)
{
    switch (attr) {
    case CUBLASLT_MATMUL_DESC_BIAS_POINTER:
    case CUBLASLT_MATMUL_DESC_BIAS_BATCH_STRIDE:
    case CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER:
    case CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD:
    case CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_BATCH_STRIDE:
    case CUBLASLT_MATMUL_DESC_ALPHA_VECTOR_BATCH_STRIDE:
    case CUBLASLT_MATMUL_DESC_A_SCALE_POINTER:
    case CUBLASLT_MATMUL_DESC_B_SCALE_POINTER:
    case CUBLASLT_MATMUL_DESC_C_SCALE_POINTER:
    case CUBLASLT_MATMUL_DESC_D_SCALE_POINTER:
    case CUBLASLT_MATMUL_DESC_AMAX_D_POINTER:
    case CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_SCALE_POINTER:
    case CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_AMAX_POINTER:
        return 8;
    case CUBLASLT_MATMUL_DESC_FAST_ACCUM:
        return 1;
    case 9:
    case 16:
        return 0;
    default:
        return attr >= 0 && attr <= CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE ? 4 : 0;
    }
}

AMP_EXPORT cublasStatus_t cublasLtMatmulDescCreate(cublasLtMatmulDesc_t *d,
                                                   cublasComputeType_t compute,
                                                   cudaDataType_t scale)
{
    *d = calloc(1, sizeof **d);
    (*d)->data[CUBLASLT_MATMUL_DESC_COMPUTE_TYPE] = (uint64_t)compute;
    (*d)->data[CUBLASLT_MATMUL_DESC_SCALE_TYPE] = (uint64_t)scale;
    (*d)->data[CUBLASLT_MATMUL_DESC_EPILOGUE] = CUBLASLT_EPILOGUE_DEFAULT;
    (*d)->data[CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE] = (uint64_t)-1;
    return CUBLAS_STATUS_SUCCESS;
}

AMP_EXPORT cublasStatus_t cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t d)
{
    free(d);
    return CUBLAS_STATUS_SUCCESS;
}

AMP_EXPORT cublasStatus_t cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t d,
                                                         cublasLtMatmulDescAttributes_t attr,
                                                         const void *buf, size_t size)
{
    size_t want = attribute_size((int)attr);
    if (!want || size != want || !buf)
        return CUBLAS_STATUS_INVALID_VALUE;
    uint64_t v = 0;
    memcpy(&v, buf, size);
    d->data[attr] = v;
    return CUBLAS_STATUS_SUCCESS;
}

AMP_EXPORT cublasStatus_t cublasLtMatmulDescGetAttribute(cublasLtMatmulDesc_t d,
                                                         cublasLtMatmulDescAttributes_t attr,
                                                         void *buf, size_t size, size_t *written)
{
    size_t have = attribute_size((int)attr);
    return have ? answer(&d->data[attr], have, buf, size, written) : CUBLAS_STATUS_INVALID_VALUE;
}

/* layout->data: [0] type, [1] rows, [2] cols, [3] ld. */
AMP_EXPORT cublasStatus_t cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t *l, cudaDataType type,
                                                     uint64_t rows, uint64_t cols, int64_t ld)
{
    *l = calloc(1, sizeof **l);
    (*l)->data[0] = (uint64_t)type;
    (*l)->data[1] = rows;
    (*l)->data[2] = cols;
    (*l)->data[3] = (uint64_t)ld;
    return CUBLAS_STATUS_SUCCESS;
}

AMP_EXPORT cublasStatus_t cublasLtMatrixLayoutDestroy(cublasLtMatrixLayout_t l)
{
    free(l);
    return CUBLAS_STATUS_SUCCESS;
}

AMP_EXPORT cublasStatus_t cublasLtMatrixLayoutGetAttribute(cublasLtMatrixLayout_t l,
                                                           cublasLtMatrixLayoutAttribute_t attr,
                                                           void *buf, size_t size, size_t *written)
{
    /* TYPE, ORDER and BATCH_COUNT are 4 bytes, ROWS, COLS, LD and the batch
     * offset 8; the others are not known here. */
    size_t have = attr == CUBLASLT_MATRIX_LAYOUT_TYPE || attr == CUBLASLT_MATRIX_LAYOUT_ORDER ||
                          attr == CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT
                      ? 4
                  : attr == CUBLASLT_MATRIX_LAYOUT_ROWS || attr == CUBLASLT_MATRIX_LAYOUT_COLS ||
                          attr == CUBLASLT_MATRIX_LAYOUT_LD ||
                          attr == CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET
                      ? 8
                      : 0;
    if (!have)
        return CUBLAS_STATUS_INVALID_VALUE;
    uint64_t v = attr == CUBLASLT_MATRIX_LAYOUT_TYPE          ? l->data[0]
                 : attr == CUBLASLT_MATRIX_LAYOUT_ROWS        ? l->data[1]
                 : attr == CUBLASLT_MATRIX_LAYOUT_COLS        ? l->data[2]
                 : attr == CUBLASLT_MATRIX_LAYOUT_LD          ? l->data[3]
                 : attr == CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT ? 1
                                                              : 0;
    return answer(&v, have, buf, size, written);
}

/* Preferences: the workspace limit (data[0]) and the four minimum
 * alignments (data[1] to data[4], 256 until set). */
AMP_EXPORT cublasStatus_t cublasLtMatmulPreferenceCreate(cublasLtMatmulPreference_t *p)
{
    *p = calloc(1, sizeof **p);
    if (!*p)
        return CUBLAS_STATUS_ALLOC_FAILED;
    for (int i = 1; i <= 4; i++)
        (*p)->data[i] = 256;
    return CUBLAS_STATUS_SUCCESS;
}

AMP_EXPORT cublasStatus_t cublasLtMatmulPreferenceDestroy(cublasLtMatmulPreference_t p)
{
    free(p);
    return CUBLAS_STATUS_SUCCESS;
}

AMP_EXPORT cublasStatus_t cublasLtMatmulPreferenceSetAttribute(
    cublasLtMatmulPreference_t p, cublasLtMatmulPreferenceAttributes_t attr, const void *buf,
    size_t size)
{
    if (attr == CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES && size == sizeof(uint64_t)) {
        memcpy(&p->data[0], buf, size);
        return CUBLAS_STATUS_SUCCESS;
    }
    if (attr >= CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES &&
        attr <= CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES && size == sizeof(uint32_t)) {
        uint32_t v;
        memcpy(&v, buf, sizeof v);
        p->data[1 + attr - CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES] = v;
        return CUBLAS_STATUS_SUCCESS;
    }
    return CUBLAS_STATUS_INVALID_VALUE;
}

/* One algorithm, made for the descriptor's compute type; it needs 64 bytes
 * of workspace under FAKE_CUBLASLT_WORKSPACE=64, else none. */
AMP_EXPORT cublasStatus_t cublasLtMatmulAlgoGetHeuristic(
    cublasLtHandle_t h, cublasLtMatmulDesc_t d, cublasLtMatrixLayout_t a, cublasLtMatrixLayout_t b,
    cublasLtMatrixLayout_t c, cublasLtMatrixLayout_t dl, cublasLtMatmulPreference_t p, int wanted,
    cublasLtMatmulHeuristicResult_t *results, int *count)
{
    (void)h, (void)a, (void)b, (void)c, (void)dl;
    heuristic_calls++;
    const char *ws = getenv("FAKE_CUBLASLT_WORKSPACE");
    size_t need = ws ? (size_t)atoi(ws) : 0;
    *count = 0;
    if (wanted < 1 || need > p->data[0])
        return CUBLAS_STATUS_NOT_SUPPORTED;
    uint64_t align = p->data[1];
    for (int i = 2; i <= 4; i++)
        align = p->data[i] < align ? p->data[i] : align;
    const char *first_fails = getenv("FAKE_CUBLASLT_FIRST_FAILS");
    for (int i = 0; i < 2 && i < wanted; i++) {
        memset(&results[i], 0, sizeof results[i]);
        results[i].algo.data[0] = d->data[CUBLASLT_MATMUL_DESC_COMPUTE_TYPE];
        results[i].algo.data[1] = align;
        results[i].algo.data[2] = i == 0 && first_fails && *first_fails == '1';
        results[i].workspaceSize = need;
        results[i].state = CUBLAS_STATUS_SUCCESS;
        *count = i + 1;
    }
    return CUBLAS_STATUS_SUCCESS;
}

/* Whether p is aligned to `align` bytes. */
static int aligned(const void *p, uint64_t align)
{
    return align == 0 || (uintptr_t)p % align == 0;
}

static float input(const void *p, uint64_t i, int type, int compute)
{
    float x = type == CUDA_R_16F ? (float)((const _Float16 *)p)[i] : ((const float *)p)[i];
    uint32_t u;
    unsigned drop = compute == CUBLAS_COMPUTE_32F_FAST_16BF   ? 16
                    : compute == CUBLAS_COMPUTE_32F_FAST_TF32 ? 13
                                                              : 0;
    if (compute == CUBLAS_COMPUTE_32F_FAST_16F)
        return (float)(_Float16)x;
    if (!drop)
        return x;
    memcpy(&u, &x, 4);
    u = (u + ((1u << (drop - 1)) - 1) + ((u >> drop) & 1u)) & ~((1u << drop) - 1);
    memcpy(&x, &u, 4);
    return x;
}

/* D = alpha op(A) op(B) + beta C, column major (no transposes in the tests). */
AMP_EXPORT cublasStatus_t cublasLtMatmul(
    cublasLtHandle_t h, cublasLtMatmulDesc_t d, const void *alpha, const void *A,
    cublasLtMatrixLayout_t al, const void *B, cublasLtMatrixLayout_t bl, const void *beta,
    const void *C, cublasLtMatrixLayout_t cl, void *D, cublasLtMatrixLayout_t dl,
    const cublasLtMatmulAlgo_t *algo, void *ws, size_t wsb, cudaStream_t stream)
{
    (void)h, (void)ws, (void)wsb, (void)stream, (void)cl;
    int compute = (int)d->data[CUBLASLT_MATMUL_DESC_COMPUTE_TYPE];
    if (algo && (int)algo->data[0] != compute) {
        const char *mode = getenv("FAKE_CUBLASLT_MISMATCH");
        if (!(mode && strcmp(mode, "silent") == 0))
            return CUBLAS_STATUS_NOT_SUPPORTED;
        compute = (int)algo->data[0]; /* the algo's own kernel runs */
    }
    uint32_t epilogue = (uint32_t)d->data[CUBLASLT_MATMUL_DESC_EPILOGUE];
    const float *bias = (const float *)(uintptr_t)d->data[CUBLASLT_MATMUL_DESC_BIAS_POINTER];
    if (algo && algo->data[2])
        return CUBLAS_STATUS_NOT_SUPPORTED;
    if (algo && (!aligned(A, algo->data[1]) || !aligned(B, algo->data[1]) ||
                 !aligned(C, algo->data[1]) || !aligned(D, algo->data[1]) ||
                 ((epilogue & CUBLASLT_EPILOGUE_BIAS) && !aligned(bias, 16)))) {
        misaligned++;
        return CUBLAS_STATUS_EXECUTION_FAILED;
    }
    last_compute = compute;
    if ((epilogue & CUBLASLT_EPILOGUE_BIAS) && !bias)
        return CUBLAS_STATUS_INVALID_VALUE;
    uint64_t m = al->data[1], k = al->data[2], n = bl->data[2];
    float a = *(const float *)alpha, b = *(const float *)beta;
    for (uint64_t j = 0; j < n; j++)
        for (uint64_t i = 0; i < m; i++) {
            float sum = 0.0f;
            for (uint64_t p = 0; p < k; p++)
                sum += input(A, i + p * al->data[3], (int)al->data[0], compute) *
                       input(B, p + j * bl->data[3], (int)bl->data[0], compute);
            float c = ((const float *)C)[i + j * cl->data[3]];
            float v = a * sum + (b != 0.0f ? b * c : 0.0f);
            if (epilogue & CUBLASLT_EPILOGUE_BIAS)
                v += bias[i];
            if ((epilogue & CUBLASLT_EPILOGUE_RELU) && v < 0.0f)
                v = 0.0f;
            ((float *)D)[i + j * dl->data[3]] = v;
        }
    return CUBLAS_STATUS_SUCCESS;
}
