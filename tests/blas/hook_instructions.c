/* N calls of a 4x4 cblas_sgemm: the loop tests/blas/hook_instructions.sh
 * runs under callgrind twice (N = 2000 and 4000) so that the difference is
 * the instructions of 2000 calls, start-up and exit cancelled out.
 * usage: hook_instructions N */
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: hook_instructions N\n");
        return 2;
    }
    long n = atol(argv[1]);
    /* Values near the origin for their spread: the spread check keeps
     * nothing as made here. */
    float a[16], b[16], c[16] = {0};
    for (int i = 0; i < 16; i++) {
        a[i] = (float)(i % 5) - 2.0f;
        b[i] = (float)(i % 7) - 3.0f;
    }
    for (long i = 0; i < n; i++)
        cblas_sgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, 4, 4, 4, 1.0f, a, 4, b, 4, 0.0f, c,
                    4);
    printf("%g\n", (double)c[0]);
    return 0;
}
