/* A process with two BLAS libraries under the same plain names: two
 * "extension modules" opened RTLD_LOCAL, one linked to Debian's LP64
 * OpenBLAS and one to its ILP64 OpenBLAS, as a Python process with two
 * extensions may be. Without ampshim each binds to its own library.
 *   two_blas print EXT_LP64 EXT_ILP64    prints a hash of every result bit
 *     (run_check compares it with a run without the shim: disabled and
 *     passthrough runs must be identical)
 *   two_blas lowered EXT_LP64 EXT_ILP64  each result must equal its own
 *     library's sgemm on bf16-rounded operands (the shim lowered it and
 *     forwarded it to the caller's own library, at that library's width) */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "tests/bits_hash.h"
#include "tests/oracle.h"

enum { M = 37, N = 23, K = 51 };
typedef void (*multiply_fn)(const float *, const float *, float *, float *, int, int, int);

static multiply_fn open_ext(const char *path, const char *symbol)
{
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    multiply_fn f = h ? (multiply_fn)dlsym(h, symbol) : NULL;
    if (!f)
        fprintf(stderr, "two_blas: %s: %s\n", path, dlerror());
    return f;
}

/* The library's own sgemm on bf16-rounded operands. */
static void expected(const char *library, int ilp64, const float *a, const float *b, float *want)
{
    static float ra[M * K], rb[K * N];
    for (int i = 0; i < M * K; i++)
        ra[i] = oracle_bf16(a[i]);
    for (int i = 0; i < K * N; i++)
        rb[i] = oracle_bf16(b[i]);
    void *h = dlopen(library, RTLD_NOW | RTLD_NOLOAD);
    void *f = h ? dlsym(h, "cblas_sgemm") : NULL;
    if (!f)
        return;
    if (ilp64)
        ((void (*)(int, int, int, int64_t, int64_t, int64_t, float, const float *, int64_t,
                   const float *, int64_t, float, float *, int64_t))f)(
            102, 111, 111, M, N, K, 1.0f, ra, M, rb, K, 0.0f, want, M);
    else
        ((void (*)(int, int, int, int, int, int, float, const float *, int, const float *, int,
                   float, float *, int))f)(102, 111, 111, M, N, K, 1.0f, ra, M, rb, K, 0.0f, want,
                                           M);
}

int main(int argc, char **argv)
{
    if (argc != 4)
        return 2;
    int lowered = strcmp(argv[1], "lowered") == 0;
    /* The ILP64 one first: a resolver that takes the first library loaded
     * would hand the LP64 caller's 32-bit integers to the ILP64 library. */
    multiply_fn ilp = open_ext(argv[3], "ext_multiply_ilp64");
    multiply_fn lp = open_ext(argv[2], "ext_multiply_lp64");
    if (!lp || !ilp)
        return 1;
    static float a[M * K], b[K * N], c[2][M * N], d[2][M * N], want[2][M * N];
    for (int i = 0; i < M * K; i++)
        a[i] = (float)((i * 7919) % 1013) / 317.0f - 1.6f;
    for (int i = 0; i < K * N; i++)
        b[i] = (float)((i * 6271) % 991) / 211.0f - 2.3f;
    lp(a, b, c[0], d[0], M, N, K);
    ilp(a, b, c[1], d[1], M, N, K);
    if (!lowered) {
        for (int e = 0; e < 2; e++)
            printf("%s cblas %016llx f77 %016llx\n", e ? "ilp64" : "lp64",
                   (unsigned long long)hash(c[e], sizeof c[e]),
                   (unsigned long long)hash(d[e], sizeof d[e]));
        return 0;
    }
    expected("libopenblas.so.0", 0, a, b, want[0]);
    expected("libopenblas64.so.0", 1, a, b, want[1]);
    int failures = 0;
    for (int e = 0; e < 2; e++) {
        const char *tag = e ? "ilp64" : "lp64";
        if (memcmp(c[e], want[e], sizeof want[e]) != 0) {
            printf("FAIL %s: cblas_sgemm is not its own library's product of bf16 operands\n", tag);
            failures++;
        }
        if (memcmp(d[e], want[e], sizeof want[e]) != 0) {
            printf("FAIL %s: sgemm_ is not its own library's product of bf16 operands\n", tag);
            failures++;
        }
    }
    printf("two_blas lowered: %d passed, %d failed\n", 4 - failures, failures);
    return failures ? 1 : 0;
}
