/* The preload tests built twice, LP64 against libopenblas and ILP64
 * (-DCHECK_ILP64) against Debian's libopenblas64, which exports the same
 * plain names: the integer type and the library the expected answers come
 * from (reached through a dlopen handle, which the shim does not intercept),
 * and the gemm prototypes as a C program would declare them. */
#ifndef AMPSHIM_TEST_BLAS_WIDTH_H
#define AMPSHIM_TEST_BLAS_WIDTH_H

#include <stdint.h>

#ifdef CHECK_ILP64
typedef int64_t blasint;
#define REAL_LIBRARY "libopenblas64.so.0"
#else
typedef int32_t blasint;
#define REAL_LIBRARY "libopenblas.so.0"
#endif

void cblas_sgemm(int, int, int, blasint, blasint, blasint, float, const float *, blasint,
                 const float *, blasint, float, float *, blasint);
void sgemm_(const char *, const char *, const blasint *, const blasint *, const blasint *,
            const float *, const float *, const blasint *, const float *, const blasint *,
            const float *, float *, const blasint *);

#endif
