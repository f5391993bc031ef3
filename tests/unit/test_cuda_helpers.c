/* The CUDA helper resolver's fallback (shim/cuda/cuda_helpers.c): a helper
 * no loaded object defines is taken from the first of the list's sonames
 * that opens, in order (libcudart.so.13, then libcudart.so.12: a pip CUDA
 * 12 machine has only the second). Checked with zlib standing in for the
 * runtime: not loaded by this test, present on every Debian system. */
#include <dlfcn.h>
#include <stdio.h>

#include "shim/cuda/cuda_helpers.h"
#include "tests/check.h"

int main(void)
{
    CHECK(dlopen("libz.so.1", RTLD_NOW | RTLD_NOLOAD) == NULL, "zlib is not loaded yet");
    static const char *const names[] = {"zlibVersion"};
    static const char *const second[] = {"libampshim-test-absent.so.13", "libz.so.1", NULL};
    static const char *const none[] = {"libampshim-test-absent.so.13", NULL};
    struct amp_helper_list list = {"zlib", second, 1, names};
    void *table[1] = {NULL};
    CHECK(amp_helpers_resolve(&list, table, NULL) == 1 && table[0] != NULL,
          "the second soname opens when the first is absent");
    void *z = dlopen("libz.so.1", RTLD_NOW | RTLD_NOLOAD);
    CHECK(z && table[0] == dlsym(z, "zlibVersion"), "the helper is that library's");
    list.sonames = none;
    list.names = (const char *const[]){"ampshim_test_no_such_helper"};
    table[0] = (void *)1;
    CHECK(amp_helpers_resolve(&list, table, NULL) == 0 && table[0] == NULL,
          "no soname that opens: the helper is missing, not guessed");
    printf("test_cuda_helpers: %d passed, %d failed\n", checks - failures, (int)failures);
    return failures != 0;
}
