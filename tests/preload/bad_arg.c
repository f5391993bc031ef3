/* An ordinary program that passes bad arguments to BLAS: lda smaller than the
 * matrix, a bad transpose character, a negative dimension. The library's own
 * error (xerbla) must appear exactly as without ampshim. */
#include <stdio.h>

void cblas_sgemm(int, int, int, int, int, int, float, const float *, int, const float *, int,
                 float, float *, int);
void sgemm_(const char *, const char *, const int *, const int *, const int *, const float *,
            const float *, const int *, const float *, const int *, const float *, float *,
            const int *);
void ssyrk_(const char *, const char *, const int *, const int *, const float *, const float *,
            const int *, const float *, float *, const int *);

int main(void)
{
    float a[64] = {1}, b[64] = {1}, c[64] = {0}, one = 1.0f, zero = 0.0f;
    int four = 4, two = 2, minus = -1;
    setvbuf(stdout, NULL, _IONBF, 0);
    printf("cblas_sgemm with lda < m\n");
    cblas_sgemm(102, 111, 111, 4, 4, 4, 1.0f, a, 2, b, 4, 0.0f, c, 4);
    printf("sgemm_ with transa 'X'\n");
    sgemm_("X", "N", &four, &four, &four, &one, a, &four, b, &four, &zero, c, &four);
    printf("sgemm_ with ldc < m\n");
    sgemm_("N", "N", &four, &four, &four, &one, a, &four, b, &four, &zero, c, &two);
    printf("ssyrk_ with n < 0\n");
    ssyrk_("U", "N", &minus, &four, &one, a, &four, &zero, c, &four);
    printf("c[0] = %g\n", c[0]);
    return 0;
}
