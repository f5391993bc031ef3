/* Issue 21, defect 2: a native sgemm split into chunks, one of which fails
 * to execute after another wrote its rows, must not hand the emulated
 * retry a C it already wrote. Run with the oneDNN fault injector
 * (dnnl_fault_injector.c, every third execution fails) and two BLAS
 * threads: every product, native or taken over by the emulated path, is
 * exactly alpha A B + beta C = 513 (all-ones operands, K = 512, C = 1:
 * exact in bf16 and in fp32), never 1025 (alpha A B added twice).
 * usage: native_chunk_failure   (exit 77 when the products do not run
 * native: no bf16 units, or no oneDNN) */
#include <stdio.h>
#include <stdlib.h>

#include "tests/check.h"

void cblas_sgemm(int, int, int, int, int, int, float, const float *, int, const float *, int,
                 float, float *, int);

enum { N = 512, CALLS = 8 };

int main(void)
{
    CHECK_SHIM_LOADED();
    float *a = malloc(sizeof(float) * N * N), *b = malloc(sizeof(float) * N * N),
          *c = malloc(sizeof(float) * N * N);
    for (size_t i = 0; i < (size_t)N * N; i++)
        a[i] = b[i] = 1.0f;
    long wrong = 0;
    for (int call = 0; call < CALLS; call++) {
        for (size_t i = 0; i < (size_t)N * N; i++)
            c[i] = 1.0f;
        cblas_sgemm(101, 111, 111, N, N, N, 1.0f, a, N, b, N, 1.0f, c, N);
        long bad = 0;
        for (size_t i = 0; i < (size_t)N * N; i++)
            bad += c[i] != 513.0f;
        if (bad)
            printf("call %d: %ld elements wrong (c[0] = %g, c[last] = %g)\n", call, bad, c[0],
                   c[(size_t)N * N - 1]);
        wrong += bad;
    }
    unsigned long long native = shim_counter("stats.cblas_sgemm.native"),
                       emulated = shim_counter("stats.cblas_sgemm.emulated");
    printf("native %llu, emulated %llu of %d calls\n", native, emulated, CALLS);
    if (!native && failures == 0) {
        printf("SKIP: no product ran native here\n");
        return 77;
    }
    CHECK(wrong == 0, "%ld elements of %d products are not 513", wrong, CALLS);
    CHECK(emulated > 0, "a failed chunk made the emulated path take a call over");
    printf("%d passed, %d failed\n", checks - failures, failures);
    return failures ? 1 : 0;
}
