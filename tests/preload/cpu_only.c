/* A CPU-only BLAS program under the shim: its sgemm is lowered, and no CUDA
 * library is ever loaded into it (the CUDA hooks find their libraries only
 * when the program itself calls into them). With the CUDA toolkit's
 * libraries on the library path, as on a machine that has them.
 * Prints the mapped CUDA libraries, if any, and fails then. */
#include <cblas.h>
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
    printf("cpu_only: %d passed, %d failed\n", checks - failures, (int)failures);
    return failures ? 1 : 0;
}
