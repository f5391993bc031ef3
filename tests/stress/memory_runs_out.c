/* Issue 51, item 11: a program whose first product the native executor
 * takes (so the BLAS never made its buffers), then takes the address space
 * until malloc fails, gives a little back and makes another product. The
 * native path cannot get memory for it and gives it back to the BLAS; the
 * BLAS must then find its buffers made (amp_blas_warm_real), not retry for
 * ever (OpenBLAS 0.3.21 did). Run under `ulimit -v` (memory_runs_out.sh):
 * prints the second product's first element, which must be fp32's or
 * lowered's (within bf16), and exits 0 in time. */
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>

enum { N1 = 256, N2 = 300 };
static float a[N2 * N2], b[N2 * N2], c[N2 * N2];
static void *keep[1 << 17];

int main(void)
{
    for (int i = 0; i < N2 * N2; i++)
        a[i] = b[i] = 1.0f / (float)(1 + i % 7);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, N1, N1, N1, 1, a, N1, b, N1, 0, c, N1);
    int n = 0;
    size_t size = 1 << 20;
    while (n < (int)(sizeof keep / sizeof *keep)) {
        void *p = malloc(size);
        if (p) {
            keep[n++] = p;
        } else if (size > 4096) {
            size /= 2;
        } else {
            break;
        }
    }
    for (size_t back = 0; back < 65536 && n > 0; back += 4096)
        free(keep[--n]);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, N2, N2, N2, 1, a, N2, b, N2, 0, c, N2);
    /* row 0 times column 0: sum over k of 1/(1+k%7) * 1/(1+(k*300)%7) */
    double want = 0;
    for (int k = 0; k < N2; k++)
        want += (1.0 / (1 + k % 7)) * (1.0 / (1 + (k * N2) % 7));
    double err = (c[0] - want) / want;
    printf("second product: c[0] %.6g, fp32 about %.6g (relative %.1e)\n", c[0], want, err);
    return err < 1e-2 && err > -1e-2 ? 0 : 1;
}
