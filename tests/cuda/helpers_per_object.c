/* The CUDA helper resolver pairs each hook's real function with its own
 * object's helpers (shim/cuda/cuda_helpers.c, amp_helpers_of): with the
 * test-only fake cuBLAS 12 and 13 in one process (each opened RTLD_LOCAL, as
 * two extension modules' dependencies are), a table asked for with a real
 * function of one holds that object's helpers, never the other's; two real
 * functions of one object share one table. cuBLASLt's and cuDNN's tables
 * come from the same function. usage: helpers_per_object LIBCUBLAS12
 * LIBCUBLAS13 */
#include <dlfcn.h>
#include <stdio.h>

#include "shim/cuda/cuda_helpers.h"
#include "tests/check.h"

static const void *base_of(const void *p)
{
    Dl_info info;
    return p && dladdr(p, &info) ? info.dli_fbase : NULL;
}

int main(int argc, char **argv)
{
    if (argc != 3)
        return 2;
    void *lib[2] = {dlopen(argv[1], RTLD_NOW | RTLD_LOCAL), dlopen(argv[2], RTLD_NOW | RTLD_LOCAL)};
    CHECK(lib[0] && lib[1], "both fakes open (%s)", dlerror());
    if (!lib[0] || !lib[1])
        return 1;
    const struct amp_cublas_helpers *t[2];
    for (int i = 0; i < 2; i++) {
        const void *gemm = dlsym(lib[i], "cublasSgemm_v2"), *gemmex = dlsym(lib[i], "cublasGemmEx");
        int complete = 0, complete2 = 0;
        t[i] = amp_helpers_of(&amp_cublas_helper_list, sizeof *t[i], gemm, &complete);
        CHECK(t[i] && complete, "cuBLAS %d: every helper found", 12 + i);
        if (!t[i])
            return 1;
        CHECK(base_of((const void *)t[i]->get_math_mode) == base_of(gemm) &&
                  base_of((const void *)t[i]->geam) == base_of(gemm),
              "cuBLAS %d: its helpers are its own object's", 12 + i);
        CHECK(amp_helpers_of(&amp_cublas_helper_list, sizeof *t[i], gemmex, &complete2) == t[i] &&
                  complete2,
              "cuBLAS %d: another real function of the same object shares its table", 12 + i);
        CHECK(amp_cublas_helpers(gemm) == t[i], "cuBLAS %d: amp_cublas_helpers agrees", 12 + i);
    }
    CHECK(t[0] != t[1] && t[0]->get_math_mode != t[1]->get_math_mode,
          "the two majors have tables of their own");
    int complete = 1;
    CHECK(amp_helpers_of(&amp_cublas_helper_list, sizeof *t[0], NULL, &complete) == NULL,
          "no real function: no table");
    printf("helpers_per_object: %d passed, %d failed\n", checks - failures, (int)failures);
    return failures != 0;
}
