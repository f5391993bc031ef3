/* The exported cuBLAS entry points, expanded from AMPSHIM_HOOK_LIST_CUBLAS.
 * A lowered fp32 GEMM is handed to cuBLAS itself with a fast compute type
 * (CUBLAS_COMPUTE_32F_FAST_16F / _FAST_16BF / _FAST_TF32) on the program's
 * own fp32 buffers: no copies, no kernels of ours, no synchronisation; cuBLAS
 * down-converts the inputs (to fp16 or TF32 for FAST_16F, as it decides:
 * tests/gpu/compute_types_gpu says which). The caller's stated intent wins: explicit
 * non-fp32 data or compute types, CUBLAS_COMPUTE_32F_PEDANTIC, a handle in
 * CUBLAS_PEDANTIC_MATH or with CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION,
 * and NVIDIA_TF32_OVERRIDE=0 (never tf32) leave the call unchanged. Every
 * CUDA symbol is found at run time; a program without cuBLAS never calls
 * these hooks. */
#include <stdatomic.h>
#include <stdint.h>

#include "shim/cuda/cublas_abi.h"
#include "shim/cuda/cublas_lowered.h"
#include "shim/cuda/cublas_level3.h"
#include "runtime/decide.h"
#include "shim/hook_stub.h"
#include "shim/forward_words.h"
#include "shim/resolve.h"

typedef int (*amp_handle_query)(void *handle, int *value);

/* A cublasGet*Mode of the library the hooks forward to (not hooked
 * themselves), resolved at its first use. */
static int handle_value(const char *name, amp_handle_query _Atomic *cache, void *handle, int *value)
{
    amp_handle_query q = atomic_load_explicit(cache, memory_order_relaxed);
    if (!q) {
        q = (amp_handle_query)amp_resolve_name(name);
        atomic_store_explicit(cache, q, memory_order_relaxed);
    }
    return q && q(handle, value) == AMP_CUBLAS_STATUS_SUCCESS;
}

static int math_mode(void *handle, int *mode)
{
    static amp_handle_query _Atomic cache;
    return handle_value("cublasGetMathMode", &cache, handle, mode);
}

/* Whether scalars are host pointers (the hooks read beta, and the level-3
 * rebuild passes its own scalars, only then). */
static int host_pointers(void *handle)
{
    static amp_handle_query _Atomic cache;
    int mode;
    return handle_value("cublasGetPointerMode_v2", &cache, handle, &mode) &&
           mode == AMP_CUBLAS_POINTER_MODE_HOST;
}

/* A handle in pedantic or no-reduced-precision math mode keeps its calls. */
static int keeps_its_calls(int mode)
{
    return (mode & 0xf) == AMP_CUBLAS_PEDANTIC_MATH ||
           (mode & AMP_CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION);
}

/* Whether a call counts as accumulating (its op_beta): beta is read only
 * when the policy tells the two apart and it is a host pointer; an unknown
 * beta (a device pointer) counts as accumulating. */
static int accumulates(enum amp_hook_id hook, void *handle, const float *beta)
{
    const uint8_t *cat = amp_rt.category[AMP_DEVICE_CUDA][hook];
    if (amp_live_load(&cat[0]) == amp_live_load(&cat[1]))
        return 0;
    return beta && host_pointers(handle) ? *beta != 0.0f : 1;
}

/* Decides a cuBLAS call whose operands are all fp32 and counts it: returns
 * the fast compute type to run it with, or 0 to run it as the program made
 * it. Only calls lowered through a GemmEx form can be audited
 * (shim/cuda/cublas_audit.c); the others run as made under AMPSHIM_AUDIT=1. */
static int decide(struct amp_thread *t, enum amp_hook_id hook, void *handle, const float *beta,
                  int audited)
{
    enum amp_ctl_counter outcome;
    int acc = accumulates(hook, handle, beta);
    int compute = amp_cublas_fast_compute(
        audited ? amp_decide_lower_dtype(t, AMP_DEVICE_CUDA, hook, acc, &outcome)
                : amp_decide_lower_dtype_unaudited(t, AMP_DEVICE_CUDA, hook, acc, &outcome));
    int mode;
    if (compute && math_mode(handle, &mode) && keeps_its_calls(mode)) {
        compute = 0;
        outcome = AMP_CTL_PASSTHROUGH;
    }
    amp_count(t, hook, outcome, 1);
    return compute;
}

/* The function a call is re-issued through to lower it (target: a GemmEx
 * form), with *compute its fast compute type; or NULL, the call counted,
 * when it runs as the program made it: not eligible (types, strides), the
 * library has no target, or the policy says so. */
