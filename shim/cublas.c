/* The exported cuBLAS entry points, expanded from AMPSHIM_HOOK_LIST_CUBLAS.
 * A lowered fp32 GEMM is handed to cuBLAS itself with a fast compute type
 * (CUBLAS_COMPUTE_32F_FAST_16F / _FAST_16BF / _FAST_TF32) on the program's
 * own fp32 buffers: no copies, no kernels of ours, no synchronisation; the
 * tensor cores round the inputs. The caller's stated intent wins: explicit
 * non-fp32 data or compute types, CUBLAS_COMPUTE_32F_PEDANTIC, a handle in
 * CUBLAS_PEDANTIC_MATH or with CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION,
 * and NVIDIA_TF32_OVERRIDE=0 (never tf32) leave the call unchanged. Every
 * CUDA symbol is found at run time; a program without cuBLAS never calls
 * these hooks. */
#include <stdatomic.h>
#include <stdint.h>

#include "shim/cublas_abi.h"
#include "shim/cuda_policy.h"
#include "shim/resolve.h"

#define AMP_EXPORT __attribute__((visibility("default")))
#define AMP_UNPAREN(...) __VA_ARGS__

typedef int (*amp_handle_query)(void *handle, int *value);

/* cublasGetMathMode / cublasGetPointerMode_v2 of the library the hooks
 * forward to (not hooked themselves). */
static amp_handle_query handle_query(const char *name, amp_handle_query _Atomic *cache)
{
    amp_handle_query q = atomic_load_explicit(cache, memory_order_relaxed);
    if (!q) {
        q = (amp_handle_query)amp_resolve_name(name);
        atomic_store_explicit(cache, q, memory_order_relaxed);
    }
    return q;
}

static int handle_value(const char *name, amp_handle_query _Atomic *cache, void *handle, int *value)
{
    amp_handle_query q = handle_query(name, cache);
    return q && q(handle, value) == AMP_CUBLAS_STATUS_SUCCESS;
}

/* Decides a cuBLAS call whose operands are all fp32 and counts it: returns
 * the fast compute type to run it with, or 0 to run it as the program made
 * it. beta is read only when the policy depends on it and it is a host
 * pointer; a handle in pedantic or no-reduced-precision math mode keeps its
 * calls. */
