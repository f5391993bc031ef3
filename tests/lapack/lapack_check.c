/* An ordinary program linked to -llapack -lblas: solves, factors and
 * diagonalises single-precision matrices and multiplies doubles, then prints
 * a hash of every result bit. run_check compares the output with and without
 * ampshim: the sgemm_/strmm_ calls LAPACK makes to its BLAS are its own
 * business (forwarded untouched, fp32 region or not) and dgemm is never
 * touched, so the hashes must match, with the listed routines' regions on
 * (the default) or off (AMPSHIM_POLICY=cpu:geqrf=passthrough,...). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/bits_hash.h"

void sgesv_(const int *n, const int *nrhs, float *a, const int *lda, int *ipiv, float *b,
            const int *ldb, int *info);
void sgeqrf_(const int *m, const int *n, float *a, const int *lda, float *tau, float *work,
             const int *lwork, int *info);
void ssyevd_(const char *jobz, const char *uplo, const int *n, float *a, const int *lda, float *w,
             float *work, const int *lwork, int *iwork, const int *liwork, int *info);
void dgemm_(const char *, const char *, const int *, const int *, const int *, const double *,
            const double *, const int *, const double *, const int *, const double *, double *,
            const int *);

static uint64_t state = 42;
static float rnd(void)
{
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return (float)((double)(state >> 40) / (double)(1ull << 24) - 0.5);
}

int main(void)
{
    enum { N = 300 };
    int n = N, nrhs = 3, info, lwork = -1;
    float *a = malloc(sizeof(float) * N * N), *b = malloc(sizeof(float) * N * 3);
    int *ipiv = malloc(sizeof(int) * N);
    for (int i = 0; i < N * N; i++)
        a[i] = rnd();
    for (int i = 0; i < N * 3; i++)
        b[i] = rnd();
    sgesv_(&n, &nrhs, a, &n, ipiv, b, &n, &info);
    printf("sgesv info=%d x=%016llx lu=%016llx\n", info, (unsigned long long)hash(b, sizeof(float) * N * 3),
           (unsigned long long)hash(a, sizeof(float) * N * N));

    for (int i = 0; i < N * N; i++)
        a[i] = rnd();
    float tau[N], query;
    sgeqrf_(&n, &n, a, &n, tau, &query, &lwork, &info);
    lwork = (int)query;
    float *work = malloc(sizeof(float) * (size_t)lwork);
    sgeqrf_(&n, &n, a, &n, tau, work, &lwork, &info);
    printf("sgeqrf info=%d qr=%016llx tau=%016llx\n", info,
           (unsigned long long)hash(a, sizeof(float) * N * N), (unsigned long long)hash(tau, sizeof tau));
    free(work);

    for (int i = 0; i < N; i++)
        for (int j = 0; j <= i; j++)
            a[i * N + j] = a[j * N + i] = rnd();
    float w[N];
    int iquery, liwork = -1;
    lwork = -1;
    ssyevd_("V", "U", &n, a, &n, w, &query, &lwork, &iquery, &liwork, &info);
    lwork = (int)query;
    liwork = iquery;
    work = malloc(sizeof(float) * (size_t)lwork);
    int *iwork = malloc(sizeof(int) * (size_t)liwork);
    ssyevd_("V", "U", &n, a, &n, w, work, &lwork, iwork, &liwork, &info);
    printf("ssyevd info=%d w=%016llx v=%016llx\n", info, (unsigned long long)hash(w, sizeof w),
           (unsigned long long)hash(a, sizeof(float) * N * N));
    free(work);
    free(iwork);

    double *da = malloc(sizeof(double) * N * N), *db = malloc(sizeof(double) * N * N),
           *dc = calloc(N * N, sizeof(double)), one = 1.0, zero = 0.0;
    for (int i = 0; i < N * N; i++) {
        da[i] = rnd();
        db[i] = rnd();
    }
    dgemm_("N", "N", &n, &n, &n, &one, da, &n, db, &n, &zero, dc, &n);
    printf("dgemm c=%016llx\n", (unsigned long long)hash(dc, sizeof(double) * N * N));
    return 0;
}
