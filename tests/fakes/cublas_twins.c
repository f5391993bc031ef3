/* A process holding cuBLAS 12 and cuBLAS 13 (here the test-only fakes, with
 * the real libraries' symbol versions): two extension modules, each linked
 * to one, opened RTLD_GLOBAL as torch opens its CUDA libraries. Without the
 * shim each call binds to the version its caller was linked against; under
 * the shim each must too (a cuBLAS 12 handle given to cuBLAS 13 fails), and
 * run as made: a CUDA name two loaded libraries define is never lowered.
 * usage: cublas_twins EXT12 EXT13 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "tests/check.h"

typedef int (*sgemm_fn)(const float *, const float *, float *, int, int *);

static sgemm_fn open_ext(const char *path, const char *symbol)
{
    void *h = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
    sgemm_fn f = h ? (sgemm_fn)dlsym(h, symbol) : NULL;
    if (!f)
        printf("FAIL: %s: %s\n", path, dlerror());
    return f;
}

int main(int argc, char **argv)
{
    if (argc != 3)
        return 2;
    CHECK_SHIM_LOADED();
    /* 13 first: a resolver that took the first definition would send the
     * cuBLAS 12 caller there. */
    sgemm_fn ext13 = open_ext(argv[2], "ext_sgemm_13");
    sgemm_fn ext12 = open_ext(argv[1], "ext_sgemm_12");
    if (!ext12 || !ext13)
        return 1;
    enum { N = 8 };
    float a[N * N], b[N * N], c[N * N];
    for (int i = 0; i < N * N; i++)
        a[i] = b[i] = 1.0f + (float)i / 64.0f;
    for (int round = 0; round < 2; round++) {
        int major = 0;
        int status = ext12(a, b, c, N, &major);
        CHECK(status == 0 && major == 12, "the cuBLAS 12 caller reached libcublas.so.%d (status %d)",
              major, status);
        major = 0;
        status = ext13(a, b, c, N, &major);
        CHECK(status == 0 && major == 13, "the cuBLAS 13 caller reached libcublas.so.%d (status %d)",
              major, status);
    }
    int (*ctl)(const char *, void *, size_t *, const void *, size_t) =
        (int (*)(const char *, void *, size_t *, const void *, size_t))dlsym(RTLD_DEFAULT,
                                                                             "ampshim_ctl");
    uint64_t v = UINT64_MAX;
    size_t len = sizeof v;
    CHECK(ctl && ctl("stats.cublasSgemm_v2.passthrough", &v, &len, NULL, 0) == 0 && v == 4,
          "the four calls ran as made (passthrough %llu)", (unsigned long long)v);
    printf("cublas_twins: %d passed, %d failed\n", checks - failures, (int)failures);
    return failures ? 1 : 0;
}
