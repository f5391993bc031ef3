/* Two copies of one cuBLAS 13 (the test-only fake, copied into two
 * folders) opened by path, RTLD_LOCAL, their functions taken with
 * dlsym(handle, ...) as a ctypes program takes them, each copy called with
 * its own handle. Under LD_AUDIT=libampshim-audit.so the first copy's
 * lookups yield the shim's hooks; the shim cannot tell which copy such a
 * caller meant (the program links neither), so that call runs as made in
 * the first copy (counted passthrough, one info line names both copies),
 * and the second copy's functions are never given the hooks: its call
 * runs in its own copy, with its own handle, untouched.
 * usage: cublas_copies_dlsym COPY_A COPY_B audited|bypassed */
#include <cublas_v2.h>
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "tests/check.h"
#include "tests/fakes/fake_cublas.h"
#include "tests/shim_stats.h"

typedef cublasStatus_t (*create_fn)(cublasHandle_t *);
typedef cublasStatus_t (*destroy_fn)(cublasHandle_t);
typedef cublasStatus_t (*sgemm_fn)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int,
                                   int, const float *, const float *, int, const float *, int,
                                   const float *, float *, int);
typedef const struct fake_cublas_record *(*record_fn)(void);

int main(int argc, char **argv)
{
    if (argc != 4)
        return 2;
    int audited = strcmp(argv[3], "audited") == 0;
    enum { N = 8 };
    float a[N * N], c[N * N], alpha = 1.0f, beta = 0.0f;
    for (int i = 0; i < N * N; i++)
        a[i] = 1.0f + (float)i / 64.0f;
    void *libs[2];
    for (int k = 0; k < 2; k++) { /* both open before either is called */
        libs[k] = dlopen(argv[1 + k], RTLD_NOW | RTLD_LOCAL);
        CHECK(libs[k] != NULL, "copy %c opens (%s)", 'A' + k, dlerror());
        if (!libs[k])
            return 1;
    }
    for (int k = 0; k < 2; k++) {
        void *lib = libs[k];
        create_fn create = (create_fn)dlsym(lib, "cublasCreate_v2");
        destroy_fn destroy = (destroy_fn)dlsym(lib, "cublasDestroy_v2");
        sgemm_fn sgemm = (sgemm_fn)dlsym(lib, "cublasSgemm_v2");
        record_fn record = (record_fn)dlsym(lib, "fake_cublas_last_call");
        cublasHandle_t h = NULL;
        CHECK(create && destroy && sgemm && record && create(&h) == CUBLAS_STATUS_SUCCESS,
              "copy %c: a handle of its own", 'A' + k);
        if (!h)
            return 1;
        long before = record()->calls;
        int status = sgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, N, N, N, &alpha, a, N, a, N, &beta, c, N);
        const struct fake_cublas_record *r = record();
        CHECK(status == CUBLAS_STATUS_SUCCESS && r->calls > before &&
                  strcmp(r->function, "cublasSgemm_v2") == 0,
              "copy %c: its sgemm ran as made in its own copy (status %d, %s)", 'A' + k, status,
              r->calls > before ? r->function : "no call there");
        destroy(h);
    }
    uint64_t through = shim_stat("cublasSgemm_v2", "passthrough"),
             lowered = shim_stat("cublasSgemm_v2", "lowered");
    if (audited)
        CHECK(through == 1 && lowered == 0,
              "the first copy's call went through the hook, as made (passthrough %llu, lowered "
              "%llu)",
              (unsigned long long)through, (unsigned long long)lowered);
    else
        CHECK(through == 0 || through == UINT64_MAX, "no call went through the hook (%llu)",
              (unsigned long long)through);
    printf("cublas_copies_dlsym: %d passed, %d failed\n", checks - failures, (int)failures);
    return failures != 0;
}