static void *lowering(struct amp_thread *t, enum amp_hook_id hook, enum amp_hook_id target,
                      int eligible, void *handle, const float *beta, int *compute)
{
    *compute = 0;
    if (!t)
        return NULL;
    void *ex = eligible ? amp_real_optional(target) : NULL;
    if (!ex) {
        amp_count(t, hook, AMP_CTL_PASSTHROUGH, 1);
        return NULL;
    }
    *compute = decide(t, hook, handle, beta,
                      target == AMP_HOOK_cublasGemmEx || target == AMP_HOOK_cublasGemmEx_64);
    return *compute ? ex : NULL;
}

/* The compute type an Ex call runs with: lowered only when every data type
 * is fp32 and the compute type is plain CUBLAS_COMPUTE_32F; whatever else the
 * caller chose stays. */
static int ex_compute(struct amp_thread *t, enum amp_hook_id hook, void *handle, int at, int bt,
                      int ct, int compute, const void *beta)
{
    int fast;
    int eligible = at == AMP_CUDA_R_32F && bt == AMP_CUDA_R_32F && ct == AMP_CUDA_R_32F &&
                   compute == AMP_CUBLAS_COMPUTE_32F;
    return lowering(t, hook, hook, eligible, handle, (const float *)beta, &fast) ? fast : compute;
}


#define AMP_INT_I32 int
#define AMP_INT_I64 int64_t
#define AMP_GEMMEX_I32 AMP_HOOK_cublasGemmEx
#define AMP_GEMMEX_I64 AMP_HOOK_cublasGemmEx_64
#define AMP_STRIDEDEX_I32 AMP_HOOK_cublasGemmStridedBatchedEx
#define AMP_STRIDEDEX_I64 AMP_HOOK_cublasGemmStridedBatchedEx_64
#define AMP_BATCHEDEX_I32 AMP_HOOK_cublasGemmBatchedEx
#define AMP_BATCHEDEX_I64 AMP_HOOK_cublasGemmBatchedEx_64

#define AMP_IS64_I32 0
#define AMP_IS64_I64 1

/* Returns from a hook whose call is lowered, given in GemmEx form `args`
 * (its compute type the fast one) with `ex` the GemmEx to run it through:
 * run plainly; in fp16 with AMPSHIM_CUDA_FP16=explicit through
 * amp_cublas_fp16_explicit (AS_MADE_CALL when it cannot), unless
 * AMPSHIM_AUDIT=1 promises the program its results as made; under the audit
 * (AMPSHIM_AUDIT) through amp_cublas_audited, which runs it both ways
 * (sym##_as_made re-issues the program's own call) or answers that
 * AS_MADE_CALL is to run. */