static int decide(struct amp_thread *t, enum amp_hook_id hook, void *handle, const float *beta)
{
    static amp_handle_query _Atomic math_mode, pointer_mode;
    const uint8_t *cat = amp_rt.category[AMP_DEVICE_CUDA][hook];
    int accumulates = 1; /* beta unknown (device pointer): assume it accumulates */
    int mode;
    if (amp_live_load(&cat[0]) == amp_live_load(&cat[1]))
        accumulates = 0;
    else if (beta && handle_value("cublasGetPointerMode_v2", &pointer_mode, handle, &mode) &&
             mode == AMP_CUBLAS_POINTER_MODE_HOST)
        accumulates = *beta != 0.0f;
    enum amp_ctl_counter outcome;
    int compute = amp_cuda_fast_compute(t, hook, accumulates, &outcome);
    if (compute && handle_value("cublasGetMathMode", &math_mode, handle, &mode) &&
        ((mode & 0xf) == AMP_CUBLAS_PEDANTIC_MATH ||
         (mode & AMP_CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION))) {
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
    *compute = decide(t, hook, handle, beta);
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

static void note_caller(void *return_address)
{
    if (amp_unlikely(amp_rt.cfg.callers[0]))
        amp_tls_caller = return_address;
}

#define AMP_INT_I32 int
#define AMP_INT_I64 int64_t
#define AMP_GEMMEX_I32 AMP_HOOK_cublasGemmEx
#define AMP_GEMMEX_I64 AMP_HOOK_cublasGemmEx_64
#define AMP_STRIDEDEX_I32 AMP_HOOK_cublasGemmStridedBatchedEx
#define AMP_STRIDEDEX_I64 AMP_HOOK_cublasGemmStridedBatchedEx_64

/* The Ex forms a lowered call is re-issued through, per integer width. */
#define AMP_DECLARE_EX(ints)                                                                       \
    typedef int (*amp_gemmex_##ints)(void *, int, int, AMP_INT_##ints, AMP_INT_##ints,             \
                                     AMP_INT_##ints, const void *, const void *, int,              \
                                     AMP_INT_##ints, const void *, int, AMP_INT_##ints,            \
                                     const void *, void *, int, AMP_INT_##ints, int, int);         \
    typedef int (*amp_stridedex_##ints)(void *, int, int, AMP_INT_##ints, AMP_INT_##ints,          \
                                        AMP_INT_##ints, const void *, const void *, int,           \
                                        AMP_INT_##ints, long long, const void *, int,              \
                                        AMP_INT_##ints, long long, const void *, void *, int,      \
                                        AMP_INT_##ints, long long, AMP_INT_##ints, int, int);
AMP_DECLARE_EX(I32)
AMP_DECLARE_EX(I64)

/* cublasSgemm_v2: lowered as cublasGemmEx on the same fp32 buffers. */
#define AMP_DEFINE_CUBLAS_CUBLAS_SGEMM(sym, ints)                                                  \
    AMP_EXPORT int sym(void *h, int ta, int tb, AMP_INT_##ints m, AMP_INT_##ints n,                 \
                       AMP_INT_##ints k, const float *alpha, const float *A, AMP_INT_##ints lda,   \
                       const float *B, AMP_INT_##ints ldb, const float *beta, float *C,            \
                       AMP_INT_##ints ldc)                                                         \
    {                                                                                              \
        typedef int (*fn)(void *, int, int, AMP_INT_##ints, AMP_INT_##ints, AMP_INT_##ints,        \
                          const float *, const float *, AMP_INT_##ints, const float *,             \
                          AMP_INT_##ints, const float *, float *, AMP_INT_##ints);                 \
        fn real = (fn)amp_real(AMP_HOOK_##sym);                                                    \
        note_caller(__builtin_return_address(0));                                                  \
        struct amp_thread *t = amp_thread_enter();                                                 \
        int compute;                                                                               \
        amp_gemmex_##ints lowered = (amp_gemmex_##ints)lowering(t, AMP_HOOK_##sym,                 \
                                                                AMP_GEMMEX_##ints, 1, h, beta,     \
                                                                &compute);                         \
        if (lowered)                                                                               \
            return lowered(h, ta, tb, m, n, k, alpha, A, AMP_CUDA_R_32F, lda, B, AMP_CUDA_R_32F,   \
                           ldb, beta, C, AMP_CUDA_R_32F, ldc, compute, AMP_CUBLAS_GEMM_DEFAULT);   \
        return real(h, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);                      \
    }

/* cublasGemmEx: lowered only when every type is fp32 and the compute type is
 * plain CUBLAS_COMPUTE_32F; anything the caller chose stays. */
#define AMP_DEFINE_CUBLAS_CUBLAS_GEMMEX(sym, ints)                                                 \
    AMP_EXPORT int sym(void *h, int ta, int tb, AMP_INT_##ints m, AMP_INT_##ints n,                 \
                       AMP_INT_##ints k, const void *alpha, const void *A, int at,                 \
                       AMP_INT_##ints lda, const void *B, int bt, AMP_INT_##ints ldb,              \
                       const void *beta, void *C, int ct, AMP_INT_##ints ldc, int compute,         \
                       int algo)                                                                   \
    {                                                                                              \
        typedef int (*fn)(void *, int, int, AMP_INT_##ints, AMP_INT_##ints, AMP_INT_##ints,        \
                          const void *, const void *, int, AMP_INT_##ints, const void *, int,      \
                          AMP_INT_##ints, const void *, void *, int, AMP_INT_##ints, int, int);    \
        fn real = (fn)amp_real(AMP_HOOK_##sym);                                                    \
        note_caller(__builtin_return_address(0));                                                  \
        compute = ex_compute(amp_thread_enter(), AMP_HOOK_##sym, h, at, bt, ct, compute, beta);    \
        return real(h, ta, tb, m, n, k, alpha, A, at, lda, B, bt, ldb, beta, C, ct, ldc, compute,  \
                    algo);                                                                         \
    }

#define AMP_DEFINE_CUBLAS_CUBLAS_SGEMM_STRIDED(sym, ints)                                          \
    AMP_EXPORT int sym(void *h, int ta, int tb, AMP_INT_##ints m, AMP_INT_##ints n,                 \
                       AMP_INT_##ints k, const float *alpha, const float *A, AMP_INT_##ints lda,   \
                       long long sa, const float *B, AMP_INT_##ints ldb, long long sb,             \
                       const float *beta, float *C, AMP_INT_##ints ldc, long long sc,              \
                       AMP_INT_##ints batch)                                                       \
    {                                                                                              \
        typedef int (*fn)(void *, int, int, AMP_INT_##ints, AMP_INT_##ints, AMP_INT_##ints,        \
                          const float *, const float *, AMP_INT_##ints, long long, const float *,  \
                          AMP_INT_##ints, long long, const float *, float *, AMP_INT_##ints,       \
                          long long, AMP_INT_##ints);                                              \
        fn real = (fn)amp_real(AMP_HOOK_##sym);                                                    \
        note_caller(__builtin_return_address(0));                                                  \
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

#define AMP_DEFINE_CUBLAS_CUBLAS_GEMMEX_STRIDED(sym, ints)                                         \
    AMP_EXPORT int sym(void *h, int ta, int tb, AMP_INT_##ints m, AMP_INT_##ints n,                 \
                       AMP_INT_##ints k, const void *alpha, const void *A, int at,                 \
                       AMP_INT_##ints lda, long long sa, const void *B, int bt,                    \
                       AMP_INT_##ints ldb, long long sb, const void *beta, void *C, int ct,        \
                       AMP_INT_##ints ldc, long long sc, AMP_INT_##ints batch, int compute,        \
                       int algo)                                                                   \
    {                                                                                              \
        typedef int (*fn)(void *, int, int, AMP_INT_##ints, AMP_INT_##ints, AMP_INT_##ints,        \
                          const void *, const void *, int, AMP_INT_##ints, long long,              \
                          const void *, int, AMP_INT_##ints, long long, const void *, void *, int, \
                          AMP_INT_##ints, long long, AMP_INT_##ints, int, int);                    \
        fn real = (fn)amp_real(AMP_HOOK_##sym);                                                    \
        note_caller(__builtin_return_address(0));                                                  \
        compute = ex_compute(amp_thread_enter(), AMP_HOOK_##sym, h, at, bt, ct, compute, beta);    \
        return real(h, ta, tb, m, n, k, alpha, A, at, lda, sa, B, bt, ldb, sb, beta, C, ct, ldc,   \
                    sc, batch, compute, algo);                                                     \
    }

/* cublasSgemmEx: all-fp32 types become GemmEx with the fast compute type. */
#define AMP_DEFINE_CUBLAS_CUBLAS_SGEMMEX(sym, ints)                                                \
    AMP_EXPORT int sym(void *h, int ta, int tb, AMP_INT_##ints m, AMP_INT_##ints n,                 \
                       AMP_INT_##ints k, const float *alpha, const void *A, int at,                \
                       AMP_INT_##ints lda, const void *B, int bt, AMP_INT_##ints ldb,              \
                       const float *beta, void *C, int ct, AMP_INT_##ints ldc)                     \
    {                                                                                              \
        typedef int (*fn)(void *, int, int, AMP_INT_##ints, AMP_INT_##ints, AMP_INT_##ints,        \
                          const float *, const void *, int, AMP_INT_##ints, const void *, int,     \
                          AMP_INT_##ints, const float *, void *, int, AMP_INT_##ints);             \
        fn real = (fn)amp_real(AMP_HOOK_##sym);                                                    \
        note_caller(__builtin_return_address(0));                                                  \
        struct amp_thread *t = amp_thread_enter();                                                 \
        int compute;                                                                               \
        int fp32 = at == AMP_CUDA_R_32F && bt == AMP_CUDA_R_32F && ct == AMP_CUDA_R_32F;           \
        amp_gemmex_##ints lowered = (amp_gemmex_##ints)lowering(t, AMP_HOOK_##sym,                 \
                                                                AMP_GEMMEX_##ints, fp32, h, beta,  \
                                                                &compute);                         \
        if (lowered)                                                                               \
            return lowered(h, ta, tb, m, n, k, alpha, A, at, lda, B, bt, ldb, beta, C, ct, ldc,    \
                           compute, AMP_CUBLAS_GEMM_DEFAULT);                                      \
        return real(h, ta, tb, m, n, k, alpha, A, at, lda, B, bt, ldb, beta, C, ct, ldc);          \
    }

/* cublasSgemv: y = alpha op(A) x + beta y is a GEMM with one column when x
 * and y have unit stride; other strides, or arguments cuBLAS would reject,
 * reach it unchanged so it reports its own errors. */
#define AMP_DEFINE_CUBLAS_CUBLAS_SGEMV(sym, ints)                                                  \
    AMP_EXPORT int sym(void *h, int trans, AMP_INT_##ints m, AMP_INT_##ints n,                     \
                       const float *alpha, const float *A, AMP_INT_##ints lda, const float *x,    \
                       AMP_INT_##ints incx, const float *beta, float *y, AMP_INT_##ints incy)      \
    {                                                                                              \
        typedef int (*fn)(void *, int, AMP_INT_##ints, AMP_INT_##ints, const float *,              \
                          const float *, AMP_INT_##ints, const float *, AMP_INT_##ints,            \
                          const float *, float *, AMP_INT_##ints);                                 \
        fn real = (fn)amp_real(AMP_HOOK_##sym);                                                    \
        note_caller(__builtin_return_address(0));                                                  \
        struct amp_thread *t = amp_thread_enter();                                                 \
        AMP_INT_##ints rows = trans == 0 ? m : n, inner = trans == 0 ? n : m;                      \
        int shaped = incx == 1 && incy == 1 && m >= 0 && n >= 0 && trans >= 0 && trans <= 2 &&     \
                     lda >= (m > 1 ? m : 1);                                                       \
        int compute;                                                                               \
        amp_gemmex_##ints lowered = (amp_gemmex_##ints)lowering(t, AMP_HOOK_##sym,                 \
                                                                AMP_GEMMEX_##ints, shaped, h,      \
                                                                beta, &compute);                   \
        if (lowered)                                                                               \
            return lowered(h, trans, 0, rows, 1, inner, alpha, A, AMP_CUDA_R_32F, lda, x,          \
                           AMP_CUDA_R_32F, inner > 1 ? inner : 1, beta, y, AMP_CUDA_R_32F,         \
                           rows > 1 ? rows : 1, compute, AMP_CUBLAS_GEMM_DEFAULT);                 \
        return real(h, trans, m, n, alpha, A, lda, x, incx, beta, y, incy);                        \
    }

/* cublasSger: A += alpha x y^T is a GEMM with inner dimension 1 (beta 1)
 * when x and y have unit stride and scalars are host pointers. */
#define AMP_DEFINE_CUBLAS_CUBLAS_SGER(sym, ints)                                                   \
    AMP_EXPORT int sym(void *h, AMP_INT_##ints m, AMP_INT_##ints n, const float *alpha,            \
                       const float *x, AMP_INT_##ints incx, const float *y, AMP_INT_##ints incy,   \
                       float *A, AMP_INT_##ints lda)                                               \
    {                                                                                              \
        typedef int (*fn)(void *, AMP_INT_##ints, AMP_INT_##ints, const float *, const float *,    \
                          AMP_INT_##ints, const float *, AMP_INT_##ints, float *, AMP_INT_##ints); \
        static amp_handle_query _Atomic pointer_mode;                                              \
        static const float one = 1.0f;                                                             \
        fn real = (fn)amp_real(AMP_HOOK_##sym);                                                    \
        note_caller(__builtin_return_address(0));                                                  \
        struct amp_thread *t = amp_thread_enter();                                                 \
        int mode = -1;                                                                             \
        int shaped = incx == 1 && incy == 1 && m >= 0 && n >= 0 && lda >= (m > 1 ? m : 1) &&       \
                     handle_value("cublasGetPointerMode_v2", &pointer_mode, h, &mode) &&           \
                     mode == AMP_CUBLAS_POINTER_MODE_HOST;                                         \
        int compute;                                                                               \
        amp_gemmex_##ints lowered = (amp_gemmex_##ints)lowering(t, AMP_HOOK_##sym,                 \
                                                                AMP_GEMMEX_##ints, shaped, h,      \
                                                                NULL, &compute);                   \
        if (lowered)                                                                               \
            return lowered(h, 0, 1, m, n, 1, alpha, x, AMP_CUDA_R_32F, m > 1 ? m : 1, y,           \
                           AMP_CUDA_R_32F, n > 1 ? n : 1, &one, A, AMP_CUDA_R_32F, lda, compute,   \
                           AMP_CUBLAS_GEMM_DEFAULT);                                               \
        return real(h, m, n, alpha, x, incx, y, incy, A, lda);                                     \
    }

#define AMP_X_HOOK(sym, routine, kind, form, ints, op, op_beta) AMP_DEFINE_##form##_##kind(sym, ints)
AMPSHIM_HOOK_LIST_CUBLAS(AMP_X_HOOK)
#undef AMP_X_HOOK
