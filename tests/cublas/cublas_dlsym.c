/* A program that (as TensorFlow and JAX do) opens libcublas with dlopen and
 * takes its functions with dlsym(handle, ...). Under LD_PRELOAD alone it
 * calls the library directly and the shim never sees those calls
 * (usage: cublas_dlsym bypassed); with LD_AUDIT=libampshim-audit.so as well,
 * the lookup yields the shim's hook and the call is lowered (cublas_dlsym
 * covered). A lookup through the global scope (dlsym(RTLD_DEFAULT, ...), or
 * an ordinary link) reaches the shim either way. ampshim(7) documents
 * both; this test keeps the documentation true. */
#include <cublas_v2.h>
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "tests/check.h"

struct fake_cublas_record {
    char function[48];
    int atype, btype, ctype, compute;
    long calls;
};

typedef cublasStatus_t (*sgemm_fn)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int,
                                   int, const float *, const float *, int, const float *, int,
                                   const float *, float *, int);

int main(int argc, char **argv)
{
    int covered = argc > 1 && strcmp(argv[1], "covered") == 0;
    void *lib = dlopen("libcublas.so.13", RTLD_NOW | RTLD_LOCAL);
    CHECK(lib != NULL, "dlopen libcublas.so.13: %s", dlerror());
    if (!lib)
        return 1;
    cublasStatus_t (*create)(cublasHandle_t *) =
        (cublasStatus_t(*)(cublasHandle_t *))dlsym(lib, "cublasCreate_v2");
    const struct fake_cublas_record *(*last)(void) =
        (const struct fake_cublas_record *(*)(void))dlsym(lib, "fake_cublas_last_call");
    cublasHandle_t h;
    create(&h);
    float a[16] = {1, 2, 3, 4}, c[16], one = 1.0f, zero = 0.0f;
    sgemm_fn direct = (sgemm_fn)dlsym(lib, "cublasSgemm_v2");
    direct(h, CUBLAS_OP_N, CUBLAS_OP_N, 4, 4, 4, &one, a, 4, a, 4, &zero, c, 4);
    CHECK(strcmp(last()->function, covered ? "cublasGemmEx" : "cublasSgemm_v2") == 0,
          "dlsym(handle): the call %s the shim (reached %s)", covered ? "goes through" : "bypasses",
          last()->function);
    sgemm_fn global = (sgemm_fn)dlsym(RTLD_DEFAULT, "cublasSgemm_v2");
    global(h, CUBLAS_OP_N, CUBLAS_OP_N, 4, 4, 4, &one, a, 4, a, 4, &zero, c, 4);
    CHECK(strcmp(last()->function, "cublasGemmEx") == 0,
          "dlsym(RTLD_DEFAULT): the call is lowered (reached %s)", last()->function);
    printf("cublas_dlsym: %d passed, %d failed\n", checks - failures, (int)failures);
    return failures ? 1 : 0;
}
