/* An ordinary program linked to -llapack -lblas -lcblas that calls LAPACK
 * routines ampshim does not list (real and complex single precision), prints
 * a hash of every result bit, and makes one product of its own. run_check
 * compares the output with and without ampshim: a library's calls to itself
 * are its business (forwarded untouched, however deep), so the hashes must
 * match. Under the shim the program's own cblas_sgemm must still be lowered:
 * it must equal the real sgemm on bf16-rounded operands (asked through a
 * dlopen handle, which the shim does not intercept); without the shim, the
 * plain product. Either way it prints the same lines. */
#include <complex.h>
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/bits_hash.h"
#include "tests/oracle.h"

typedef float complex cfloat;
void ssygvd_(const int *itype, const char *jobz, const char *uplo, const int *n, float *a,
             const int *lda, float *b, const int *ldb, float *w, float *work, const int *lwork,
             int *iwork, const int *liwork, int *info);
void sgeqrt_(const int *m, const int *n, const int *nb, float *a, const int *lda, float *t,
             const int *ldt, float *work, int *info);
void sgges_(const char *jobvsl, const char *jobvsr, const char *sort, int (*selctg)(), const int *n,
            float *a, const int *lda, float *b, const int *ldb, int *sdim, float *alphar,
            float *alphai, float *beta, float *vsl, const int *ldvsl, float *vsr,
            const int *ldvsr, float *work, const int *lwork, int *bwork, int *info);
void stgsen_(const int *ijob, const int *wantq, const int *wantz, const int *select, const int *n,
             float *a, const int *lda, float *b, const int *ldb, float *alphar, float *alphai,
             float *beta, float *q, const int *ldq, float *z, const int *ldz, int *m, float *pl,
             float *pr, float *dif, float *work, const int *lwork, int *iwork, const int *liwork,
             int *info);
void sgelst_(const char *trans, const int *m, const int *n, const int *nrhs, float *a,
             const int *lda, float *b, const int *ldb, float *work, const int *lwork, int *info);
void cgesdd_(const char *jobz, const int *m, const int *n, cfloat *a, const int *lda, float *s,
             cfloat *u, const int *ldu, cfloat *vt, const int *ldvt, cfloat *work,
             const int *lwork, float *rwork, int *iwork, int *info);
void cheevd_(const char *jobz, const char *uplo, const int *n, cfloat *a, const int *lda, float *w,
             cfloat *work, const int *lwork, float *rwork, const int *lrwork, int *iwork,
             const int *liwork, int *info);
void cblas_sgemm(int, int, int, int, int, int, float, const float *, int, const float *, int,
                 float, float *, int);

enum { N = 160 };

static uint64_t state = 7;
static float rnd(void)
{
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return (float)((double)(state >> 40) / (double)(1ull << 24) - 0.5);
}

static float *matrix(int rows, int cols)
{
    float *m = malloc(sizeof(float) * (size_t)rows * (size_t)cols);
    for (int i = 0; i < rows * cols; i++)
        m[i] = rnd();
    return m;
}

static void print(const char *what, int info, const void *p, size_t bytes)
{
    printf("%-8s info=%d %016llx\n", what, info, (unsigned long long)hash(p, bytes));
}

static int no_sort(void)
{
    return 0;
}

