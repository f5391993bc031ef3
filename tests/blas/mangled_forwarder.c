/* Test-only: Debian's real OpenBLAS under every name of
 * policy/data/manglings.txt (scipy_cblas_sgemm, sgemm_64, ...), as the
 * libraries real distributions ship export them: each name forwards to the
 * real routine of Debian's LP64 OpenBLAS (manglings with library-width
 * integers) or ILP64 OpenBLAS (the 64-bit manglings), found with dlopen.
 * Defines sgemm and isamax (the resolver's width probe) per mangling; never
 * installed. */
#include <dlfcn.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "ampshim_generated.h"

#define EXPORT __attribute__((visibility("default")))

/* The real routine of one OpenBLAS build; exits if it cannot be had. */
static void *real(int ilp64, const char *name)
{
    void *lib = dlopen(ilp64 ? "libopenblas64.so.0" : "libopenblas.so.0", RTLD_NOW | RTLD_LOCAL);
    void *p = lib ? dlsym(lib, name) : NULL;
    if (!p) {
        fprintf(stderr, "mangled_forwarder: no %s in the %s OpenBLAS\n", name, ilp64 ? "ILP64" : "LP64");
        exit(3);
    }
    return p;
}

#define INT_LP int
#define INT_I64 int64_t
#define IS64_LP 0
#define IS64_I64 1
#define PASTE3(a, b, c) a##b##c
#define NAME(prefix, routine, suffix) PASTE3(prefix, routine, suffix)

#define FORWARD_CBLAS(ints, prefix, suffix)                                                        \
    EXPORT void NAME(prefix, sgemm, suffix)(int layout, int ta, int tb, INT_##ints m,             \
                                            INT_##ints n, INT_##ints k, float alpha,              \
                                            const float *a, INT_##ints lda, const float *b,       \
                                            INT_##ints ldb, float beta, float *c, INT_##ints ldc) \
    {                                                                                              \
        void (*f)(int, int, int, INT_##ints, INT_##ints, INT_##ints, float, const float *,         \
                  INT_##ints, const float *, INT_##ints, float, float *, INT_##ints) =             \
            real(IS64_##ints, "cblas_sgemm");                                                      \
        f(layout, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);                           \
    }                                                                                              \
    EXPORT size_t NAME(prefix, isamax, suffix)(INT_##ints n, const float *x, INT_##ints incx)      \
    {                                                                                              \
        size_t (*f)(INT_##ints, const float *, INT_##ints) = real(IS64_##ints, "cblas_isamax");    \
        return f(n, x, incx);                                                                      \
    }

#define FORWARD_F77(ints, prefix, suffix)                                                          \
    EXPORT void NAME(prefix, sgemm, suffix)(const char *ta, const char *tb, const void *m,        \
                                            const void *n, const void *k, const float *alpha,     \
                                            const float *a, const void *lda, const float *b,      \
                                            const void *ldb, const float *beta, float *c,         \
                                            const void *ldc)                                       \
    {                                                                                              \
        void (*f)(const char *, const char *, const void *, const void *, const void *,            \
                  const float *, const float *, const void *, const float *, const void *,         \
                  const float *, float *, const void *) = real(IS64_##ints, "sgemm_");             \
        f(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);                                   \
    }                                                                                              \
    EXPORT INT_##ints NAME(prefix, isamax, suffix)(const void *n, const float *x, const void *incx) \
    {                                                                                              \
        INT_##ints (*f)(const void *, const float *, const void *) = real(IS64_##ints, "isamax_"); \
        return f(n, x, incx);                                                                      \
    }

/* Every mangling, the plain names too (they forward to the same routine
 * the plain OpenBLAS names are). */
#define FORWARD_ONE(mangling, form, ints, lapack, prefix, suffix) FORWARD_##form(ints, prefix, suffix)
AMPSHIM_MANGLING_LIST(FORWARD_ONE)
