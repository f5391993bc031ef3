/* fp16 and bf16 for cuBLAS's symmetric and triangular level-3 routines,
 * which have no compute-type argument: each becomes cublasGemmEx with the
 * fast compute type on full matrices built in device scratch by cuBLAS's
 * own routines (no kernels of ampshim's):
 *   ssymm  T = A's stored triangle, zeros elsewhere (cudaMemsetAsync, then
 *          cublasStrttp / cublasStpttr); S = T + T^T (cublasSgeam) with the
 *          doubled diagonal halved (cublasSscal, stride ld + 1, exact);
 *          C = alpha S B + beta C (or alpha B S + beta C) by GemmEx.
 *   strmm  T = A's triangle, zeros elsewhere; C = alpha op(T) B (or
 *          alpha B op(T)) by GemmEx. A unit diagonal: T's diagonal is
 *          zeroed (cudaMemset2DAsync) and alpha B is added after
 *          (cublasSgeam), so the identity's share is fp32.
 *   ssyrk  W = alpha op(A) op(A)^T by GemmEx (the full square: twice syrk's
 *          work, at tensor-core speed); C's triangle = beta C + W through
 *          the packed format (Strttp, Sscal, Saxpy, Stpttr); the other
 *          triangle is never written.
 * Only with host pointer mode (the helpers take host scalars), arguments
 * cuBLAS would accept, sizes that fit in int, and C not aliasing B (trmm's
 * in-place form). Anything else, or any step failing before C is written,
 * and the hook runs the call as made. Scratch is stream-ordered on the
 * handle's stream and given back at the end of the call. */
#include "shim/cublas/cublas_level3.h"

#include <pthread.h>
#include <stddef.h>

#include "runtime/decide.h"
#include "shim/cublas/cublas_abi.h"
#include "shim/cublas/cublas_gemm.h"
#include "shim/cublas/cublas_gemmex.h"
#include "shim/cuda/cuda_helpers.h"
#include "shim/cuda/cuda_scratch.h"
#include "shim/resolve.h"

enum {
    OP_N = 0,
    OP_T = 1,
    OP_C = 2,
    FILL_LOWER = 0,
    FILL_UPPER = 1,
    SIDE_LEFT = 0,
    SIDE_RIGHT = 1,
    DIAG_NON_UNIT = 0,
    DIAG_UNIT = 1,
    OK = AMP_CUBLAS_STATUS_SUCCESS
};

typedef amp_gemmex_I32 gemmex_fn;

/* The cuBLAS helpers every rebuild needs (shim/cuda/cuda_helpers.h). */
static const size_t needed[] = {
    offsetof(struct amp_cublas_helpers, get_stream), offsetof(struct amp_cublas_helpers, trttp),
    offsetof(struct amp_cublas_helpers, tpttr),      offsetof(struct amp_cublas_helpers, geam),
    offsetof(struct amp_cublas_helpers, scal),       offsetof(struct amp_cublas_helpers, axpy),
};
typedef const struct amp_cublas_helpers helpers;

static const float one = 1.0f, zero = 0.0f, half = 0.5f;

/* An integer argument: 32-bit entry points pass int, the _64 ones int64_t. */
static int64_t arg(const uintptr_t *w, int i, int is64)
{
    return is64 ? (int64_t)w[i] : (int64_t)(int32_t)(uint32_t)w[i];
}

static int fits(int64_t v)
{
    return v >= 0 && v <= 0x7fffffff;
}

static float *take(struct amp_cuda_scratch *s, size_t elements)
{
    return amp_cuda_take(s, elements * sizeof(float));
}

/* T (k x k, ld k) = the `uplo` triangle of A, zeros elsewhere. */
static int triangle(helpers *f, void *h, struct amp_cuda_scratch *s, int uplo, int k,
                    const float *A, int lda, float **T)
{
    float *t = take(s, (size_t)k * k), *packed = take(s, (size_t)k * (k + 1) / 2);
    *T = t;
    return t && packed && amp_cuda_zero(t, (size_t)k * k * sizeof(float), s->stream) &&
           f->trttp(h, uplo, k, A, lda, packed) == OK && f->tpttr(h, uplo, k, packed, t, k) == OK;
}