int main(void)
{
    int n = N, one = 1, info = 0, lwork, liwork;
    float *a = matrix(N, N), *b = matrix(N, N), *w = malloc(sizeof(float) * N);
    /* ssygvd: a symmetric, b symmetric positive definite. */
    for (int i = 0; i < N; i++)
        for (int j = 0; j < i; j++)
            a[i * N + j] = a[j * N + i];
    float *spd = calloc((size_t)N * N, sizeof(float));
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) {
            double s = 0;
            for (int k = 0; k < N; k++)
                s += (double)b[i * N + k] * b[j * N + k];
            spd[i * N + j] = (float)s + (i == j ? (float)N : 0.0f);
        }
    lwork = 1 + 6 * N + 2 * N * N, liwork = 3 + 5 * N;
    float *work = malloc(sizeof(float) * (size_t)lwork * 4);
    int *iwork = malloc(sizeof(int) * (size_t)liwork * 4);
    ssygvd_(&one, "V", "U", &n, a, &n, spd, &n, w, work, &lwork, iwork, &liwork, &info);
    print("ssygvd", info, w, sizeof(float) * N);
    print("ssygvd.v", info, a, sizeof(float) * N * N);

    /* sgeqrt */
    float *q = matrix(N, N), *t = malloc(sizeof(float) * 32 * N);
    int nb = 32;
    sgeqrt_(&n, &n, &nb, q, &n, t, &nb, work, &info);
    print("sgeqrt", info, q, sizeof(float) * N * N);

    /* sgges (QZ), then stgsen reordering its result */
    float *qa = matrix(N, N), *qb = matrix(N, N), *ar = malloc(sizeof(float) * N),
          *ai = malloc(sizeof(float) * N), *be = malloc(sizeof(float) * N),
          *vl = malloc(sizeof(float) * N * N), *vr = malloc(sizeof(float) * N * N);
    int sdim, *bwork = malloc(sizeof(int) * N);
    lwork = 8 * N + 16;
    sgges_("V", "V", "N", (int (*)())no_sort, &n, qa, &n, qb, &n, &sdim, ar, ai, be, vl, &n, vr,
           &n, work, &lwork, bwork, &info);
    print("sgges", info, qa, sizeof(float) * N * N);
    int *select = calloc(N, sizeof(int)), m, wantq = 1;
    for (int i = 0; i < N / 4; i++)
        select[N - 1 - i] = 1;
    float pl, pr, dif[2];
    int ijob = 0;
    lwork = 4 * N * N + 16, liwork = 4 * N + 16;
    stgsen_(&ijob, &wantq, &wantq, select, &n, qa, &n, qb, &n, ar, ai, be, vl, &n, vr, &n, &m, &pl,
            &pr, dif, work, &lwork, iwork, &liwork, &info);
    print("stgsen", info, qa, sizeof(float) * N * N);

    /* sgelst: least squares, 2N x N */
    int m2 = 2 * N, nrhs = 3;
    float *la = matrix(2 * N, N), *lb = matrix(2 * N, 3);
    lwork = 4 * N * N + 64;
    sgelst_("N", &m2, &n, &nrhs, la, &m2, lb, &m2, work, &lwork, &info);
    print("sgelst", info, lb, sizeof(float) * 2 * N * 3);

    /* cgesdd and cheevd: complex single precision calls real sgemm_ inside */
    cfloat *ca = malloc(sizeof(cfloat) * N * N), *cu = malloc(sizeof(cfloat) * N * N),
           *cv = malloc(sizeof(cfloat) * N * N), *cw = malloc(sizeof(cfloat) * 4 * N * N);
    for (int i = 0; i < N * N; i++)
        ca[i] = rnd() + I * rnd();
    float *s = malloc(sizeof(float) * N), *rwork = malloc(sizeof(float) * 8 * N * N);
    lwork = 4 * N * N;
    cgesdd_("A", &n, &n, ca, &n, s, cu, &n, cv, &n, cw, &lwork, rwork, iwork, &info);
    print("cgesdd", info, s, sizeof(float) * N);
    print("cgesdd.u", info, cu, sizeof(cfloat) * N * N);
    for (int i = 0; i < N; i++)
        for (int j = 0; j <= i; j++) {
            cfloat z = rnd() + I * (i == j ? 0.0f : rnd());
            ca[j * N + i] = z;
            ca[i * N + j] = conjf(z);
        }
    int lrwork = 1 + 5 * N + 2 * N * N;
    liwork = 3 + 5 * N;
    cheevd_("V", "L", &n, ca, &n, w, cw, &lwork, rwork, &lrwork, iwork, &liwork, &info);
    print("cheevd", info, w, sizeof(float) * N);

    /* The program's own product: lowered under the shim, plain without. */
    float *x = matrix(N, N), *y = matrix(N, N), *got = malloc(sizeof(float) * N * N),
          *want = malloc(sizeof(float) * N * N);
    cblas_sgemm(102, 111, 111, n, n, n, 1.0f, x, n, y, n, 0.0f, got, n);
    int shim = dlsym(RTLD_DEFAULT, "ampshim_version") != NULL;
    void *lib = dlopen("libblas.so.3", RTLD_NOW | RTLD_NOLOAD);
    void (*real_sgemm)(int, int, int, int, int, int, float, const float *, int, const float *,
                       int, float, float *, int) =
        lib ? (void (*)(int, int, int, int, int, int, float, const float *, int, const float *,
                        int, float, float *, int))dlsym(lib, "cblas_sgemm")
            : NULL;
    if (!real_sgemm) {
        printf("FAIL: no libblas.so.3 to ask\n");
        return 1;
    }
    if (shim)
        for (int i = 0; i < N * N; i++) {
            x[i] = oracle_bf16(x[i]);
            y[i] = oracle_bf16(y[i]);
        }
    real_sgemm(102, 111, 111, n, n, n, 1.0f, x, n, y, n, 0.0f, want, n);
    int same = memcmp(got, want, sizeof(float) * N * N) == 0;
    printf("own cblas_sgemm: %s\n", same ? "as expected (lowered under the shim, plain without)"
                                         : "WRONG");
    return same ? 0 : 1;
}
