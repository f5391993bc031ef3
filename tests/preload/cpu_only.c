/* A CPU-only BLAS program under the shim: its sgemm is lowered, and no CUDA
 * library is ever loaded into it (the CUDA hooks find their libraries only
 * when the program itself calls into them). With the CUDA toolkit's
 * libraries on the library path, as on a machine that has them.
 * Prints the mapped CUDA libraries, if any, and fails then; fails too when
 * the shim is not in the process or did not lower the sgemm (so the test
 * cannot pass because the preload silently failed). */
#include <cblas.h>
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "tests/check.h"

int main(void)
{
    float a[16], b[16], c[16];
    for (int i = 0; i < 16; i++)
        a[i] = b[i] = 1.0f + (float)i / 3.0f;
    cblas_sgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, 4, 4, 4, 1.0f, a, 4, b, 4, 0.0f, c, 4);
    FILE *maps = fopen("/proc/self/maps", "r");
    CHECK(maps != NULL, "/proc/self/maps readable");
    char line[4096];
    int cuda = 0;
    static const char *const libs[] = {"libcuda.", "libcudart",   "libcublas", "libcublasLt",
                                       "libcudnn", "libcusolver", "libnvrtc"};
    while (maps && fgets(line, sizeof line, maps))
        for (size_t i = 0; i < sizeof libs / sizeof *libs; i++)
            if (strstr(line, libs[i])) {
                printf("mapped: %s", line);
                cuda = 1;
                break;
            }
    if (maps)
        fclose(maps);
    CHECK(!cuda, "no CUDA library is loaded into a CPU-only program");
    int (*ctl)(const char *, void *, size_t *, const void *, size_t) =
        (int (*)(const char *, void *, size_t *, const void *, size_t))dlsym(RTLD_DEFAULT,
                                                                             "ampshim_ctl");
    uint64_t lowered = 0;
    size_t len = sizeof lowered;
    CHECK(ctl != NULL, "ampshim is loaded (ampshim_ctl found)");
    CHECK(ctl && ctl("stats.cblas_sgemm.lowered", &lowered, &len, NULL, 0) == 0 && lowered == 1,
          "the sgemm went through the shim and was lowered (lowered %llu)",
          (unsigned long long)lowered);
    printf("cpu_only: %d passed, %d failed\n", checks - failures, (int)failures);
    return failures ? 1 : 0;
}
