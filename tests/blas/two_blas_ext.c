/* Test-only: an "extension module" linked to one OpenBLAS (built twice:
 * against Debian's LP64 libopenblas with EXT_INT int, against its ILP64
 * libopenblas64, whose names are the same plain ones, with EXT_INT int64_t).
 * It multiplies with cblas_sgemm and sgemm_ as a Python extension would. */
#include <stdint.h>

#define EXPORT __attribute__((visibility("default")))
#define PASTE2(a, b) a##b
#define PASTE(a, b) PASTE2(a, b)

void cblas_sgemm(int, int, int, EXT_INT, EXT_INT, EXT_INT, float, const float *, EXT_INT,
                 const float *, EXT_INT, float, float *, EXT_INT);
void sgemm_(const char *, const char *, const EXT_INT *, const EXT_INT *, const EXT_INT *,
            const float *, const float *, const EXT_INT *, const float *, const EXT_INT *,
            const float *, float *, const EXT_INT *);

/* c = a b (column major, m x k times k x n), through CBLAS, then d = a b
 * through the Fortran name. */
EXPORT void PASTE(ext_multiply_, EXT_TAG)(const float *a, const float *b, float *c, float *d,
                                          int m, int n, int k)
{
    /* Each Fortran integer is followed by a marker word: an ILP64 library
     * reading an LP64 caller's integers would see it in their high half. */
    EXT_INT dims[6] = {m, (EXT_INT)0x5a5a5a5a, n, (EXT_INT)0x5a5a5a5a, k, (EXT_INT)0x5a5a5a5a};
    float one = 1.0f, zero = 0.0f;
    cblas_sgemm(102, 111, 111, dims[0], dims[2], dims[4], 1.0f, a, dims[0], b, dims[4], 0.0f, c,
                dims[0]);
    sgemm_("N", "N", &dims[0], &dims[2], &dims[4], &one, a, &dims[0], b, &dims[4], &zero, d,
           &dims[0]);
}
