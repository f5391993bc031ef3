/* The loader, used the way programs use it, under the shim:
 *  - probing for an optional BLAS function with dlsym(RTLD_DEFAULT, ...) or
 *    the program's own handle (what ctypes.CDLL(None) holds) while no BLAS
 *    is loaded answers NULL, so the program takes its fallback (the shim's
 *    hook used to be found and the call ended the process with status 127);
 *  - a BLAS loaded with dlopen after the start is found and lowered;
 *  - dlclose unloads it, and the probe answers NULL again (no hook may
 *    jump into the unmapped library); loaded again, its new copy is used.
 * usage: loader_probes LIBBLAS (a CBLAS library this program is not linked to) */
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>

#include "tests/check.h"
#include "tests/probe_product.h"


static int count_subs(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    *(unsigned long long *)data = info->dlpi_subs;
    return 1;
}

static unsigned long long unloads(void)
{
    unsigned long long subs = 0;
    dl_iterate_phdr(count_subs, &subs);
    return subs;
}


int main(int argc, char **argv)
{
    CHECK_SHIM_LOADED();
    if (argc < 2)
        return 2;
    void *program = dlopen(NULL, RTLD_LAZY);
    CHECK(dlsym(RTLD_DEFAULT, "cblas_sgemm") == NULL,
          "dlsym(RTLD_DEFAULT, cblas_sgemm) with no BLAS loaded is NULL");
    CHECK(dlsym(program, "sgemm_") == NULL, "dlsym(program, sgemm_) with no BLAS loaded is NULL");
    CHECK(dlsym(RTLD_DEFAULT, "ampshim_version") != NULL, "the shim's own names are still found");

    for (int round = 0; round < 3; round++) {
        void *lib = dlopen(argv[1], RTLD_NOW | RTLD_GLOBAL);
        CHECK(lib != NULL, "dlopen %s: %s", argv[1], dlerror());
        if (!lib)
            break;
        probe_sgemm_fn f = (probe_sgemm_fn)dlsym(RTLD_DEFAULT, "cblas_sgemm");
        CHECK(f != NULL, "round %d: cblas_sgemm is found once a BLAS is loaded", round);
        if (f)
            CHECK(probe_product(f) == PROBE_LOWERED, "round %d: the product is lowered (got %a)", round,
                  probe_product(f));
        unsigned long long before = unloads();
        dlclose(lib);
        CHECK(unloads() > before, "round %d: dlclose unloaded the library", round);
        CHECK(dlsym(RTLD_DEFAULT, "cblas_sgemm") == NULL,
              "round %d: after dlclose the probe answers NULL", round);
    }
    printf("loader_probes: %d passed, %d failed\n", checks - failures, (int)failures);
    return failures ? 1 : 0;
}
