/* The exported BLAS entry points: CBLAS and Fortran, plain and 64-bit
 * suffixed, all expanded from AMPSHIM_HOOK_LIST_BLAS. Each hook forwards at
 * once when the shim is inert; otherwise it decides before parsing anything,
 * plans and rounds only when lowering, and calls the real routine with the
 * caller's own arguments (rounded copies swapped in for multiplicands).
 *
 * Every hook is two functions: the exported one decides inline and, when
 * the call passes through, tail-calls the real routine (a few instructions:
 * the hot-loop cost); lowering and fp32 regions run in an out-of-line slow
 * function, so the fast path carries no stack frame for them. These two
 * are macros (AMP_DEFINE_*) for a measured reason: the exported function's
 * fast path must inline the decision and tail-call with the caller's own
 * argument registers, which a door calling a shared C body cannot do
 * without a frame; bench/blas_bench measures what each call costs. (The
 * cuBLAS hooks, whose calls cost microseconds, are doors in front of plain
 * C bodies: shim/cublas/cublas.c.)
 *
 * The caller's return address is noted in thread-local storage for the
 * decision (amp_tls_caller), and the value it replaced is put back when the
 * hook is done with it: a signal handler's BLAS call that lands while an
 * interrupted call is still deciding then leaves that call its own caller
 * (seen with Debian's reference CBLAS, whose cblas_sgemm calls the hooked
 * sgemm_: the interrupted call took the handler's library site for its own
 * and ran as a library's internal call).
 *
 * Integers: a CBLAS hook takes each integer as int64_t. On x86-64 and AArch64
 * an int argument arrives in the low half of a register or stack slot, so an
 * LP64 library's int is that low half, and forwarding the same 64-bit value
 * hands it back unchanged. Fortran hooks read through the pointer at the width
 * the real library was probed to use. Fortran hooks also forward the hidden
 * character-length arguments gfortran callers pass. */
#include <stddef.h>
#include <stdint.h>

#include "shim/blas/blas_audit.h"
#include "shim/blas/blas_execute.h"
#include "shim/blas/blas_plan.h"
#include "shim/resolve.h"

#include "shim/hook_stub.h"

#define AMP_ILP64_LP(hook) amp_hook_ilp64(hook)
#define AMP_ILP64_I64(hook) 1

static inline int64_t ival(int64_t v, int ilp64)
{
    return ilp64 ? v : (int64_t)(int32_t)v;
}

static inline int64_t iref(const void *p, int ilp64)
{
    return ilp64 ? *(const int64_t *)p : (int64_t) * (const int32_t *)p;
}

#define AMP_UNPAREN(...) __VA_ARGS__

/* The real function and the thread's state for a slow-path call. A call
 * that still has set-up to do (the thread's first, or the hook's) does it
 * with signals blocked: a signal handler's BLAS call then finds everything
 * made and allocates nothing inside the handler. */
static inline struct amp_thread *amp_first_call_setup(enum amp_hook_id hook, void **real)
{
    /* A thread with its state made, or an inert shim (which makes none): a
     * resolution still to do blocks signals itself while it holds its lock,
     * and allocates nothing a handler could interrupt afterwards. */
    struct amp_thread *t = amp_tls_thread;
    if (amp_likely(t) || amp_mode() == AMP_MODE_INERT) {
        *real = amp_real(hook);
        return amp_thread_enter();
    }
    struct amp_quiet quiet;
    amp_signals_block(&quiet);
    t = amp_thread_enter();
    *real = amp_real(hook);
    amp_signals_restore(&quiet);
    return t;
}

/* One hook returning void. The slow function has exactly the hook's
 * parameters, so both exits of the hook are tail calls and the fast path
 * needs no stack frame; everything that is not a plain pass-through
 * (first-call resolution and set-up, lowering, fp32 regions) goes there.
 * PARAMS and ARGS are parenthesised lists; ACC is the accumulate test
 * (beta != 0); PLAN plans the call, with `il` the library's integer width
 * and the parameters as locals the plan may redirect to rounded copies. */