static int syrk(helpers *f, void *h, struct amp_cuda_scratch *s, gemmex_fn ex, int compute,
                const uintptr_t *w, int is64)
{
    int uplo = (int)w[1], trans = (int)w[2];
    int64_t n = arg(w, 3, is64), k = arg(w, 4, is64), lda = arg(w, 7, is64), ldc = arg(w, 10, is64);
    const float *alpha = (const float *)w[5], *A = (const float *)w[6], *beta = (const float *)w[8];
    float *C = (float *)w[9];
    int64_t rows = trans == OP_N ? n : k;
    if ((uplo != FILL_LOWER && uplo != FILL_UPPER) || trans < OP_N || trans > OP_C || !fits(n) ||
        !fits(k) || !fits(lda) || !fits(ldc) || lda < (rows > 1 ? rows : 1) ||
        ldc < (n > 1 ? n : 1) || n == 0 || k == 0 || *alpha == 0.0f)
        return -1;
    size_t packed_n = (size_t)n * (size_t)(n + 1) / 2;
    float *W = take(s, (size_t)n * (size_t)n), *Wp = take(s, packed_n);
    float *Cp = *beta != 0.0f ? take(s, packed_n) : NULL;
    if (!W || !Wp || (*beta != 0.0f && !Cp))
        return -1;
    int other = trans == OP_N ? OP_T : OP_N;
    if (ex(h, trans, other, (int)n, (int)n, (int)k, alpha, A, AMP_CUDA_R_32F, (int)lda, A,
           AMP_CUDA_R_32F, (int)lda, &zero, W, AMP_CUDA_R_32F, (int)n, compute,
           AMP_CUBLAS_GEMM_DEFAULT) != OK ||
        f->trttp(h, uplo, (int)n, W, (int)n, Wp) != OK)
        return -1;
    if (*beta == 0.0f) /* C is not read */
        return f->tpttr(h, uplo, (int)n, Wp, C, (int)ldc) == OK ? OK : -1;
    return f->trttp(h, uplo, (int)n, C, (int)ldc, Cp) == OK &&
                   f->scal(h, (int)packed_n, beta, Cp, 1) == OK &&
                   f->axpy(h, (int)packed_n, &one, Wp, 1, Cp, 1) == OK &&
                   f->tpttr(h, uplo, (int)n, Cp, C, (int)ldc) == OK
               ? OK
               : -1;
}

static int symm(helpers *f, void *h, struct amp_cuda_scratch *s, gemmex_fn ex, int compute,
                const uintptr_t *w, int is64)
{
    int side = (int)w[1], uplo = (int)w[2];
    int64_t m = arg(w, 3, is64), n = arg(w, 4, is64), lda = arg(w, 7, is64), ldb = arg(w, 9, is64),
            ldc = arg(w, 12, is64);
    const float *alpha = (const float *)w[5], *A = (const float *)w[6], *B = (const float *)w[8],
                *beta = (const float *)w[10];
    float *C = (float *)w[11];
    int64_t k = side == SIDE_LEFT ? m : n;
    if ((side != SIDE_LEFT && side != SIDE_RIGHT) || (uplo != FILL_LOWER && uplo != FILL_UPPER) ||
        !fits(m) || !fits(n) || !fits(lda) || !fits(ldb) || !fits(ldc) || lda < (k > 1 ? k : 1) ||
        ldb < (m > 1 ? m : 1) || ldc < (m > 1 ? m : 1) || m == 0 || n == 0 || *alpha == 0.0f)
        return -1;
    float *T, *S;
    if (!triangle(f, h, s, uplo, (int)k, A, (int)lda, &T) || !(S = take(s, (size_t)k * k)) ||
        f->geam(h, OP_N, OP_T, (int)k, (int)k, &one, T, (int)k, &one, T, (int)k, S, (int)k) != OK ||
        f->scal(h, (int)k, &half, S, (int)k + 1) != OK)
        return -1;
    if (side == SIDE_LEFT)
        return ex(h, OP_N, OP_N, (int)m, (int)n, (int)m, alpha, S, AMP_CUDA_R_32F, (int)k, B,
                  AMP_CUDA_R_32F, (int)ldb, beta, C, AMP_CUDA_R_32F, (int)ldc, compute,
                  AMP_CUBLAS_GEMM_DEFAULT) == OK
                   ? OK
                   : -1;
    return ex(h, OP_N, OP_N, (int)m, (int)n, (int)n, alpha, B, AMP_CUDA_R_32F, (int)ldb, S,
              AMP_CUDA_R_32F, (int)k, beta, C, AMP_CUDA_R_32F, (int)ldc, compute,
              AMP_CUBLAS_GEMM_DEFAULT) == OK
               ? OK
               : -1;
}

