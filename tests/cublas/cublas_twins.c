/* A process holding two cuBLAS libraries (here the test-only fakes): cuBLAS
 * 12 beside cuBLAS 13 (with the real libraries' symbol versions), or two
 * copies of one cuBLAS 13 in two folders (tests/fakes/copies: glibc shares
 * one copy among every object that names its soname, so these are linked
 * by path, as a program's and a wheel's copy reach one process). Two
 * extension modules, each linked to one, opened RTLD_LOCAL. Without the
 * shim each call binds to the library its caller was linked against; under
 * the shim each must too (a handle given to another library's functions is
 * refused by the fake, as a real one would misread it), and a lowered call
 * runs on its caller's own library's cublasGemmEx.
 * usage: cublas_twins EXT_A SYMBOL_A MAJOR_A EXT_B SYMBOL_B MAJOR_B lowered|asis */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/check.h"
#include "tests/shim_stats.h"

typedef int (*sgemm_fn)(const float *, const float *, float *, int, int *, char[48]);

static sgemm_fn open_ext(const char *path, const char *symbol)
{
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    sgemm_fn f = h ? (sgemm_fn)dlsym(h, symbol) : NULL;
    if (!f)
        printf("FAIL: %s: %s\n", path, dlerror());
    return f;
}

int main(int argc, char **argv)
{
    if (argc != 8)
        return 2;
    int lowered = strcmp(argv[7], "lowered") == 0;
    if (lowered)
        CHECK_SHIM_LOADED();
    /* B first: a resolver that took the first definition would send A's
     * caller there. */
    sgemm_fn ext[2] = {open_ext(argv[4], argv[5]), open_ext(argv[1], argv[2])};
    int want[2] = {atoi(argv[6]), atoi(argv[3])};
    const char *name[2] = {argv[4], argv[1]};
    if (!ext[0] || !ext[1])
        return 1;
    enum { N = 8 };
    float a[N * N], b[N * N], c[N * N];
    for (int i = 0; i < N * N; i++)
        a[i] = b[i] = 1.0f + (float)i / 64.0f;
    const char *expect = lowered ? "cublasGemmEx" : "cublasSgemm_v2";
    for (int round = 0; round < 2; round++)
        for (int i = 0; i < 2; i++) {
            int major = 0;
            char function[48] = "";
            int status = ext[i](a, b, c, N, &major, function);
            CHECK(status == 0 && major == want[i] && strcmp(function, expect) == 0,
                  "%s's call ran as %s in its own libcublas.so.%d (status %d, %s, major %d)",
                  name[i], expect, want[i], status, function, major);
        }
    if (lowered) {
        uint64_t n = shim_stat("cublasSgemm_v2", "lowered");
        CHECK(n == 4, "the four calls were lowered (%llu)", (unsigned long long)n);
    }
    printf("cublas_twins: %d passed, %d failed\n", checks - failures, (int)failures);
    return failures ? 1 : 0;
}