#define AMP_DEFINE_VOID_HOOK(sym, ints, PARAMS, ARGS, ACC, PLAN)                                   \
    typedef void (*sym##_fn)(AMP_UNPAREN PARAMS);                                                  \
    __attribute__((noinline)) static void sym##_slow(AMP_UNPAREN PARAMS)                           \
    {                                                                                              \
        sym##_fn real;                                                                             \
        struct amp_thread *t = amp_first_call_setup(AMP_HOOK_##sym, (void **)&real);               \
        struct amp_blas_call c;                                                                    \
        if (!t) {                                                                                  \
            real ARGS;                                                                             \
            return;                                                                                \
        }                                                                                          \
        int lower = amp_blas_begin(&c, t, AMP_HOOK_##sym, ACC);                                    \
        c.real = (void *)real;                                                                     \
        if (lower || amp_unlikely(c.t0)) {                                                         \
            int il = AMP_ILP64_##ints(AMP_HOOK_##sym);                                             \
            (void)il;                                                                              \
            int valid = PLAN;                                                                      \
            if (lower)                                                                             \
                amp_blas_lower(&c, valid);                                                         \
        }                                                                                          \
        if (!c.done)                                                                               \
            real ARGS;                                                                             \
        if (amp_unlikely(c.audit)) {                                                               \
            amp_blas_audit_swap(&c);                                                               \
            real ARGS;                                                                             \
            amp_blas_audit_finish(&c);                                                             \
        }                                                                                          \
        amp_blas_end(&c);                                                                          \
    }                                                                                              \
    void AMP_C_ENTRY(sym)(AMP_UNPAREN PARAMS);                                                     \
    void AMP_C_ENTRY(sym)(AMP_UNPAREN PARAMS)                                                      \
    {                                                                                              \
        sym##_fn real =                                                                            \
            (sym##_fn)atomic_load_explicit(&amp_slot_##sym.real, memory_order_acquire);            \
        struct amp_thread *t = amp_tls_thread;                                                     \
        int mode = amp_mode();                                                                     \
        void *outer = amp_tls_caller;                                                              \
        AMP_NOTE_CALLER();                                                                         \
        if (amp_likely(real && (mode == AMP_MODE_INERT ||                                          \
                                (t && amp_blas_passes_through(t, AMP_HOOK_##sym, ACC))))) {        \
            amp_tls_caller = outer;                                                                \
            real ARGS;                                                                             \
            return;                                                                                \
        }                                                                                          \
        sym##_slow ARGS;                                                                           \
        amp_tls_caller = outer;                                                                    \
    }                                                                                              \
    AMP_STUB(sym)

/* One hook returning float (dot, nrm2, asum); AMPSHIM_OUTPUT=round rounds
 * the result of a lowered call. */
#define AMP_DEFINE_FLOAT_HOOK(sym, ints, PARAMS, ARGS, PLAN)                                       \
    typedef float (*sym##_fn)(AMP_UNPAREN PARAMS);                                                 \
    __attribute__((noinline)) static float sym##_slow(AMP_UNPAREN PARAMS)                          \
    {                                                                                              \
        sym##_fn real;                                                                             \
        struct amp_thread *t = amp_first_call_setup(AMP_HOOK_##sym, (void **)&real);               \
        struct amp_blas_call c;                                                                    \
        if (!t)                                                                                    \
            return real ARGS;                                                                      \
        int lower = amp_blas_begin(&c, t, AMP_HOOK_##sym, 0);                                      \
        if (lower || amp_unlikely(c.t0)) {                                                         \
            int il = AMP_ILP64_##ints(AMP_HOOK_##sym);                                             \
            (void)il;                                                                              \
            int valid = PLAN;                                                                      \
            if (lower)                                                                             \
                amp_blas_lower(&c, valid);                                                         \
        }                                                                                          \
        float r = amp_blas_result(&c, real ARGS);                                                  \
        if (amp_unlikely(c.audit)) {                                                               \
            amp_blas_audit_swap(&c);                                                               \
            r = amp_blas_audit_scalar(&c, r, real ARGS);                                           \
        }                                                                                          \
        amp_blas_end(&c);                                                                          \
        return r;                                                                                  \
    }                                                                                              \
    float AMP_C_ENTRY(sym)(AMP_UNPAREN PARAMS);                                                    \
    float AMP_C_ENTRY(sym)(AMP_UNPAREN PARAMS)                                                     \
    {                                                                                              \
        sym##_fn real =                                                                            \
            (sym##_fn)atomic_load_explicit(&amp_slot_##sym.real, memory_order_acquire);            \
        struct amp_thread *t = amp_tls_thread;                                                     \
        int mode = amp_mode();                                                                     \
        void *outer = amp_tls_caller;                                                              \
        AMP_NOTE_CALLER();                                                                         \
        if (amp_likely(real && (mode == AMP_MODE_INERT ||                                          \
                                (t && amp_blas_passes_through(t, AMP_HOOK_##sym, 0))))) {          \
            amp_tls_caller = outer;                                                                \
            return real ARGS;                                                                      \
        }                                                                                          \
        float r = sym##_slow ARGS;                                                                 \
        amp_tls_caller = outer;                                                                    \
        return r;                                                                                  \
    }                                                                                              \
    AMP_STUB(sym)

#define AMP_DEFINE_CBLAS_GEMM(sym, ints)                                                           \
    AMP_DEFINE_VOID_HOOK(                                                                          \
        sym, ints,                                                                                 \
        (int layout, int ta, int tb, int64_t m, int64_t n, int64_t k, float alpha, const float *a, \
         int64_t lda, const float *b, int64_t ldb, float beta, float *cm, int64_t ldc),            \
        (layout, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, cm, ldc), beta != 0.0f,             \
        amp_plan_gemm(&c, amp_cblas_layout(layout), amp_cblas_trans(ta), amp_cblas_trans(tb),      \
                      ival(m, il), ival(n, il), ival(k, il), alpha, &a, ival(lda, il), &b,         \
                      ival(ldb, il), beta, cm, ival(ldc, il)))

#define AMP_DEFINE_F77_GEMM(sym, ints)                                                             \
    AMP_DEFINE_VOID_HOOK(                                                                          \
        sym, ints,                                                                                 \
        (const char *ta, const char *tb, const void *m, const void *n, const void *k,              \
         const float *alpha, const float *a, const void *lda, const float *b, const void *ldb,     \
         const float *beta, float *cm, const void *ldc, size_t lta, size_t ltb),                   \
        (ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, cm, ldc, lta, ltb), *beta != 0.0f,          \
        amp_plan_gemm(&c, 'C', amp_f77_char(ta), amp_f77_char(tb), iref(m, il), iref(n, il),       \
                      iref(k, il), *alpha, &a, iref(lda, il), &b, iref(ldb, il), *beta, cm,        \
                      iref(ldc, il)))

#define AMP_DEFINE_CBLAS_GEMV(sym, ints)                                                           \
    AMP_DEFINE_VOID_HOOK(                                                                          \
        sym, ints,                                                                                 \
        (int layout, int trans, int64_t m, int64_t n, float alpha, const float *a, int64_t lda,    \
         const float *x, int64_t incx, float beta, float *y, int64_t incy),                        \
        (layout, trans, m, n, alpha, a, lda, x, incx, beta, y, incy), beta != 0.0f,                \
        amp_plan_gemv(&c, amp_cblas_layout(layout), amp_cblas_trans(trans), ival(m, il),           \
                      ival(n, il), alpha, &a, ival(lda, il), &x, ival(incx, il), beta, y,          \
                      ival(incy, il)))

#define AMP_DEFINE_F77_GEMV(sym, ints)                                                             \
    AMP_DEFINE_VOID_HOOK(                                                                          \
        sym, ints,                                                                                 \
        (const char *trans, const void *m, const void *n, const float *alpha, const float *a,      \
         const void *lda, const float *x, const void *incx, const float *beta, float *y,           \
         const void *incy, size_t ltrans),                                                         \
        (trans, m, n, alpha, a, lda, x, incx, beta, y, incy, ltrans), *beta != 0.0f,               \
        amp_plan_gemv(&c, 'C', amp_f77_char(trans), iref(m, il), iref(n, il), *alpha, &a,          \
                      iref(lda, il), &x, iref(incx, il), *beta, y, iref(incy, il)))

#define AMP_DEFINE_CBLAS_GER(sym, ints)                                                            \
    AMP_DEFINE_VOID_HOOK(sym, ints,                                                                \
                         (int layout, int64_t m, int64_t n, float alpha, const float *x,           \
                          int64_t incx, const float *y, int64_t incy, float *a, int64_t lda),      \
                         (layout, m, n, alpha, x, incx, y, incy, a, lda), 0,                       \
                         amp_plan_ger(&c, amp_cblas_layout(layout), ival(m, il), ival(n, il),      \
                                      alpha, &x, ival(incx, il), &y, ival(incy, il), a,            \
                                      ival(lda, il)))

#define AMP_DEFINE_F77_GER(sym, ints)                                                              \
    AMP_DEFINE_VOID_HOOK(sym, ints,                                                                \
                         (const void *m, const void *n, const float *alpha, const float *x,        \
                          const void *incx, const float *y, const void *incy, float *a,            \
                          const void *lda),                                                        \
                         (m, n, alpha, x, incx, y, incy, a, lda), 0,                               \
                         amp_plan_ger(&c, 'C', iref(m, il), iref(n, il), *alpha, &x,               \
                                      iref(incx, il), &y, iref(incy, il), a, iref(lda, il)))

#define AMP_DEFINE_CBLAS_DOT(sym, ints)                                                            \
    AMP_DEFINE_FLOAT_HOOK(                                                                         \
        sym, ints, (int64_t n, const float *x, int64_t incx, const float *y, int64_t incy),        \
        (n, x, incx, y, incy),                                                                     \
        amp_plan_vectors(&c, ival(n, il), &x, ival(incx, il), &y, ival(incy, il)))

#define AMP_DEFINE_F77_DOT(sym, ints)                                                              \
    AMP_DEFINE_FLOAT_HOOK(                                                                         \
        sym, ints,                                                                                 \
        (const void *n, const float *x, const void *incx, const float *y, const void *incy),       \
        (n, x, incx, y, incy),                                                                     \
        amp_plan_vectors(&c, iref(n, il), &x, iref(incx, il), &y, iref(incy, il)))

/* nrm2 and asum share one shape: float f(n, x, incx). */
#define AMP_DEFINE_CBLAS_NORM(sym, ints)                                                           \
    AMP_DEFINE_FLOAT_HOOK(sym, ints, (int64_t n, const float *x, int64_t incx), (n, x, incx),      \
                          amp_plan_vectors(&c, ival(n, il), &x, ival(incx, il), NULL, 0))

#define AMP_DEFINE_F77_NORM(sym, ints)                                                             \
    AMP_DEFINE_FLOAT_HOOK(sym, ints, (const void *n, const float *x, const void *incx),            \
                          (n, x, incx),                                                            \
                          amp_plan_vectors(&c, iref(n, il), &x, iref(incx, il), NULL, 0))

#define AMP_DEFINE_CBLAS_NRM2 AMP_DEFINE_CBLAS_NORM
#define AMP_DEFINE_CBLAS_ASUM AMP_DEFINE_CBLAS_NORM
#define AMP_DEFINE_F77_NRM2 AMP_DEFINE_F77_NORM
#define AMP_DEFINE_F77_ASUM AMP_DEFINE_F77_NORM

#define AMP_DEFINE_CBLAS_SYMM(sym, ints)                                                           \
    AMP_DEFINE_VOID_HOOK(                                                                          \
        sym, ints,                                                                                 \
        (int layout, int side, int uplo, int64_t m, int64_t n, float alpha, const float *a,        \
         int64_t lda, const float *b, int64_t ldb, float beta, float *cm, int64_t ldc),            \
        (layout, side, uplo, m, n, alpha, a, lda, b, ldb, beta, cm, ldc), beta != 0.0f,            \
        amp_plan_symm(&c, amp_cblas_layout(layout), amp_cblas_side(side), amp_cblas_uplo(uplo),    \
                      ival(m, il), ival(n, il), alpha, &a, ival(lda, il), &b, ival(ldb, il), beta, \
                      cm, ival(ldc, il)))

#define AMP_DEFINE_F77_SYMM(sym, ints)                                                             \
    AMP_DEFINE_VOID_HOOK(                                                                          \
        sym, ints,                                                                                 \
        (const char *side, const char *uplo, const void *m, const void *n, const float *alpha,     \
         const float *a, const void *lda, const float *b, const void *ldb, const float *beta,      \
         float *cm, const void *ldc, size_t lside, size_t luplo),                                  \
        (side, uplo, m, n, alpha, a, lda, b, ldb, beta, cm, ldc, lside, luplo), *beta != 0.0f,     \
        amp_plan_symm(&c, 'C', amp_f77_char(side), amp_f77_char(uplo), iref(m, il), iref(n, il),   \
                      *alpha, &a, iref(lda, il), &b, iref(ldb, il), *beta, cm, iref(ldc, il)))

#define AMP_DEFINE_CBLAS_SYRK(sym, ints)                                                           \
    AMP_DEFINE_VOID_HOOK(sym, ints,                                                                \
                         (int layout, int uplo, int trans, int64_t n, int64_t k, float alpha,      \
                          const float *a, int64_t lda, float beta, float *cm, int64_t ldc),        \
                         (layout, uplo, trans, n, k, alpha, a, lda, beta, cm, ldc), beta != 0.0f,  \
                         amp_plan_syrk(&c, amp_cblas_layout(layout), amp_cblas_uplo(uplo),         \
                                       amp_cblas_trans(trans), ival(n, il), ival(k, il), alpha,    \
                                       &a, ival(lda, il), NULL, 0, beta, cm, ival(ldc, il)))

#define AMP_DEFINE_F77_SYRK(sym, ints)                                                             \
    AMP_DEFINE_VOID_HOOK(                                                                          \
        sym, ints,                                                                                 \
        (const char *uplo, const char *trans, const void *n, const void *k, const float *alpha,    \
         const float *a, const void *lda, const float *beta, float *cm, const void *ldc,           \
         size_t luplo, size_t ltrans),                                                             \
        (uplo, trans, n, k, alpha, a, lda, beta, cm, ldc, luplo, ltrans), *beta != 0.0f,           \
        amp_plan_syrk(&c, 'C', amp_f77_char(uplo), amp_f77_char(trans), iref(n, il), iref(k, il),  \
                      *alpha, &a, iref(lda, il), NULL, 0, *beta, cm, iref(ldc, il)))

#define AMP_DEFINE_CBLAS_SYR2K(sym, ints)                                                          \
    AMP_DEFINE_VOID_HOOK(                                                                          \
        sym, ints,                                                                                 \
        (int layout, int uplo, int trans, int64_t n, int64_t k, float alpha, const float *a,       \
         int64_t lda, const float *b, int64_t ldb, float beta, float *cm, int64_t ldc),            \
        (layout, uplo, trans, n, k, alpha, a, lda, b, ldb, beta, cm, ldc), beta != 0.0f,           \
        amp_plan_syrk(&c, amp_cblas_layout(layout), amp_cblas_uplo(uplo), amp_cblas_trans(trans),  \
                      ival(n, il), ival(k, il), alpha, &a, ival(lda, il), &b, ival(ldb, il), beta, \
                      cm, ival(ldc, il)))

#define AMP_DEFINE_F77_SYR2K(sym, ints)                                                            \
    AMP_DEFINE_VOID_HOOK(                                                                          \
        sym, ints,                                                                                 \
        (const char *uplo, const char *trans, const void *n, const void *k, const float *alpha,    \
         const float *a, const void *lda, const float *b, const void *ldb, const float *beta,      \
         float *cm, const void *ldc, size_t luplo, size_t ltrans),                                 \
        (uplo, trans, n, k, alpha, a, lda, b, ldb, beta, cm, ldc, luplo, ltrans), *beta != 0.0f,   \
        amp_plan_syrk(&c, 'C', amp_f77_char(uplo), amp_f77_char(trans), iref(n, il), iref(k, il),  \
                      *alpha, &a, iref(lda, il), &b, iref(ldb, il), *beta, cm, iref(ldc, il)))

/* trmm and trsm share one shape; B is input and output. */
#define AMP_DEFINE_CBLAS_TRXM(sym, ints)                                                           \
    AMP_DEFINE_VOID_HOOK(                                                                          \
        sym, ints,                                                                                 \
        (int layout, int side, int uplo, int transa, int diag, int64_t m, int64_t n, float alpha,  \
         const float *a, int64_t lda, float *b, int64_t ldb),                                      \
        (layout, side, uplo, transa, diag, m, n, alpha, a, lda, b, ldb), 0,                        \
        amp_plan_trmm(&c, amp_cblas_layout(layout), amp_cblas_side(side), amp_cblas_uplo(uplo),    \
                      amp_cblas_trans(transa), amp_cblas_diag(diag), ival(m, il), ival(n, il),     \
                      alpha, &a, ival(lda, il), b, ival(ldb, il)))

#define AMP_DEFINE_F77_TRXM(sym, ints)                                                             \
    AMP_DEFINE_VOID_HOOK(                                                                          \
        sym, ints,                                                                                 \
        (const char *side, const char *uplo, const char *transa, const char *diag, const void *m,  \
         const void *n, const float *alpha, const float *a, const void *lda, float *b,             \
         const void *ldb, size_t lside, size_t luplo, size_t ltransa, size_t ldiag),               \
        (side, uplo, transa, diag, m, n, alpha, a, lda, b, ldb, lside, luplo, ltransa, ldiag), 0,  \
        amp_plan_trmm(&c, 'C', amp_f77_char(side), amp_f77_char(uplo), amp_f77_char(transa),       \
                      amp_f77_char(diag), iref(m, il), iref(n, il), *alpha, &a, iref(lda, il), b,  \
                      iref(ldb, il)))

#define AMP_DEFINE_CBLAS_TRMM AMP_DEFINE_CBLAS_TRXM
#define AMP_DEFINE_CBLAS_TRSM AMP_DEFINE_CBLAS_TRXM
#define AMP_DEFINE_F77_TRMM AMP_DEFINE_F77_TRXM
#define AMP_DEFINE_F77_TRSM AMP_DEFINE_F77_TRXM

#define AMP_X_HOOK(sym, routine, kind, form, ints, op, op_beta)                                    \
    AMP_DEFINE_##form##_##kind(sym, ints)
AMPSHIM_HOOK_LIST_BLAS(AMP_X_HOOK)
#undef AMP_X_HOOK