#define AMP_RETURN_LOWERED(sym, ints, ex, t, args, AS_MADE_CALL)                                   \
    do {                                                                                           \
        if (amp_unlikely(amp_rt.cfg.cuda_fp16_explicit) &&                                         \
            (args)->compute == AMP_CUBLAS_COMPUTE_32F_FAST_16F &&                                  \
            amp_live_load(&amp_rt.cfg.audit) != AMP_AUDIT_ON) {                                    \
            int status_ = amp_cublas_fp16_explicit((void *)(ex), AMP_IS64_##ints, args);           \
            if (status_ >= 0)                                                                      \
                return status_;                                                                    \
            amp_count_not_lowered_after_all(t, AMP_HOOK_##sym);                                    \
            return AS_MADE_CALL;                                                                   \
        }                                                                                          \
        if (amp_unlikely(amp_live_load(&amp_rt.cfg.audit))) {                                       \
            int as_made_;                                                                          \
            int status_ = amp_cublas_audited(t, AMP_HOOK_##sym,                                    \
                                             amp_cublas_compute_dtype((args)->compute),            \
                                             (void *)(ex), AMP_IS64_##ints, args, sym##_as_made,   \
                                             &as_made_);                                           \
            return as_made_ ? (AS_MADE_CALL) : status_;                                            \
        }                                                                                          \
        return amp_cublas_run_gemmex((void *)(ex), AMP_IS64_##ints, args);                         \
    } while (0)

/* The strided and batched Ex forms a lowered call is re-issued through, per
 * integer width (cublasGemmEx's: cublas_lowered.h). */
#define AMP_DECLARE_EX(ints)                                                                       \
    typedef int (*amp_stridedex_##ints)(void *, int, int, AMP_INT_##ints, AMP_INT_##ints,          \
                                        AMP_INT_##ints, const void *, const void *, int,           \
                                        AMP_INT_##ints, long long, const void *, int,              \
                                        AMP_INT_##ints, long long, const void *, void *, int,      \
                                        AMP_INT_##ints, long long, AMP_INT_##ints, int, int);      \
    typedef int (*amp_batchedex_##ints)(                                                           \
        void *, int, int, AMP_INT_##ints, AMP_INT_##ints, AMP_INT_##ints, const void *,            \
        const void *const *, int, AMP_INT_##ints, const void *const *, int, AMP_INT_##ints,        \
        const void *, void *const *, int, AMP_INT_##ints, AMP_INT_##ints, int, int);
AMP_DECLARE_EX(I32)
AMP_DECLARE_EX(I64)

/* cublasSgemm_v2: lowered as cublasGemmEx on the same fp32 buffers. */
#define AMP_DEFINE_CUBLAS_SGEMM(sym, ints) \
    typedef int (*sym##_fn)(void *, int, int, AMP_INT_##ints, AMP_INT_##ints, AMP_INT_##ints,      \
                            const float *, const float *, AMP_INT_##ints, const float *,           \
                            AMP_INT_##ints, const float *, float *, AMP_INT_##ints);               \
    static int sym##_as_made(const struct amp_gemmex_args *a, void *out, int64_t ld)               \
    {                                                                                              \
        return ((sym##_fn)amp_real(AMP_HOOK_##sym))(                                               \
            a->h, a->ta, a->tb, (AMP_INT_##ints)a->m, (AMP_INT_##ints)a->n, (AMP_INT_##ints)a->k,  \
            a->alpha, a->A, (AMP_INT_##ints)a->lda, a->B, (AMP_INT_##ints)a->ldb, a->beta, out,    \
            (AMP_INT_##ints)ld);                                                                   \
    }                                                                                              \
    AMP_STUB(sym)                                                                                  \
    int AMP_C_ENTRY(sym)(void *h, int ta, int tb, AMP_INT_##ints m, AMP_INT_##ints n,              \
                         AMP_INT_##ints k, const float *alpha, const float *A, AMP_INT_##ints lda, \
                         const float *B, AMP_INT_##ints ldb, const float *beta, float *C,          \
                         AMP_INT_##ints ldc)                                                       \
    {                                                                                              \
        AMP_NOTE_CALLER();                                                                         \
        sym##_fn real = (sym##_fn)amp_real(AMP_HOOK_##sym);                                        \
        struct amp_thread *t = amp_thread_enter();                                                 \
        int compute;                                                                               \
        amp_gemmex_##ints lowered = (amp_gemmex_##ints)lowering(                                   \
            t, AMP_HOOK_##sym, AMP_GEMMEX_##ints, 1, h, beta, &compute);                           \
        if (lowered) {                                                                             \
            struct amp_gemmex_args args = {h, ta, tb, m, n, k, alpha, A, AMP_CUDA_R_32F, lda, B,  \
                                           AMP_CUDA_R_32F, ldb, beta, C, AMP_CUDA_R_32F, ldc,     \
                                           compute, AMP_CUBLAS_GEMM_DEFAULT};                     \
            AMP_RETURN_LOWERED(sym, ints, lowered, t, &args,                                       \
                               real(h, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc));     \
        }                                                                                          \
        return real(h, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);                      \
    }

/* cublasGemmEx: lowered only when every type is fp32 and the compute type is
 * plain CUBLAS_COMPUTE_32F; anything the caller chose stays. */
#define AMP_DEFINE_CUBLAS_GEMMEX(sym, ints) \
    static int sym##_as_made(const struct amp_gemmex_args *a, void *out, int64_t ld)               \
    {                                                                                              \
        struct amp_gemmex_args made = *a;                                                          \
        made.C = out;                                                                              \
        made.ldc = ld;                                                                             \
        made.compute = AMP_CUBLAS_COMPUTE_32F; /* the only one that is lowered */                  \
        return ((amp_gemmex_##ints)amp_real(AMP_HOOK_##sym))(                                      \
            made.h, made.ta, made.tb, (AMP_INT_##ints)made.m, (AMP_INT_##ints)made.n,              \
            (AMP_INT_##ints)made.k, made.alpha, made.A, made.at, (AMP_INT_##ints)made.lda, made.B, \
            made.bt, (AMP_INT_##ints)made.ldb, made.beta, made.C, made.ct,                         \
            (AMP_INT_##ints)made.ldc, made.compute, made.algo);                                    \
    }                                                                                              \
    AMP_STUB(sym)                                                                                  \
    int AMP_C_ENTRY(sym)(void *h, int ta, int tb, AMP_INT_##ints m, AMP_INT_##ints n,              \
                         AMP_INT_##ints k, const void *alpha, const void *A, int at,               \
                         AMP_INT_##ints lda, const void *B, int bt, AMP_INT_##ints ldb,            \
                         const void *beta, void *C, int ct, AMP_INT_##ints ldc, int compute,       \
                         int algo)                                                                 \
    {                                                                                              \
        AMP_NOTE_CALLER();                                                                         \
        amp_gemmex_##ints real = (amp_gemmex_##ints)amp_real(AMP_HOOK_##sym);                      \
        struct amp_thread *t = amp_thread_enter();                                                 \
        int made = compute;                                                                        \
        compute = ex_compute(t, AMP_HOOK_##sym, h, at, bt, ct, compute, beta);                     \
        if (compute != made) {                                                                     \
            struct amp_gemmex_args args = {h,  ta, tb,  m,    n, k, alpha, A,       at,   lda,     \
                                           B,  bt, ldb, beta, C, ct, ldc,  compute, algo};         \
            AMP_RETURN_LOWERED(sym, ints, real, t, &args,                                          \
                               real(h, ta, tb, m, n, k, alpha, A, at, lda, B, bt, ldb, beta, C,    \
                                    ct, ldc, made, algo));                                         \
        }                                                                                          \
        return real(h, ta, tb, m, n, k, alpha, A, at, lda, B, bt, ldb, beta, C, ct, ldc, compute,  \
                    algo);                                                                         \
    }

#define AMP_DEFINE_CUBLAS_SGEMM_STRIDED(sym, ints) \
    AMP_STUB(sym)                                                                                  \
    int AMP_C_ENTRY(sym)(void *h, int ta, int tb, AMP_INT_##ints m, AMP_INT_##ints n,              \
                         AMP_INT_##ints k, const float *alpha, const float *A, AMP_INT_##ints lda, \
                         long long sa, const float *B, AMP_INT_##ints ldb, long long sb,           \
                         const float *beta, float *C, AMP_INT_##ints ldc, long long sc,            \
                         AMP_INT_##ints batch)                                                     \
    {                                                                                              \
        AMP_NOTE_CALLER();                                                                         \
        typedef int (*fn)(void *, int, int, AMP_INT_##ints, AMP_INT_##ints, AMP_INT_##ints,        \
                          const float *, const float *, AMP_INT_##ints, long long, const float *,  \
                          AMP_INT_##ints, long long, const float *, float *, AMP_INT_##ints,       \
                          long long, AMP_INT_##ints);                                              \
        fn real = (fn)amp_real(AMP_HOOK_##sym);                                                    \
        struct amp_thread *t = amp_thread_enter();                                                 \
        int compute;                                                                               \
        amp_stridedex_##ints lowered = (amp_stridedex_##ints)lowering(                             \
            t, AMP_HOOK_##sym, AMP_STRIDEDEX_##ints, 1, h, beta, &compute);                        \
        if (lowered)                                                                               \
            return lowered(h, ta, tb, m, n, k, alpha, A, AMP_CUDA_R_32F, lda, sa, B,               \
                           AMP_CUDA_R_32F, ldb, sb, beta, C, AMP_CUDA_R_32F, ldc, sc, batch,       \
                           compute, AMP_CUBLAS_GEMM_DEFAULT);                                      \
        return real(h, ta, tb, m, n, k, alpha, A, lda, sa, B, ldb, sb, beta, C, ldc, sc, batch);   \
    }

#define AMP_DEFINE_CUBLAS_GEMMEX_STRIDED(sym, ints) \
    AMP_STUB(sym)                                                                                  \
    int AMP_C_ENTRY(sym)(                                                                          \
        void *h, int ta, int tb, AMP_INT_##ints m, AMP_INT_##ints n, AMP_INT_##ints k,             \
        const void *alpha, const void *A, int at, AMP_INT_##ints lda, long long sa, const void *B, \
        int bt, AMP_INT_##ints ldb, long long sb, const void *beta, void *C, int ct,               \
        AMP_INT_##ints ldc, long long sc, AMP_INT_##ints batch, int compute, int algo)             \
    {                                                                                              \
        AMP_NOTE_CALLER();                                                                         \
        typedef int (*fn)(void *, int, int, AMP_INT_##ints, AMP_INT_##ints, AMP_INT_##ints,        \
                          const void *, const void *, int, AMP_INT_##ints, long long,              \
                          const void *, int, AMP_INT_##ints, long long, const void *, void *, int, \
                          AMP_INT_##ints, long long, AMP_INT_##ints, int, int);                    \
        fn real = (fn)amp_real(AMP_HOOK_##sym);                                                    \
        compute = ex_compute(amp_thread_enter(), AMP_HOOK_##sym, h, at, bt, ct, compute, beta);    \
        return real(h, ta, tb, m, n, k, alpha, A, at, lda, sa, B, bt, ldb, sb, beta, C, ct, ldc,   \
                    sc, batch, compute, algo);                                                     \
    }

/* cublasSgemmEx: all-fp32 types become GemmEx with the fast compute type. */
#define AMP_DEFINE_CUBLAS_SGEMMEX(sym, ints) \
    typedef int (*sym##_fn)(void *, int, int, AMP_INT_##ints, AMP_INT_##ints, AMP_INT_##ints,      \
                            const float *, const void *, int, AMP_INT_##ints, const void *, int,   \
                            AMP_INT_##ints, const float *, void *, int, AMP_INT_##ints);           \
    static int sym##_as_made(const struct amp_gemmex_args *a, void *out, int64_t ld)               \
    {                                                                                              \
        return ((sym##_fn)amp_real(AMP_HOOK_##sym))(                                               \
            a->h, a->ta, a->tb, (AMP_INT_##ints)a->m, (AMP_INT_##ints)a->n, (AMP_INT_##ints)a->k,  \
            a->alpha, a->A, a->at, (AMP_INT_##ints)a->lda, a->B, a->bt, (AMP_INT_##ints)a->ldb,    \
            a->beta, out, a->ct, (AMP_INT_##ints)ld);                                              \
    }                                                                                              \
    AMP_STUB(sym)                                                                                  \
    int AMP_C_ENTRY(sym)(void *h, int ta, int tb, AMP_INT_##ints m, AMP_INT_##ints n,              \
                         AMP_INT_##ints k, const float *alpha, const void *A, int at,              \
                         AMP_INT_##ints lda, const void *B, int bt, AMP_INT_##ints ldb,            \
                         const float *beta, void *C, int ct, AMP_INT_##ints ldc)                   \
    {                                                                                              \
        AMP_NOTE_CALLER();                                                                         \
        sym##_fn real = (sym##_fn)amp_real(AMP_HOOK_##sym);                                        \
        struct amp_thread *t = amp_thread_enter();                                                 \
        int compute;                                                                               \
        int fp32 = at == AMP_CUDA_R_32F && bt == AMP_CUDA_R_32F && ct == AMP_CUDA_R_32F;           \
        amp_gemmex_##ints lowered = (amp_gemmex_##ints)lowering(                                   \
            t, AMP_HOOK_##sym, AMP_GEMMEX_##ints, fp32, h, beta, &compute);                        \
        if (lowered) {                                                                             \
            struct amp_gemmex_args args = {h,  ta, tb,  m,    n, k, alpha, A,       at,           \
                                           lda, B, bt,  ldb,  beta, C, ct, ldc, compute,          \
                                           AMP_CUBLAS_GEMM_DEFAULT};                              \
            AMP_RETURN_LOWERED(sym, ints, lowered, t, &args,                                       \
                               real(h, ta, tb, m, n, k, alpha, A, at, lda, B, bt, ldb, beta, C,    \
                                    ct, ldc));                                                     \
        }                                                                                          \
        return real(h, ta, tb, m, n, k, alpha, A, at, lda, B, bt, ldb, beta, C, ct, ldc);          \
    }

/* Whether a gemv's arguments are ones cuBLAS accepts and its vectors have
 * unit stride: only those become GEMMs with one column. */
#define AMP_GEMV_SHAPED(trans, m, n, lda, incx, incy)                                              \
    (incx == 1 && incy == 1 && m >= 0 && n >= 0 && trans >= 0 && trans <= 2 &&                     \
     lda >= (m > 1 ? m : 1))

/* cublasSgemv: y = alpha op(A) x + beta y is a GEMM with one column when x
 * and y have unit stride; other strides, or arguments cuBLAS would reject,
 * reach it unchanged so it reports its own errors. */
#define AMP_DEFINE_CUBLAS_SGEMV(sym, ints) \
    typedef int (*sym##_fn)(void *, int, AMP_INT_##ints, AMP_INT_##ints, const float *,            \
                            const float *, AMP_INT_##ints, const float *, AMP_INT_##ints,          \
                            const float *, float *, AMP_INT_##ints);                               \
    /* From GemmEx form: m rows (op(A)'s), k inner; the program's m, n are A's. */                 \
    static int sym##_as_made(const struct amp_gemmex_args *a, void *out, int64_t ld)               \
    {                                                                                              \
        (void)ld;                                                                                  \
        return ((sym##_fn)amp_real(AMP_HOOK_##sym))(                                               \
            a->h, a->ta, (AMP_INT_##ints)(a->ta == 0 ? a->m : a->k),                               \
            (AMP_INT_##ints)(a->ta == 0 ? a->k : a->m), a->alpha, a->A, (AMP_INT_##ints)a->lda,    \
            a->B, 1, a->beta, out, 1);                                                             \
    }                                                                                              \
    AMP_STUB(sym)                                                                                  \
    int AMP_C_ENTRY(sym)(void *h, int trans, AMP_INT_##ints m, AMP_INT_##ints n,                   \
                         const float *alpha, const float *A, AMP_INT_##ints lda, const float *x,   \
                         AMP_INT_##ints incx, const float *beta, float *y, AMP_INT_##ints incy)    \
    {                                                                                              \
        AMP_NOTE_CALLER();                                                                         \
        sym##_fn real = (sym##_fn)amp_real(AMP_HOOK_##sym);                                        \
        struct amp_thread *t = amp_thread_enter();                                                 \
        AMP_INT_##ints rows = trans == 0 ? m : n, inner = trans == 0 ? n : m;                      \
        int compute;                                                                               \
        amp_gemmex_##ints lowered = (amp_gemmex_##ints)lowering(                                   \
            t, AMP_HOOK_##sym, AMP_GEMMEX_##ints, AMP_GEMV_SHAPED(trans, m, n, lda, incx, incy),   \
            h, beta, &compute);                                                                    \
        if (lowered) {                                                                             \
            struct amp_gemmex_args args = {                                                        \
                h, trans, 0, rows, 1, inner, alpha, A, AMP_CUDA_R_32F, lda, x, AMP_CUDA_R_32F,     \
                inner > 1 ? inner : 1, beta, y, AMP_CUDA_R_32F, rows > 1 ? rows : 1, compute,      \
                AMP_CUBLAS_GEMM_DEFAULT};                                                          \
            AMP_RETURN_LOWERED(sym, ints, lowered, t, &args,                                       \
                               real(h, trans, m, n, alpha, A, lda, x, incx, beta, y, incy));       \
        }                                                                                          \
        return real(h, trans, m, n, alpha, A, lda, x, incx, beta, y, incy);                        \
    }

/* cublasSger: A += alpha x y^T is a GEMM with inner dimension 1 (beta 1)
 * when x and y have unit stride and scalars are host pointers. */
#define AMP_DEFINE_CUBLAS_SGER(sym, ints) \
    typedef int (*sym##_fn)(void *, AMP_INT_##ints, AMP_INT_##ints, const float *, const float *,  \
                            AMP_INT_##ints, const float *, AMP_INT_##ints, float *,                \
                            AMP_INT_##ints);                                                       \
    static int sym##_as_made(const struct amp_gemmex_args *a, void *out, int64_t ld)               \
    {                                                                                              \
        return ((sym##_fn)amp_real(AMP_HOOK_##sym))(a->h, (AMP_INT_##ints)a->m,                    \
                                                    (AMP_INT_##ints)a->n, a->alpha, a->A, 1, a->B, \
                                                    1, out, (AMP_INT_##ints)ld);                   \
    }                                                                                              \
    AMP_STUB(sym)                                                                                  \
    int AMP_C_ENTRY(sym)(void *h, AMP_INT_##ints m, AMP_INT_##ints n, const float *alpha,          \
                         const float *x, AMP_INT_##ints incx, const float *y, AMP_INT_##ints incy, \
                         float *A, AMP_INT_##ints lda)                                             \
    {                                                                                              \
        AMP_NOTE_CALLER();                                                                         \
        static const float one = 1.0f;                                                             \
        sym##_fn real = (sym##_fn)amp_real(AMP_HOOK_##sym);                                        \
        struct amp_thread *t = amp_thread_enter();                                                 \
        int shaped = incx == 1 && incy == 1 && m >= 0 && n >= 0 && lda >= (m > 1 ? m : 1) &&       \
                     host_pointers(h);                                                             \
        int compute;                                                                               \
        amp_gemmex_##ints lowered = (amp_gemmex_##ints)lowering(                                   \
            t, AMP_HOOK_##sym, AMP_GEMMEX_##ints, shaped, h, NULL, &compute);                      \
        if (lowered) {                                                                             \
            struct amp_gemmex_args args = {h, 0, 1, m, n, 1, alpha, x, AMP_CUDA_R_32F,             \
                                           m > 1 ? m : 1, y, AMP_CUDA_R_32F, n > 1 ? n : 1, &one,  \
                                           A, AMP_CUDA_R_32F, lda, compute,                        \
                                           AMP_CUBLAS_GEMM_DEFAULT};                               \
            AMP_RETURN_LOWERED(sym, ints, lowered, t, &args,                                       \
                               real(h, m, n, alpha, x, incx, y, incy, A, lda));                    \
        }                                                                                          \
        return real(h, m, n, alpha, x, incx, y, incy, A, lda);                                     \
    }

/* cublasSgemmBatched: pointer arrays, lowered as cublasGemmBatchedEx. */
#define AMP_DEFINE_CUBLAS_SGEMM_BATCHED(sym, ints) \
    AMP_STUB(sym)                                                                                  \
    int AMP_C_ENTRY(sym)(void *h, int ta, int tb, AMP_INT_##ints m, AMP_INT_##ints n,              \
                         AMP_INT_##ints k, const float *alpha, const float *const *A,              \
                         AMP_INT_##ints lda, const float *const *B, AMP_INT_##ints ldb,            \
                         const float *beta, float *const *C, AMP_INT_##ints ldc,                   \
                         AMP_INT_##ints batch)                                                     \
    {                                                                                              \
        AMP_NOTE_CALLER();                                                                         \
        typedef int (*fn)(void *, int, int, AMP_INT_##ints, AMP_INT_##ints, AMP_INT_##ints,        \
                          const float *, const float *const *, AMP_INT_##ints,                     \
                          const float *const *, AMP_INT_##ints, const float *, float *const *,     \
                          AMP_INT_##ints, AMP_INT_##ints);                                         \
        fn real = (fn)amp_real(AMP_HOOK_##sym);                                                    \
        struct amp_thread *t = amp_thread_enter();                                                 \
        int compute;                                                                               \
        amp_batchedex_##ints lowered = (amp_batchedex_##ints)lowering(                             \
            t, AMP_HOOK_##sym, AMP_BATCHEDEX_##ints, 1, h, beta, &compute);                        \
        if (lowered)                                                                               \
            return lowered(h, ta, tb, m, n, k, alpha, (const void *const *)A, AMP_CUDA_R_32F, lda, \
                           (const void *const *)B, AMP_CUDA_R_32F, ldb, beta, (void *const *)C,    \
                           AMP_CUDA_R_32F, ldc, batch, compute, AMP_CUBLAS_GEMM_DEFAULT);          \
        return real(h, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc, batch);               \
    }

#define AMP_DEFINE_CUBLAS_GEMMEX_BATCHED(sym, ints) \
    AMP_STUB(sym)                                                                                  \
    int AMP_C_ENTRY(sym)(void *h, int ta, int tb, AMP_INT_##ints m, AMP_INT_##ints n,              \
                         AMP_INT_##ints k, const void *alpha, const void *const *A, int at,        \
                         AMP_INT_##ints lda, const void *const *B, int bt, AMP_INT_##ints ldb,     \
                         const void *beta, void *const *C, int ct, AMP_INT_##ints ldc,             \
                         AMP_INT_##ints batch, int compute, int algo)                              \
    {                                                                                              \
        AMP_NOTE_CALLER();                                                                         \
        amp_batchedex_##ints real = (amp_batchedex_##ints)amp_real(AMP_HOOK_##sym);                \
        compute = ex_compute(amp_thread_enter(), AMP_HOOK_##sym, h, at, bt, ct, compute, beta);    \
        return real(h, ta, tb, m, n, k, alpha, A, at, lda, B, bt, ldb, beta, C, ct, ldc, batch,    \
                    compute, algo);                                                                \
    }

/* cublasSgemvBatched: a pointer-array batch of one-column GEMMs. */
#define AMP_DEFINE_CUBLAS_SGEMV_BATCHED(sym, ints) \
    AMP_STUB(sym)                                                                                  \
    int AMP_C_ENTRY(sym)(void *h, int trans, AMP_INT_##ints m, AMP_INT_##ints n,                   \
                         const float *alpha, const float *const *A, AMP_INT_##ints lda,            \
                         const float *const *x, AMP_INT_##ints incx, const float *beta,            \
                         float *const *y, AMP_INT_##ints incy, AMP_INT_##ints batch)               \
    {                                                                                              \
        AMP_NOTE_CALLER();                                                                         \
        typedef int (*fn)(void *, int, AMP_INT_##ints, AMP_INT_##ints, const float *,              \
                          const float *const *, AMP_INT_##ints, const float *const *,              \
                          AMP_INT_##ints, const float *, float *const *, AMP_INT_##ints,           \
                          AMP_INT_##ints);                                                         \
        fn real = (fn)amp_real(AMP_HOOK_##sym);                                                    \
        struct amp_thread *t = amp_thread_enter();                                                 \
        AMP_INT_##ints rows = trans == 0 ? m : n, inner = trans == 0 ? n : m;                      \
        int compute;                                                                               \
        amp_batchedex_##ints lowered = (amp_batchedex_##ints)lowering(                             \
            t, AMP_HOOK_##sym, AMP_BATCHEDEX_##ints,                                               \
            AMP_GEMV_SHAPED(trans, m, n, lda, incx, incy), h, beta, &compute);                     \
        if (lowered)                                                                               \
            return lowered(h, trans, 0, rows, 1, inner, alpha, (const void *const *)A,             \
                           AMP_CUDA_R_32F, lda, (const void *const *)x, AMP_CUDA_R_32F,            \
                           inner > 1 ? inner : 1, beta, (void *const *)y, AMP_CUDA_R_32F,          \
                           rows > 1 ? rows : 1, batch, compute, AMP_CUBLAS_GEMM_DEFAULT);          \
        return real(h, trans, m, n, alpha, A, lda, x, incx, beta, y, incy, batch);                 \
    }

/* cublasSgemvStridedBatched: a strided batch of one-column GEMMs. */
#define AMP_DEFINE_CUBLAS_SGEMV_STRIDED(sym, ints) \
    AMP_STUB(sym)                                                                                  \
    int AMP_C_ENTRY(sym)(void *h, int trans, AMP_INT_##ints m, AMP_INT_##ints n,                   \
                         const float *alpha, const float *A, AMP_INT_##ints lda, long long sa,     \
                         const float *x, AMP_INT_##ints incx, long long sx, const float *beta,     \
                         float *y, AMP_INT_##ints incy, long long sy, AMP_INT_##ints batch)        \
    {                                                                                              \
        AMP_NOTE_CALLER();                                                                         \
        typedef int (*fn)(void *, int, AMP_INT_##ints, AMP_INT_##ints, const float *,              \
                          const float *, AMP_INT_##ints, long long, const float *, AMP_INT_##ints, \
                          long long, const float *, float *, AMP_INT_##ints, long long,            \
                          AMP_INT_##ints);                                                         \
        fn real = (fn)amp_real(AMP_HOOK_##sym);                                                    \
        struct amp_thread *t = amp_thread_enter();                                                 \
        AMP_INT_##ints rows = trans == 0 ? m : n, inner = trans == 0 ? n : m;                      \
        int compute;                                                                               \
        amp_stridedex_##ints lowered = (amp_stridedex_##ints)lowering(                             \
            t, AMP_HOOK_##sym, AMP_STRIDEDEX_##ints,                                               \
            AMP_GEMV_SHAPED(trans, m, n, lda, incx, incy), h, beta, &compute);                     \
        if (lowered)                                                                               \
            return lowered(h, trans, 0, rows, 1, inner, alpha, A, AMP_CUDA_R_32F, lda, sa, x,      \
                           AMP_CUDA_R_32F, inner > 1 ? inner : 1, sx, beta, y, AMP_CUDA_R_32F,     \
                           rows > 1 ? rows : 1, sy, batch, compute, AMP_CUBLAS_GEMM_DEFAULT);      \
        return real(h, trans, m, n, alpha, A, lda, sa, x, incx, sx, beta, y, incy, sy, batch);     \
    }

/* The level-1 reductions: nothing to lower; counted (fp32 for the norms,
 * fp32-list ops) and forwarded word for word. */
typedef int (*amp_cublas_words_fn)(AMP_WORD_TYPES);
#define AMP_DEFINE_CUBLAS_LEAF(sym, ints) \
    AMP_STUB(sym) int AMP_C_ENTRY(sym)(AMP_WORD_PARAMS)                                            \
    {                                                                                              \
        AMP_NOTE_CALLER();                                                                         \
        amp_cublas_words_fn real = (amp_cublas_words_fn)amp_real(AMP_HOOK_##sym);                  \
        struct amp_thread *t = amp_thread_enter();                                                 \
        if (t)                                                                                     \
            amp_count(t, AMP_HOOK_##sym,                                                           \
                      amp_decide_fp32(t, AMP_DEVICE_CUDA, AMP_HOOK_##sym) ? AMP_CTL_FP32 : AMP_CTL_PASSTHROUGH, \
                      1);                                                                          \
        return real(AMP_WORD_ARGS);                                                                \
    }

/* A symmetric or triangular level-3 call. These routines have no
 * compute-type argument; shim/cuda/cublas_level3.c rebuilds syrk, symm and
 * trmm on cublasGemmEx with the fast compute type of the dtype (tf32 too).
 * trsm has no such form and runs as made. The program's handle is never
 * reconfigured (no math mode set on it): a thread sharing it sees nothing. */
static int level3(enum amp_hook_id hook, amp_cublas_words_fn real, const uintptr_t *w,
                  enum amp_level3 kind, int is64)
{
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
    int dtype = amp_decide_lower_dtype_unaudited(t, AMP_DEVICE_CUDA, hook,
                                                 accumulates(hook, h, beta), &outcome);
    int math = -1, status = -1, done = 0;
    if (dtype >= 0 && (!math_mode(h, &math) || keeps_its_calls(math)))
        dtype = -1;
    if (dtype >= 0 && kind != AMP_LEVEL3_TRSM && host_pointers(h)) {
        status = amp_cublas_level3_lowp(kind, is64, w, amp_cublas_fast_compute(dtype),
                                        amp_real_optional(AMP_HOOK_cublasGemmEx));
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

#define AMP_DEFINE_LEVEL3(sym, kind, ints)                                                         \
    AMP_STUB(sym) int AMP_C_ENTRY(sym)(AMP_WORD_PARAMS)                                            \
    {                                                                                              \
        AMP_NOTE_CALLER();                                                                         \
        const uintptr_t w[] = {AMP_WORD_ARGS};                                                     \
        return level3(AMP_HOOK_##sym, (amp_cublas_words_fn)amp_real(AMP_HOOK_##sym), w, kind,      \
                      AMP_IS64_##ints);                                                            \
    }
#define AMP_DEFINE_CUBLAS_SYRK(sym, ints) AMP_DEFINE_LEVEL3(sym, AMP_LEVEL3_SYRK, ints)
#define AMP_DEFINE_CUBLAS_SYMM(sym, ints) AMP_DEFINE_LEVEL3(sym, AMP_LEVEL3_SYMM, ints)
#define AMP_DEFINE_CUBLAS_TRMM(sym, ints) AMP_DEFINE_LEVEL3(sym, AMP_LEVEL3_TRMM, ints)
#define AMP_DEFINE_CUBLAS_TRSM(sym, ints) AMP_DEFINE_LEVEL3(sym, AMP_LEVEL3_TRSM, ints)

#define AMP_X_HOOK(sym, routine, kind, form, ints, op, op_beta)                                    \
    AMP_DEFINE_##form##_##kind(sym, ints)
AMPSHIM_HOOK_LIST_CUBLAS(AMP_X_HOOK)
#undef AMP_X_HOOK
