/* Test-only: a library that calls cblas_sgemm but is linked to no BLAS, for
 * missing_blas.c. Bound lazily, the call fails only when it is made. */
void cblas_sgemm(int, int, int, int, int, int, float, const float *, int, const float *, int,
                 float, float *, int);

__attribute__((visibility("default"))) void multiply_2x2(const float *a, const float *b, float *c)
{
    cblas_sgemm(102, 111, 111, 2, 2, 2, 1.0f, a, 2, b, 2, 0.0f, c, 2);
}
