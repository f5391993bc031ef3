/* Calls cblas_sgemm through two shared objects, libcaller-a.so and
 * libcaller-b.so, and prints which of them got lowered (bf16) results:
 * "a=B b=F" and so on. Under AMPSHIM_CALLERS only the selected one may be
 * lowered. usage: callers EXPECT (for example "a=B b=F") */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "tests/oracle.h"

void multiply_in_a(const float *, const float *, float *, int);
void multiply_in_b(const float *, const float *, float *, int);
typedef void (*sgemm_fn)(int, int, int, int, int, int, float, const float *, int, const float *,
                         int, float, float *, int);
enum { N = 16 };

int main(int argc, char **argv)
{
    static float a[N * N], b[N * N], c[N * N], lowered[N * N], plain[N * N], ra[N * N], rb[N * N];
    for (int i = 0; i < N * N; i++) {
        a[i] = (float)((i * 7919) % 1013) / 317.0f - 1.6f;
        b[i] = (float)((i * 6271) % 991) / 211.0f - 2.3f;
        ra[i] = oracle_bf16(a[i]);
        rb[i] = oracle_bf16(b[i]);
    }
    sgemm_fn real = (sgemm_fn)dlsym(dlopen("libopenblas.so.0", RTLD_NOW | RTLD_NOLOAD), "cblas_sgemm");
    real(102, 111, 111, N, N, N, 1.0f, ra, N, rb, N, 0.0f, lowered, N);
    real(102, 111, 111, N, N, N, 1.0f, a, N, b, N, 0.0f, plain, N);
    char got[16];
    for (int lib = 0; lib < 2; lib++) {
        /* Twice each: the second call is answered from the cache. */
        for (int rep = 0; rep < 2; rep++)
            (lib ? multiply_in_b : multiply_in_a)(a, b, c, N);
        got[lib] = !memcmp(c, lowered, sizeof c) ? 'B' : !memcmp(c, plain, sizeof c) ? 'F' : 'X';
    }
    char line[32];
    snprintf(line, sizeof line, "a=%c b=%c", got[0], got[1]);
    int ok = argc > 1 && strcmp(line, argv[1]) == 0;
    printf("%s (expected %s)\ncallers: %d passed, %d failed\n", line, argc > 1 ? argv[1] : "?", ok, !ok);
    return !ok;
}