static int trmm(helpers *f, void *h, struct amp_cuda_scratch *s, gemmex_fn ex, int compute,
                const uintptr_t *w, int is64)
{
    int side = (int)w[1], uplo = (int)w[2], trans = (int)w[3], diag = (int)w[4];
    int64_t m = arg(w, 5, is64), n = arg(w, 6, is64), lda = arg(w, 9, is64), ldb = arg(w, 11, is64),
            ldc = arg(w, 13, is64);
    const float *alpha = (const float *)w[7], *A = (const float *)w[8], *B = (const float *)w[10];
    float *C = (float *)w[12];
    int64_t k = side == SIDE_LEFT ? m : n;
    if ((side != SIDE_LEFT && side != SIDE_RIGHT) || (uplo != FILL_LOWER && uplo != FILL_UPPER) ||
        trans < OP_N || trans > OP_C || (diag != DIAG_NON_UNIT && diag != DIAG_UNIT) || !fits(m) ||
        !fits(n) || !fits(lda) || !fits(ldb) || !fits(ldc) || lda < (k > 1 ? k : 1) ||
        ldb < (m > 1 ? m : 1) || ldc < (m > 1 ? m : 1) || m == 0 || n == 0 || *alpha == 0.0f ||
        (const float *)C == B)
        return -1;
    float *T;
    if (!triangle(f, h, s, uplo, (int)k, A, (int)lda, &T) ||
        (diag == DIAG_UNIT && !amp_cuda_zero_strided(T, (size_t)(k + 1) * sizeof(float),
                                                     sizeof(float), (size_t)k, s->stream)))
        return -1;
    int status = side == SIDE_LEFT
                     ? ex(h, trans, OP_N, (int)m, (int)n, (int)m, alpha, T, AMP_CUDA_R_32F, (int)k,
                          B, AMP_CUDA_R_32F, (int)ldb, &zero, C, AMP_CUDA_R_32F, (int)ldc, compute,
                          AMP_CUBLAS_GEMM_DEFAULT)
                     : ex(h, OP_N, trans, (int)m, (int)n, (int)n, alpha, B, AMP_CUDA_R_32F,
                          (int)ldb, T, AMP_CUDA_R_32F, (int)k, &zero, C, AMP_CUDA_R_32F, (int)ldc,
                          compute, AMP_CUBLAS_GEMM_DEFAULT);
    if (status == OK && diag == DIAG_UNIT) /* C = C + alpha B, in place */
        status = f->geam(h, OP_N, OP_N, (int)m, (int)n, &one, C, (int)ldc, alpha, B, (int)ldb, C,
                         (int)ldc);
    /* a failure after C was written is repaired by the caller's plain call:
     * trmm's C is output only */
    return status == OK ? OK : -1;
}

