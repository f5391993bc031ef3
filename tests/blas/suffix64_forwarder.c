/* Test-only: the 64-bit-suffixed names an OpenBLAS built with
 * SYMBOLSUFFIX=64_ exports (Julia ships one), forwarded to Debian's real
 * ILP64 OpenBLAS, which exports the same routines under plain names. No
 * Debian package provides suffixed names, and the shim's suffixed hooks need
 * a library to forward to. Never installed. */
#include <stdint.h>

void cblas_sgemm(int, int, int, int64_t, int64_t, int64_t, float, const float *, int64_t,
                 const float *, int64_t, float, float *, int64_t);
void sgemm_(const char *, const char *, const int64_t *, const int64_t *, const int64_t *,
            const float *, const float *, const int64_t *, const float *, const int64_t *,
            const float *, float *, const int64_t *);

__attribute__((visibility("default"))) void
cblas_sgemm64_(int layout, int ta, int tb, int64_t m, int64_t n, int64_t k, float alpha,
               const float *a, int64_t lda, const float *b, int64_t ldb, float beta, float *c,
               int64_t ldc)
{
    cblas_sgemm(layout, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

__attribute__((visibility("default"))) void
sgemm_64_(const char *ta, const char *tb, const int64_t *m, const int64_t *n, const int64_t *k,
          const float *alpha, const float *a, const int64_t *lda, const float *b,
          const int64_t *ldb, const float *beta, float *c, const int64_t *ldc)
{
    sgemm_(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}
