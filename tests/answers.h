/* The control tests' operands and expected cblas_sgemm answers: the real
 * OpenBLAS routine (reached through a dlopen handle, which the shim cannot
 * intercept) on bf16-rounded, fp16-rounded and plain operands, so a test can
 * tell from a result how its call was run. */
#ifndef AMPSHIM_TEST_ANSWERS_H
#define AMPSHIM_TEST_ANSWERS_H

#include <dlfcn.h>

#include "tests/oracle.h"

typedef void (*answers_sgemm_fn)(int, int, int, int, int, int, float, const float *, int,
                                 const float *, int, float, float *, int);

/* Fills a and b (n x n) and want[0] (bf16), want[1] (fp16), want[2] (fp32). */
static void expected_answers(int n, float *a, float *b, float *want[3])
{
    for (int i = 0; i < n * n; i++) {
        a[i] = (float)((i * 7919) % 1013) / 317.0f - 1.6f;
        b[i] = (float)((i * 6271) % 991) / 211.0f - 2.3f;
    }
    answers_sgemm_fn real = (answers_sgemm_fn)dlsym(
        dlopen("libopenblas.so.0", RTLD_NOW | RTLD_NOLOAD), "cblas_sgemm");
    float ra[n * n], rb[n * n];
    for (int i = 0; i < n * n; i++) {
        ra[i] = oracle_bf16(a[i]);
        rb[i] = oracle_bf16(b[i]);
    }
    real(102, 111, 111, n, n, n, 1.0f, ra, n, rb, n, 0.0f, want[0], n);
    for (int i = 0; i < n * n; i++) {
        ra[i] = (float)(_Float16)a[i];
        rb[i] = (float)(_Float16)b[i];
    }
    real(102, 111, 111, n, n, n, 1.0f, ra, n, rb, n, 0.0f, want[1], n);
    real(102, 111, 111, n, n, n, 1.0f, a, n, b, n, 0.0f, want[2], n);
}

#endif
