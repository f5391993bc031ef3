/* The exported BLAS entry points: CBLAS and Fortran, plain and 64-bit
 * suffixed, all expanded from AMPSHIM_HOOK_LIST_BLAS. Each hook forwards at
 * once when the shim is inert; otherwise it decides before parsing anything,
 * plans and rounds only when lowering, and calls the real routine with the
 * caller's own arguments (rounded copies swapped in for multiplicands).
 *
 * Integers: a CBLAS hook takes each integer as int64_t. On x86-64 and AArch64
 * an int argument arrives in the low half of a register or stack slot, so an
 * LP64 library's int is that low half, and forwarding the same 64-bit value
 * hands it back unchanged. Fortran hooks read through the pointer at the width
 * the real library was probed to use. Fortran hooks also forward the hidden
 * character-length arguments gfortran callers pass. */
#include <stddef.h>
#include <stdint.h>

#include "shim/blas_plan.h"
#include "shim/resolve.h"

#define AMP_EXPORT __attribute__((visibility("default")))

#define AMP_ILP64_LP(hook) (amp_slots[hook].ilp64)
#define AMP_ILP64_I64(hook) 1

static inline int64_t ival(int64_t v, int ilp64)
{
    return ilp64 ? v : (int64_t)(int32_t)v;
}

static inline int64_t iref(const void *p, int ilp64)
{
    return ilp64 ? *(const int64_t *)p : (int64_t) * (const int32_t *)p;
}

/* ---- gemm ---- */

