/* Test-only: one of two shared objects that call cblas_sgemm (built twice,
 * as libcaller-a.so with multiply_in_a and libcaller-b.so with
 * multiply_in_b), for the AMPSHIM_CALLERS test. */
void cblas_sgemm(int, int, int, int, int, int, float, const float *, int, const float *, int,
                 float, float *, int);

__attribute__((visibility("default"))) void CALLER_FUNCTION(const float *a, const float *b, float *c,
                                                            int n)
{
    cblas_sgemm(102, 111, 111, n, n, n, 1.0f, a, n, b, n, 0.0f, c, n);
}