int amp_cublas_level3_lowp(enum amp_level3 kind, int is64, const uintptr_t *w, int compute,
                           void *gemmex, const struct amp_cublas_helpers *f)
{
    struct amp_cuda_scratch s = {0};
    if (!amp_helpers_complete(&amp_cublas_helper_list, f, needed, sizeof needed / sizeof *needed) ||
        !gemmex || f->get_stream((void *)w[0], &s.stream) != OK)
        return -1;
    gemmex_fn ex = (gemmex_fn)gemmex;
    void *h = (void *)w[0];
    int status = kind == AMP_LEVEL3_SYRK   ? syrk(f, h, &s, ex, compute, w, is64)
                 : kind == AMP_LEVEL3_SYMM ? symm(f, h, &s, ex, compute, w, is64)
                 : kind == AMP_LEVEL3_TRMM ? trmm(f, h, &s, ex, compute, w, is64)
                                           : -1;
    amp_cuda_scratch_end(&s);
    return status;
}

/* The multiply-adds a call does, for the size rule: syrk (handle, uplo,
 * trans, n, k, ...) n(n+1)k/2; symm (handle, side, uplo, m, n, ...) m n
 * times A's order; trmm and trsm (handle, side, uplo, trans, diag, m, n,
 * ...) half that. A side of 0 is CUBLAS_SIDE_LEFT. */
static double level3_madds(enum amp_level3 kind, int is64, const uintptr_t *w)
{
    if (kind == AMP_LEVEL3_SYRK) {
        double n = (double)arg(w, 3, is64);
        return n * (n + 1) * (double)arg(w, 4, is64) / 2;
    }
    int at = kind == AMP_LEVEL3_SYMM ? 3 : 5;
    double m = (double)arg(w, at, is64), n = (double)arg(w, at + 1, is64);
    double madds = m * n * ((int)w[1] == 0 ? m : n);
    return kind == AMP_LEVEL3_SYMM ? madds : madds / 2;
}

int amp_cublas_level3(enum amp_hook_id hook, enum amp_level3 kind, int is64, const uintptr_t *w)
{
    amp_cublas_words_fn real = (amp_cublas_words_fn)amp_real(hook);
    struct amp_thread *t = amp_thread_enter();
    void *h = (void *)w[0];
#define AMP_CALL_WORDS(i) , w[i]
#define AMP_REAL_CALL() real(AMP_EXPAND(AMP_WORDS(AMP_CALL_WORDS)))
    if (!t)
        return AMP_REAL_CALL();
    /* beta is argument 8 of Ssyrk (handle, uplo, trans, n, k, alpha, A, lda,
     * beta, ...) and 10 of Ssymm (handle, side, uplo, m, n, alpha, A, lda, B,
     * ldb, beta, ...); trmm and trsm have none. */
    const float *beta = kind == AMP_LEVEL3_SYRK   ? (const float *)w[8]
                        : kind == AMP_LEVEL3_SYMM ? (const float *)w[10]
                                                  : NULL;
    enum amp_ctl_counter outcome;
    int acc = amp_cublas_accumulates(hook, real, h, beta);
    int dtype = amp_decide_lower_dtype_unaudited(t, AMP_DEVICE_CUDA, hook, acc, &outcome);
    dtype = amp_cuda_size_rule(t, hook, acc, dtype, level3_madds(kind, is64, w), &outcome);
    int math = -1, status = -1, done = 0;
    if (dtype >= 0 && (!amp_cublas_math_mode(real, h, &math) || amp_cublas_mode_keeps_calls(math)))
        dtype = -1;
    if (dtype >= 0 && kind != AMP_LEVEL3_TRSM && amp_cublas_host_pointers(real, h)) {
        status = amp_cublas_level3_lowp(kind, is64, w, amp_cublas_fast_compute(dtype),
                                        amp_real_beside(AMP_HOOK_cublasGemmEx, (const void *)real),
                                        amp_cublas_helpers(real));
        done = status == AMP_CUBLAS_STATUS_SUCCESS;
    }
    if (!done) {
        outcome = amp_not_lowered_after_all(outcome);
        status = AMP_REAL_CALL();
    }
#undef AMP_REAL_CALL
#undef AMP_CALL_WORDS
    amp_count(t, hook, outcome, 1);
    return status;
}