#define AMP_DEFINE_CBLAS_GEMM(sym, ints)                                                           \
    AMP_EXPORT void sym(int layout, int ta, int tb, int64_t m, int64_t n, int64_t k, float alpha,  \
                        const float *a, int64_t lda, const float *b, int64_t ldb, float beta,      \
                        float *cm, int64_t ldc)                                                    \
    {                                                                                              \
        typedef void (*fn)(int, int, int, int64_t, int64_t, int64_t, float, const float *,         \
                           int64_t, const float *, int64_t, float, float *, int64_t);              \
        fn real = (fn)amp_real(AMP_HOOK_##sym);                                                    \
        struct amp_thread *t = amp_thread_enter();                                                 \
        struct amp_blas_call c;                                                                    \
        if (!t) {                                                                                  \
            real(layout, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, cm, ldc);                   \
            return;                                                                                \
        }                                                                                          \
        if (amp_blas_begin(&c, t, AMP_HOOK_##sym, beta != 0.0f)) {                                 \
            int il = AMP_ILP64_##ints(AMP_HOOK_##sym);                                             \
            amp_blas_lower(&c, amp_plan_gemm(&c, amp_cblas_layout(layout), amp_cblas_trans(ta),    \
                                             amp_cblas_trans(tb), ival(m, il), ival(n, il),        \
                                             ival(k, il), alpha, &a, ival(lda, il), &b,            \
                                             ival(ldb, il), beta, cm, ival(ldc, il)));             \
        }                                                                                          \
        real(layout, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, cm, ldc);                       \
        amp_blas_end(&c);                                                                          \
    }

#define AMP_DEFINE_F77_GEMM(sym, ints)                                                             \
    AMP_EXPORT void sym(const char *ta, const char *tb, const void *m, const void *n,              \
                        const void *k, const float *alpha, const float *a, const void *lda,        \
                        const float *b, const void *ldb, const float *beta, float *cm,             \
                        const void *ldc, size_t lta, size_t ltb)                                   \
    {                                                                                              \
        typedef void (*fn)(const char *, const char *, const void *, const void *, const void *,   \
                           const float *, const float *, const void *, const float *,              \
                           const void *, const float *, float *, const void *, size_t, size_t);    \
        fn real = (fn)amp_real(AMP_HOOK_##sym);                                                    \
        struct amp_thread *t = amp_thread_enter();                                                 \
        struct amp_blas_call c;                                                                    \
        if (!t) {                                                                                  \
            real(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, cm, ldc, lta, ltb);                 \
            return;                                                                                \
        }                                                                                          \
        if (amp_blas_begin(&c, t, AMP_HOOK_##sym, *beta != 0.0f)) {                                \
            int il = AMP_ILP64_##ints(AMP_HOOK_##sym);                                             \
            amp_blas_lower(&c, amp_plan_gemm(&c, 'C', amp_f77_char(ta), amp_f77_char(tb),          \
                                             iref(m, il), iref(n, il), iref(k, il), *alpha, &a,    \
                                             iref(lda, il), &b, iref(ldb, il), *beta, cm,          \
                                             iref(ldc, il)));                                      \
        }                                                                                          \
        real(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, cm, ldc, lta, ltb);                     \
        amp_blas_end(&c);                                                                          \
    }

/* ---- gemv ---- */

#define AMP_DEFINE_CBLAS_GEMV(sym, ints)                                                           \
    AMP_EXPORT void sym(int layout, int trans, int64_t m, int64_t n, float alpha, const float *a,  \
                        int64_t lda, const float *x, int64_t incx, float beta, float *y,           \
                        int64_t incy)                                                              \
    {                                                                                              \
        typedef void (*fn)(int, int, int64_t, int64_t, float, const float *, int64_t,              \
                           const float *, int64_t, float, float *, int64_t);                       \
        fn real = (fn)amp_real(AMP_HOOK_##sym);                                                    \
        struct amp_thread *t = amp_thread_enter();                                                 \
        struct amp_blas_call c;                                                                    \
        if (!t) {                                                                                  \
            real(layout, trans, m, n, alpha, a, lda, x, incx, beta, y, incy);                      \
            return;                                                                                \
        }                                                                                          \
        if (amp_blas_begin(&c, t, AMP_HOOK_##sym, beta != 0.0f)) {                                 \
            int il = AMP_ILP64_##ints(AMP_HOOK_##sym);                                             \
            amp_blas_lower(&c, amp_plan_gemv(&c, amp_cblas_layout(layout), amp_cblas_trans(trans), \
                                             ival(m, il), ival(n, il), alpha, &a, ival(lda, il),   \
                                             &x, ival(incx, il), beta, y, ival(incy, il)));        \
        }                                                                                          \
        real(layout, trans, m, n, alpha, a, lda, x, incx, beta, y, incy);                          \
        amp_blas_end(&c);                                                                          \
    }

#define AMP_DEFINE_F77_GEMV(sym, ints)                                                             \
    AMP_EXPORT void sym(const char *trans, const void *m, const void *n, const float *alpha,       \
                        const float *a, const void *lda, const float *x, const void *incx,         \
                        const float *beta, float *y, const void *incy, size_t ltrans)              \
    {                                                                                              \
        typedef void (*fn)(const char *, const void *, const void *, const float *, const float *, \
                           const void *, const float *, const void *, const float *, float *,      \
                           const void *, size_t);                                                  \
        fn real = (fn)amp_real(AMP_HOOK_##sym);                                                    \
        struct amp_thread *t = amp_thread_enter();                                                 \
        struct amp_blas_call c;                                                                    \
        if (!t) {                                                                                  \
            real(trans, m, n, alpha, a, lda, x, incx, beta, y, incy, ltrans);                      \
            return;                                                                                \
        }                                                                                          \
        if (amp_blas_begin(&c, t, AMP_HOOK_##sym, *beta != 0.0f)) {                                \
            int il = AMP_ILP64_##ints(AMP_HOOK_##sym);                                             \
            amp_blas_lower(&c, amp_plan_gemv(&c, 'C', amp_f77_char(trans), iref(m, il),            \
                                             iref(n, il), *alpha, &a, iref(lda, il), &x,           \
                                             iref(incx, il), *beta, y, iref(incy, il)));           \
        }                                                                                          \
        real(trans, m, n, alpha, a, lda, x, incx, beta, y, incy, ltrans);                          \
        amp_blas_end(&c);                                                                          \
    }

/* ---- ger ---- */

#define AMP_DEFINE_CBLAS_GER(sym, ints)                                                            \
    AMP_EXPORT void sym(int layout, int64_t m, int64_t n, float alpha, const float *x,             \
                        int64_t incx, const float *y, int64_t incy, float *a, int64_t lda)         \
    {                                                                                              \
        typedef void (*fn)(int, int64_t, int64_t, float, const float *, int64_t, const float *,    \
                           int64_t, float *, int64_t);                                             \
        fn real = (fn)amp_real(AMP_HOOK_##sym);                                                    \
        struct amp_thread *t = amp_thread_enter();                                                 \
        struct amp_blas_call c;                                                                    \
        if (!t) {                                                                                  \
            real(layout, m, n, alpha, x, incx, y, incy, a, lda);                                   \
            return;                                                                                \
        }                                                                                          \
        if (amp_blas_begin(&c, t, AMP_HOOK_##sym, 0)) {                                            \
            int il = AMP_ILP64_##ints(AMP_HOOK_##sym);                                             \
            amp_blas_lower(&c, amp_plan_ger(&c, amp_cblas_layout(layout), ival(m, il),             \
                                            ival(n, il), alpha, &x, ival(incx, il), &y,            \
                                            ival(incy, il), a, ival(lda, il)));                    \
        }                                                                                          \
        real(layout, m, n, alpha, x, incx, y, incy, a, lda);                                       \
        amp_blas_end(&c);                                                                          \
    }

#define AMP_DEFINE_F77_GER(sym, ints)                                                              \
    AMP_EXPORT void sym(const void *m, const void *n, const float *alpha, const float *x,          \
                        const void *incx, const float *y, const void *incy, float *a,              \
                        const void *lda)                                                           \
    {                                                                                              \
        typedef void (*fn)(const void *, const void *, const float *, const float *,               \
                           const void *, const float *, const void *, float *, const void *);      \
        fn real = (fn)amp_real(AMP_HOOK_##sym);                                                    \
        struct amp_thread *t = amp_thread_enter();                                                 \
        struct amp_blas_call c;                                                                    \
        if (!t) {                                                                                  \
            real(m, n, alpha, x, incx, y, incy, a, lda);                                           \
            return;                                                                                \
        }                                                                                          \
        if (amp_blas_begin(&c, t, AMP_HOOK_##sym, 0)) {                                            \
            int il = AMP_ILP64_##ints(AMP_HOOK_##sym);                                             \
            amp_blas_lower(&c, amp_plan_ger(&c, 'C', iref(m, il), iref(n, il), *alpha, &x,         \
                                            iref(incx, il), &y, iref(incy, il), a,                 \
                                            iref(lda, il)));                                       \
        }                                                                                          \
        real(m, n, alpha, x, incx, y, incy, a, lda);                                               \
        amp_blas_end(&c);                                                                          \
    }

/* ---- dot, nrm2, asum: scalar results ---- */

#define AMP_DEFINE_CBLAS_DOT(sym, ints)                                                            \
    AMP_EXPORT float sym(int64_t n, const float *x, int64_t incx, const float *y, int64_t incy)    \
    {                                                                                              \
        typedef float (*fn)(int64_t, const float *, int64_t, const float *, int64_t);              \
        fn real = (fn)amp_real(AMP_HOOK_##sym);                                                    \
        struct amp_thread *t = amp_thread_enter();                                                 \
        struct amp_blas_call c;                                                                    \
        if (!t)                                                                                    \
            return real(n, x, incx, y, incy);                                                      \
        if (amp_blas_begin(&c, t, AMP_HOOK_##sym, 0)) {                                            \
            int il = AMP_ILP64_##ints(AMP_HOOK_##sym);                                             \
            amp_blas_lower(&c, amp_plan_vectors(&c, ival(n, il), &x, ival(incx, il), &y,           \
                                                ival(incy, il)));                                  \
        }                                                                                          \
        float r = amp_blas_result(&c, real(n, x, incx, y, incy));                                  \
        amp_blas_end(&c);                                                                          \
        return r;                                                                                  \
    }

#define AMP_DEFINE_F77_DOT(sym, ints)                                                              \
    AMP_EXPORT float sym(const void *n, const float *x, const void *incx, const float *y,          \
                         const void *incy)                                                         \
    {                                                                                              \
        typedef float (*fn)(const void *, const float *, const void *, const float *,              \
                            const void *);                                                         \
        fn real = (fn)amp_real(AMP_HOOK_##sym);                                                    \
        struct amp_thread *t = amp_thread_enter();                                                 \
        struct amp_blas_call c;                                                                    \
        if (!t)                                                                                    \
            return real(n, x, incx, y, incy);                                                      \
        if (amp_blas_begin(&c, t, AMP_HOOK_##sym, 0)) {                                            \
            int il = AMP_ILP64_##ints(AMP_HOOK_##sym);                                             \
            amp_blas_lower(&c, amp_plan_vectors(&c, iref(n, il), &x, iref(incx, il), &y,           \
                                                iref(incy, il)));                                  \
        }                                                                                          \
        float r = amp_blas_result(&c, real(n, x, incx, y, incy));                                  \
        amp_blas_end(&c);                                                                          \
        return r;                                                                                  \
    }

/* nrm2 and asum share one shape: float f(n, x, incx). */
#define AMP_DEFINE_CBLAS_NORM(sym, ints)                                                           \
    AMP_EXPORT float sym(int64_t n, const float *x, int64_t incx)                                  \
    {                                                                                              \
        typedef float (*fn)(int64_t, const float *, int64_t);                                      \
        fn real = (fn)amp_real(AMP_HOOK_##sym);                                                    \
        struct amp_thread *t = amp_thread_enter();                                                 \
        struct amp_blas_call c;                                                                    \
        if (!t)                                                                                    \
            return real(n, x, incx);                                                               \
        if (amp_blas_begin(&c, t, AMP_HOOK_##sym, 0)) {                                            \
            int il = AMP_ILP64_##ints(AMP_HOOK_##sym);                                             \
            amp_blas_lower(&c, amp_plan_vectors(&c, ival(n, il), &x, ival(incx, il), NULL, 0));    \
        }                                                                                          \
        float r = amp_blas_result(&c, real(n, x, incx));                                           \
        amp_blas_end(&c);                                                                          \
        return r;                                                                                  \
    }

#define AMP_DEFINE_F77_NORM(sym, ints)                                                             \
    AMP_EXPORT float sym(const void *n, const float *x, const void *incx)                          \
    {                                                                                              \
        typedef float (*fn)(const void *, const float *, const void *);                            \
        fn real = (fn)amp_real(AMP_HOOK_##sym);                                                    \
        struct amp_thread *t = amp_thread_enter();                                                 \
        struct amp_blas_call c;                                                                    \
        if (!t)                                                                                    \
            return real(n, x, incx);                                                               \
        if (amp_blas_begin(&c, t, AMP_HOOK_##sym, 0)) {                                            \
            int il = AMP_ILP64_##ints(AMP_HOOK_##sym);                                             \
            amp_blas_lower(&c, amp_plan_vectors(&c, iref(n, il), &x, iref(incx, il), NULL, 0));    \
        }                                                                                          \
        float r = amp_blas_result(&c, real(n, x, incx));                                           \
        amp_blas_end(&c);                                                                          \
        return r;                                                                                  \
    }

#define AMP_DEFINE_CBLAS_NRM2 AMP_DEFINE_CBLAS_NORM
#define AMP_DEFINE_CBLAS_ASUM AMP_DEFINE_CBLAS_NORM
#define AMP_DEFINE_F77_NRM2 AMP_DEFINE_F77_NORM
#define AMP_DEFINE_F77_ASUM AMP_DEFINE_F77_NORM

/* ---- symm ---- */

#define AMP_DEFINE_CBLAS_SYMM(sym, ints)                                                           \
    AMP_EXPORT void sym(int layout, int side, int uplo, int64_t m, int64_t n, float alpha,         \
                        const float *a, int64_t lda, const float *b, int64_t ldb, float beta,      \
                        float *cm, int64_t ldc)                                                    \
    {                                                                                              \
        typedef void (*fn)(int, int, int, int64_t, int64_t, float, const float *, int64_t,         \
                           const float *, int64_t, float, float *, int64_t);                       \
        fn real = (fn)amp_real(AMP_HOOK_##sym);                                                    \
        struct amp_thread *t = amp_thread_enter();                                                 \
        struct amp_blas_call c;                                                                    \
        if (!t) {                                                                                  \
            real(layout, side, uplo, m, n, alpha, a, lda, b, ldb, beta, cm, ldc);                  \
            return;                                                                                \
        }                                                                                          \
        if (amp_blas_begin(&c, t, AMP_HOOK_##sym, beta != 0.0f)) {                                 \
            int il = AMP_ILP64_##ints(AMP_HOOK_##sym);                                             \
            amp_blas_lower(&c, amp_plan_symm(&c, amp_cblas_layout(layout), amp_cblas_side(side),   \
                                             amp_cblas_uplo(uplo), ival(m, il), ival(n, il),       \
                                             alpha, &a, ival(lda, il), &b, ival(ldb, il), beta,    \
                                             cm, ival(ldc, il)));                                  \
        }                                                                                          \
        real(layout, side, uplo, m, n, alpha, a, lda, b, ldb, beta, cm, ldc);                      \
        amp_blas_end(&c);                                                                          \
    }

#define AMP_DEFINE_F77_SYMM(sym, ints)                                                             \
    AMP_EXPORT void sym(const char *side, const char *uplo, const void *m, const void *n,          \
                        const float *alpha, const float *a, const void *lda, const float *b,       \
                        const void *ldb, const float *beta, float *cm, const void *ldc,            \
                        size_t lside, size_t luplo)                                                \
    {                                                                                              \
        typedef void (*fn)(const char *, const char *, const void *, const void *, const float *,  \
                           const float *, const void *, const float *, const void *,               \
                           const float *, float *, const void *, size_t, size_t);                  \
        fn real = (fn)amp_real(AMP_HOOK_##sym);                                                    \
        struct amp_thread *t = amp_thread_enter();                                                 \
        struct amp_blas_call c;                                                                    \
        if (!t) {                                                                                  \
            real(side, uplo, m, n, alpha, a, lda, b, ldb, beta, cm, ldc, lside, luplo);            \
            return;                                                                                \
        }                                                                                          \
        if (amp_blas_begin(&c, t, AMP_HOOK_##sym, *beta != 0.0f)) {                                \
            int il = AMP_ILP64_##ints(AMP_HOOK_##sym);                                             \
            amp_blas_lower(&c, amp_plan_symm(&c, 'C', amp_f77_char(side), amp_f77_char(uplo),      \
                                             iref(m, il), iref(n, il), *alpha, &a,                 \
                                             iref(lda, il), &b, iref(ldb, il), *beta, cm,          \
                                             iref(ldc, il)));                                      \
        }                                                                                          \
        real(side, uplo, m, n, alpha, a, lda, b, ldb, beta, cm, ldc, lside, luplo);                \
        amp_blas_end(&c);                                                                          \
    }

/* ---- syrk ---- */

#define AMP_DEFINE_CBLAS_SYRK(sym, ints)                                                           \
    AMP_EXPORT void sym(int layout, int uplo, int trans, int64_t n, int64_t k, float alpha,        \
                        const float *a, int64_t lda, float beta, float *cm, int64_t ldc)           \
    {                                                                                              \
        typedef void (*fn)(int, int, int, int64_t, int64_t, float, const float *, int64_t, float,  \
                           float *, int64_t);                                                      \
        fn real = (fn)amp_real(AMP_HOOK_##sym);                                                    \
        struct amp_thread *t = amp_thread_enter();                                                 \
        struct amp_blas_call c;                                                                    \
        if (!t) {                                                                                  \
            real(layout, uplo, trans, n, k, alpha, a, lda, beta, cm, ldc);                         \
            return;                                                                                \
        }                                                                                          \
        if (amp_blas_begin(&c, t, AMP_HOOK_##sym, beta != 0.0f)) {                                 \
            int il = AMP_ILP64_##ints(AMP_HOOK_##sym);                                             \
            amp_blas_lower(&c, amp_plan_syrk(&c, amp_cblas_layout(layout), amp_cblas_uplo(uplo),   \
                                             amp_cblas_trans(trans), ival(n, il), ival(k, il),     \
                                             alpha, &a, ival(lda, il), NULL, 0, beta, cm,          \
                                             ival(ldc, il)));                                      \
        }                                                                                          \
        real(layout, uplo, trans, n, k, alpha, a, lda, beta, cm, ldc);                             \
        amp_blas_end(&c);                                                                          \
    }

#define AMP_DEFINE_F77_SYRK(sym, ints)                                                             \
    AMP_EXPORT void sym(const char *uplo, const char *trans, const void *n, const void *k,         \
                        const float *alpha, const float *a, const void *lda, const float *beta,    \
                        float *cm, const void *ldc, size_t luplo, size_t ltrans)                   \
    {                                                                                              \
        typedef void (*fn)(const char *, const char *, const void *, const void *, const float *,  \
                           const float *, const void *, const float *, float *, const void *,      \
                           size_t, size_t);                                                        \
        fn real = (fn)amp_real(AMP_HOOK_##sym);                                                    \
        struct amp_thread *t = amp_thread_enter();                                                 \
        struct amp_blas_call c;                                                                    \
        if (!t) {                                                                                  \
            real(uplo, trans, n, k, alpha, a, lda, beta, cm, ldc, luplo, ltrans);                  \
            return;                                                                                \
        }                                                                                          \
        if (amp_blas_begin(&c, t, AMP_HOOK_##sym, *beta != 0.0f)) {                                \
            int il = AMP_ILP64_##ints(AMP_HOOK_##sym);                                             \
            amp_blas_lower(&c, amp_plan_syrk(&c, 'C', amp_f77_char(uplo), amp_f77_char(trans),     \
                                             iref(n, il), iref(k, il), *alpha, &a,                 \
                                             iref(lda, il), NULL, 0, *beta, cm, iref(ldc, il)));   \
        }                                                                                          \
        real(uplo, trans, n, k, alpha, a, lda, beta, cm, ldc, luplo, ltrans);                      \
        amp_blas_end(&c);                                                                          \
    }

/* ---- syr2k ---- */

#define AMP_DEFINE_CBLAS_SYR2K(sym, ints)                                                          \
    AMP_EXPORT void sym(int layout, int uplo, int trans, int64_t n, int64_t k, float alpha,        \
                        const float *a, int64_t lda, const float *b, int64_t ldb, float beta,      \
                        float *cm, int64_t ldc)                                                    \
    {                                                                                              \
        typedef void (*fn)(int, int, int, int64_t, int64_t, float, const float *, int64_t,         \
                           const float *, int64_t, float, float *, int64_t);                       \
        fn real = (fn)amp_real(AMP_HOOK_##sym);                                                    \
        struct amp_thread *t = amp_thread_enter();                                                 \
        struct amp_blas_call c;                                                                    \
        if (!t) {                                                                                  \
            real(layout, uplo, trans, n, k, alpha, a, lda, b, ldb, beta, cm, ldc);                 \
            return;                                                                                \
        }                                                                                          \
        if (amp_blas_begin(&c, t, AMP_HOOK_##sym, beta != 0.0f)) {                                 \
            int il = AMP_ILP64_##ints(AMP_HOOK_##sym);                                             \
            amp_blas_lower(&c, amp_plan_syrk(&c, amp_cblas_layout(layout), amp_cblas_uplo(uplo),   \
                                             amp_cblas_trans(trans), ival(n, il), ival(k, il),     \
                                             alpha, &a, ival(lda, il), &b, ival(ldb, il), beta,    \
                                             cm, ival(ldc, il)));                                  \
        }                                                                                          \
        real(layout, uplo, trans, n, k, alpha, a, lda, b, ldb, beta, cm, ldc);                     \
        amp_blas_end(&c);                                                                          \
    }

#define AMP_DEFINE_F77_SYR2K(sym, ints)                                                            \
    AMP_EXPORT void sym(const char *uplo, const char *trans, const void *n, const void *k,         \
                        const float *alpha, const float *a, const void *lda, const float *b,       \
                        const void *ldb, const float *beta, float *cm, const void *ldc,            \
                        size_t luplo, size_t ltrans)                                               \
    {                                                                                              \
        typedef void (*fn)(const char *, const char *, const void *, const void *, const float *,  \
                           const float *, const void *, const float *, const void *,               \
                           const float *, float *, const void *, size_t, size_t);                  \
        fn real = (fn)amp_real(AMP_HOOK_##sym);                                                    \
        struct amp_thread *t = amp_thread_enter();                                                 \
        struct amp_blas_call c;                                                                    \
        if (!t) {                                                                                  \
            real(uplo, trans, n, k, alpha, a, lda, b, ldb, beta, cm, ldc, luplo, ltrans);          \
            return;                                                                                \
        }                                                                                          \
        if (amp_blas_begin(&c, t, AMP_HOOK_##sym, *beta != 0.0f)) {                                \
            int il = AMP_ILP64_##ints(AMP_HOOK_##sym);                                             \
            amp_blas_lower(&c, amp_plan_syrk(&c, 'C', amp_f77_char(uplo), amp_f77_char(trans),     \
                                             iref(n, il), iref(k, il), *alpha, &a,                 \
                                             iref(lda, il), &b, iref(ldb, il), *beta, cm,          \
                                             iref(ldc, il)));                                      \
        }                                                                                          \
        real(uplo, trans, n, k, alpha, a, lda, b, ldb, beta, cm, ldc, luplo, ltrans);              \
        amp_blas_end(&c);                                                                          \
    }

/* ---- trmm and trsm share one shape ---- */

#define AMP_DEFINE_CBLAS_TRXM(sym, ints)                                                           \
    AMP_EXPORT void sym(int layout, int side, int uplo, int transa, int diag, int64_t m,           \
                        int64_t n, float alpha, const float *a, int64_t lda, float *b,             \
                        int64_t ldb)                                                               \
    {                                                                                              \
        typedef void (*fn)(int, int, int, int, int, int64_t, int64_t, float, const float *,        \
                           int64_t, float *, int64_t);                                             \
        fn real = (fn)amp_real(AMP_HOOK_##sym);                                                    \
        struct amp_thread *t = amp_thread_enter();                                                 \
        struct amp_blas_call c;                                                                    \
        if (!t) {                                                                                  \
            real(layout, side, uplo, transa, diag, m, n, alpha, a, lda, b, ldb);                   \
            return;                                                                                \
        }                                                                                          \
        if (amp_blas_begin(&c, t, AMP_HOOK_##sym, 0)) {                                            \
            int il = AMP_ILP64_##ints(AMP_HOOK_##sym);                                             \
            amp_blas_lower(&c, amp_plan_trmm(&c, amp_cblas_layout(layout), amp_cblas_side(side),   \
                                             amp_cblas_uplo(uplo), amp_cblas_trans(transa),        \
                                             amp_cblas_diag(diag), ival(m, il), ival(n, il),       \
                                             alpha, &a, ival(lda, il), b, ival(ldb, il)));         \
        }                                                                                          \
        real(layout, side, uplo, transa, diag, m, n, alpha, a, lda, b, ldb);                       \
        amp_blas_end(&c);                                                                          \
    }

#define AMP_DEFINE_F77_TRXM(sym, ints)                                                             \
    AMP_EXPORT void sym(const char *side, const char *uplo, const char *transa, const char *diag,  \
                        const void *m, const void *n, const float *alpha, const float *a,          \
                        const void *lda, float *b, const void *ldb, size_t lside, size_t luplo,    \
                        size_t ltransa, size_t ldiag)                                              \
    {                                                                                              \
        typedef void (*fn)(const char *, const char *, const char *, const char *, const void *,   \
                           const void *, const float *, const float *, const void *, float *,      \
                           const void *, size_t, size_t, size_t, size_t);                          \
        fn real = (fn)amp_real(AMP_HOOK_##sym);                                                    \
        struct amp_thread *t = amp_thread_enter();                                                 \
        struct amp_blas_call c;                                                                    \
        if (!t) {                                                                                  \
            real(side, uplo, transa, diag, m, n, alpha, a, lda, b, ldb, lside, luplo, ltransa,     \
                 ldiag);                                                                           \
            return;                                                                                \
        }                                                                                          \
        if (amp_blas_begin(&c, t, AMP_HOOK_##sym, 0)) {                                            \
            int il = AMP_ILP64_##ints(AMP_HOOK_##sym);                                             \
            amp_blas_lower(&c, amp_plan_trmm(&c, 'C', amp_f77_char(side), amp_f77_char(uplo),      \
                                             amp_f77_char(transa), amp_f77_char(diag),             \
                                             iref(m, il), iref(n, il), *alpha, &a,                 \
                                             iref(lda, il), b, iref(ldb, il)));                    \
        }                                                                                          \
        real(side, uplo, transa, diag, m, n, alpha, a, lda, b, ldb, lside, luplo, ltransa, ldiag); \
        amp_blas_end(&c);                                                                          \
    }

#define AMP_DEFINE_CBLAS_TRMM AMP_DEFINE_CBLAS_TRXM
#define AMP_DEFINE_CBLAS_TRSM AMP_DEFINE_CBLAS_TRXM
#define AMP_DEFINE_F77_TRMM AMP_DEFINE_F77_TRXM
#define AMP_DEFINE_F77_TRSM AMP_DEFINE_F77_TRXM

#define AMP_X_HOOK(sym, routine, kind, form, ints, op, op_beta) AMP_DEFINE_##form##_##kind(sym, ints)
AMPSHIM_HOOK_LIST_BLAS(AMP_X_HOOK)
#undef AMP_X_HOOK
