/* An ordinary single-precision BLAS program, linked to OpenBLAS only (never to
 * ampshim), run under LD_PRELOAD=libampshim.so. Every call goes through the
 * shim; the expected answer comes from the real OpenBLAS function reached
 * through a dlopen handle (which the shim cannot intercept), on operands this
 * test rounds itself. Results are compared bit for bit, padding included.
 *
 * usage: blas_check MODE [DTYPE]
 *   identical     every call equals the real routine on the original data
 *   lower DTYPE   matrix products (gemm symm syrk syr2k trmm) equal the real
 *                 routine on operands rounded to DTYPE; gemv ger dot nrm2 asum
 *                 trsm are unchanged (the default CPU policy)
 *   lower-all DTYPE  as lower, and the vector routines are lowered too
 *                 (run with AMPSHIM_POLICY lowering mv, addmv, addr, dot, norm)
 * AMPSHIM_OUTPUT=round in the environment adds output rounding to the
 * expectation. Built twice: LP64 against libopenblas, ILP64 (-DCHECK_ILP64)
 * against Debian's libopenblas64, which exports the same plain names. */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/blas/blas_width.h"

/* The other prototypes as a C program would declare them (cblas.h / Fortran). */
void cblas_ssymm(int, int, int, blasint, blasint, float, const float *, blasint, const float *,
                 blasint, float, float *, blasint);
void cblas_ssyrk(int, int, int, blasint, blasint, float, const float *, blasint, float, float *,
                 blasint);
void cblas_ssyr2k(int, int, int, blasint, blasint, float, const float *, blasint, const float *,
                  blasint, float, float *, blasint);
void cblas_strmm(int, int, int, int, int, blasint, blasint, float, const float *, blasint, float *,
                 blasint);
void cblas_strsm(int, int, int, int, int, blasint, blasint, float, const float *, blasint, float *,
                 blasint);
void cblas_sgemv(int, int, blasint, blasint, float, const float *, blasint, const float *, blasint,
                 float, float *, blasint);
void cblas_sger(int, blasint, blasint, float, const float *, blasint, const float *, blasint,
                float *, blasint);
float cblas_sdot(blasint, const float *, blasint, const float *, blasint);
float cblas_snrm2(blasint, const float *, blasint);
float cblas_sasum(blasint, const float *, blasint);
void ssyrk_(const char *, const char *, const blasint *, const blasint *, const float *,
            const float *, const blasint *, const float *, float *, const blasint *);
void strmm_(const char *, const char *, const char *, const char *, const blasint *,
            const blasint *, const float *, const float *, const blasint *, float *,
            const blasint *);
float sdot_(const blasint *, const float *, const blasint *, const float *, const blasint *);

enum { ROW = 101, COL = 102, NOTRANS = 111, TRANS = 112, UPPER = 121, LOWER = 122, NONUNIT = 131,
       UNIT = 132, LEFT = 141, RIGHT = 142 };

static void *real_lib;
static int failures, checks;
static enum { MODE_IDENTICAL, MODE_LOWER, MODE_LOWER_ALL } mode;
static int dtype_fp16, dtype_tf32, output_round;

static void *real(const char *name)
{
    void *p = dlsym(real_lib, name);
    if (!p) {
        fprintf(stderr, "blas_check: %s not in %s\n", name, REAL_LIBRARY);
        exit(1);
    }
    return p;
}

/* The test's own rounding: integer RNE for bf16/tf32, the compiler's
 * _Float16 conversion for fp16 (an independent oracle for the shim's). */
static float round_value(float x)
{
    if (dtype_fp16)
        return (float)(_Float16)x;
    uint32_t u;
    memcpy(&u, &x, 4);
    unsigned drop = dtype_tf32 ? 13 : 16;
    if ((u & 0x7fffffffu) <= 0x7f800000u)
        u = (u + ((1u << (drop - 1)) - 1) + ((u >> drop) & 1u)) & ~((1u << drop) - 1);
    memcpy(&x, &u, 4);
    return x;
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static float random_value(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    /* Full 24-bit mantissas in [-2, 2): never representable in bf16/fp16. */
    return (float)((int64_t)(rng_state >> 40) - (1 << 23)) / (float)(1 << 22);
}

static float *random_array(size_t n)
{
    float *p = malloc(n * sizeof *p);
    for (size_t i = 0; i < n; i++)
        p[i] = random_value();
    return p;
}

static float *copy_array(const float *src, size_t n)
{
    float *p = malloc(n * sizeof *p);
    memcpy(p, src, n * sizeof *p);
    return p;
}

static float *rounded_copy(const float *src, size_t n, int lowered)
{
    float *p = copy_array(src, n);
    if (lowered)
        for (size_t i = 0; i < n; i++)
            p[i] = round_value(p[i]);
    return p;
}

/* Rounds the stored region of an output: lines x inner, optionally a
 * triangle (tri: 0 full, 1 inner <= line, 2 inner >= line). */
static void round_region(float *p, int64_t inner, int64_t lines, int64_t ld, int tri)
{
    for (int64_t j = 0; j < lines; j++)
        for (int64_t i = 0; i < inner; i++)
            if (tri == 0 || (tri == 1 && i <= j) || (tri == 2 && i >= j))
                p[j * ld + i] = round_value(p[j * ld + i]);
}

static void expect_same(const char *what, const float *got, const float *want, size_t n)
{
    checks++;
    for (size_t i = 0; i < n; i++)
        if (memcmp(&got[i], &want[i], 4) != 0) {
            failures++;
            printf("FAIL %s: element %zu is %.9g, expected %.9g\n", what, i, got[i], want[i]);
            return;
        }
}

/* A lowered result should differ from plain fp32: proves the test can fail. */
static void expect_differs(const char *what, const float *got, const float *fp32, size_t n)
{
    checks++;
    if (memcmp(got, fp32, n * sizeof *got) == 0) {
        failures++;
        printf("FAIL %s: result equals plain fp32; nothing was lowered\n", what);
    }
}

/* Checks one call: run(hooked) on the original operands against
 * run(real) on rounded operands. ins are the multiplicands; out is
 * the output array (ld-padded), accumulating when beta != 0. */
struct call {
    const char *name;
    int lowered; /* the policy lowers this call */
    float *in[2];
    size_t in_len[2];
    float *out;
    size_t out_len;
    int64_t out_inner, out_lines, out_ld;
    int out_tri, out_read;
    void (*run)(const struct call *c, int use_real, float *const in[2], float *out);
};

static void check_call(const struct call *c)
{
    float *in_orig[2] = {c->in[0], c->in[1]};
    float *in_keep[2];
    for (int i = 0; i < 2; i++)
        in_keep[i] = c->in[i] ? copy_array(c->in[i], c->in_len[i]) : NULL;
    int lowered = c->lowered && mode != MODE_IDENTICAL;

    /* Expected: the real routine on rounded operands. */
    float *in_round[2];
    for (int i = 0; i < 2; i++)
        in_round[i] = c->in[i] ? rounded_copy(c->in[i], c->in_len[i], lowered) : NULL;
    float *want = copy_array(c->out, c->out_len);
    if (lowered && output_round && c->out_read)
        round_region(want, c->out_inner, c->out_lines, c->out_ld, c->out_tri);
    c->run(c, 1, in_round, want);
    if (lowered && output_round)
        round_region(want, c->out_inner, c->out_lines, c->out_ld, c->out_tri);

    /* Plain fp32, for the sensitivity check. */
    float *fp32 = copy_array(c->out, c->out_len);
    float *in_plain[2];
    for (int i = 0; i < 2; i++)
        in_plain[i] = c->in[i] ? copy_array(c->in[i], c->in_len[i]) : NULL;
    c->run(c, 1, in_plain, fp32);

    /* Through the shim. */
    float *got = copy_array(c->out, c->out_len);
    c->run(c, 0, in_orig, got);

    char what[160];
    snprintf(what, sizeof what, "%s%s", c->name, lowered ? " (lowered)" : " (unchanged)");
    expect_same(what, got, want, c->out_len);
    if (lowered)
        expect_differs(what, got, fp32, c->out_len);
    for (int i = 0; i < 2; i++)
        if (in_keep[i] && c->in[i] != NULL) {
            char w[200];
            snprintf(w, sizeof w, "%s: input %d left untouched", c->name, i);
            expect_same(w, c->in[i], in_keep[i], c->in_len[i]);
        }
    for (int i = 0; i < 2; i++) {
        free(in_keep[i]);
        free(in_round[i]);
        free(in_plain[i]);
    }
    free(want);
    free(fp32);
    free(got);
}

/* ---- gemm ---- */

struct gemm_args {
    int layout, ta, tb;
    blasint m, n, k, lda, ldb, ldc;
    float alpha, beta;
    int fortran;
};
static struct gemm_args ga;

static void run_gemm(const struct call *c, int use_real, float *const in[2], float *out)
{
    (void)c;
    if (ga.fortran) {
        char ta = ga.ta == NOTRANS ? 'N' : 't', tb = ga.tb == NOTRANS ? 'n' : 'T';
        void (*f)(const char *, const char *, const blasint *, const blasint *, const blasint *,
                  const float *, const float *, const blasint *, const float *, const blasint *,
                  const float *, float *, const blasint *) = use_real ? real("sgemm_") : sgemm_;
        f(&ta, &tb, &ga.m, &ga.n, &ga.k, &ga.alpha, in[0], &ga.lda, in[1], &ga.ldb, &ga.beta, out,
          &ga.ldc);
        return;
    }
    void (*f)(int, int, int, blasint, blasint, blasint, float, const float *, blasint,
              const float *, blasint, float, float *, blasint) =
        use_real ? real("cblas_sgemm") : cblas_sgemm;
    f(ga.layout, ga.ta, ga.tb, ga.m, ga.n, ga.k, ga.alpha, in[0], ga.lda, in[1], ga.ldb, ga.beta,
      out, ga.ldc);
}

static void check_gemm(int fortran, int layout, int ta, int tb, int pad, float beta)
{
    ga = (struct gemm_args){layout, ta, tb, 37, 29, 53, 0, 0, 0, 1.25f, beta, fortran};
    int col = layout == COL;
    blasint a_inner = col == (ta == NOTRANS) ? ga.m : ga.k, a_lines = ga.m + ga.k - a_inner;
    blasint b_inner = col == (tb == NOTRANS) ? ga.k : ga.n, b_lines = ga.k + ga.n - b_inner;
    blasint c_inner = col ? ga.m : ga.n, c_lines = col ? ga.n : ga.m;
    ga.lda = a_inner + pad;
    ga.ldb = b_inner + 2 * pad;
    ga.ldc = c_inner + pad;
    struct call c = {.lowered = 1, .run = run_gemm, .out_inner = c_inner, .out_lines = c_lines,
                     .out_ld = ga.ldc, .out_read = beta != 0.0f};
    c.in_len[0] = (size_t)ga.lda * a_lines;
    c.in_len[1] = (size_t)ga.ldb * b_lines;
    c.out_len = (size_t)ga.ldc * c_lines;
    c.in[0] = random_array(c.in_len[0]);
    c.in[1] = random_array(c.in_len[1]);
    c.out = random_array(c.out_len);
    char name[128];
    snprintf(name, sizeof name, "%s %s ta=%c tb=%c pad=%d beta=%g", fortran ? "sgemm_" : "cblas_sgemm",
             col ? "col" : "row", ta == NOTRANS ? 'N' : 'T', tb == NOTRANS ? 'N' : 'T', pad, beta);
    c.name = name;
    check_call(&c);
    free(c.in[0]);
    free(c.in[1]);
    free(c.out);
}

/* ---- symm ---- */

struct symm_args {
    int layout, side, uplo;
    blasint m, n, lda, ldb, ldc;
    float alpha, beta;
};
static struct symm_args sa;

static void run_symm(const struct call *c, int use_real, float *const in[2], float *out)
{
    (void)c;
    void (*f)(int, int, int, blasint, blasint, float, const float *, blasint, const float *,
              blasint, float, float *, blasint) = use_real ? real("cblas_ssymm") : cblas_ssymm;
    f(sa.layout, sa.side, sa.uplo, sa.m, sa.n, sa.alpha, in[0], sa.lda, in[1], sa.ldb, sa.beta,
      out, sa.ldc);
}

static void check_symm(int layout, int side, int uplo, float beta)
{
    sa = (struct symm_args){layout, side, uplo, 31, 23, 0, 0, 0, 0.75f, beta};
    blasint ka = side == LEFT ? sa.m : sa.n;
    int col = layout == COL;
    sa.lda = ka + 3;
    sa.ldb = (col ? sa.m : sa.n) + 1;
    sa.ldc = (col ? sa.m : sa.n) + 2;
    struct call c = {.lowered = 1, .run = run_symm, .out_inner = col ? sa.m : sa.n,
                     .out_lines = col ? sa.n : sa.m, .out_ld = sa.ldc, .out_read = beta != 0.0f};
    c.in_len[0] = (size_t)sa.lda * ka;
    c.in_len[1] = (size_t)sa.ldb * (col ? sa.n : sa.m);
    c.out_len = (size_t)sa.ldc * c.out_lines;
    c.in[0] = random_array(c.in_len[0]);
    c.in[1] = random_array(c.in_len[1]);
    c.out = random_array(c.out_len);
    char name[128];
    snprintf(name, sizeof name, "cblas_ssymm %s side=%c uplo=%c beta=%g", col ? "col" : "row",
             side == LEFT ? 'L' : 'R', uplo == UPPER ? 'U' : 'L', beta);
    c.name = name;
    check_call(&c);
    free(c.in[0]);
    free(c.in[1]);
    free(c.out);
}

/* ---- syrk and syr2k ---- */

struct syrk_args {
    int layout, uplo, trans, two, fortran;
    blasint n, k, lda, ldc;
    float alpha, beta;
};
static struct syrk_args ka;

static void run_syrk(const struct call *c, int use_real, float *const in[2], float *out)
{
    (void)c;
    if (ka.two) {
        void (*f)(int, int, int, blasint, blasint, float, const float *, blasint, const float *,
                  blasint, float, float *, blasint) =
            use_real ? real("cblas_ssyr2k") : cblas_ssyr2k;
        f(ka.layout, ka.uplo, ka.trans, ka.n, ka.k, ka.alpha, in[0], ka.lda, in[1], ka.lda, ka.beta,
          out, ka.ldc);
    } else if (ka.fortran) {
        char uplo = ka.uplo == UPPER ? 'U' : 'l', trans = ka.trans == NOTRANS ? 'N' : 'T';
        void (*f)(const char *, const char *, const blasint *, const blasint *, const float *,
                  const float *, const blasint *, const float *, float *, const blasint *) =
            use_real ? real("ssyrk_") : ssyrk_;
        f(&uplo, &trans, &ka.n, &ka.k, &ka.alpha, in[0], &ka.lda, &ka.beta, out, &ka.ldc);
    } else {
        void (*f)(int, int, int, blasint, blasint, float, const float *, blasint, float, float *,
                  blasint) = use_real ? real("cblas_ssyrk") : cblas_ssyrk;
        f(ka.layout, ka.uplo, ka.trans, ka.n, ka.k, ka.alpha, in[0], ka.lda, ka.beta, out, ka.ldc);
    }
}

static void check_syrk(int two, int fortran, int layout, int uplo, int trans, float beta)
{
    ka = (struct syrk_args){layout, uplo, trans, two, fortran, 33, 41, 0, 0, 1.5f, beta};
    int col = layout == COL;
    blasint a_inner = col == (trans == NOTRANS) ? ka.n : ka.k, a_lines = ka.n + ka.k - a_inner;
    ka.lda = a_inner + 2;
    ka.ldc = ka.n + 1;
    struct call c = {.lowered = 1, .run = run_syrk, .out_inner = ka.n, .out_lines = ka.n,
                     .out_ld = ka.ldc, .out_read = beta != 0.0f};
    c.out_tri = (uplo == UPPER) == col ? 1 : 2;
    c.in_len[0] = c.in_len[1] = (size_t)ka.lda * a_lines;
    c.out_len = (size_t)ka.ldc * ka.n;
    c.in[0] = random_array(c.in_len[0]);
    c.in[1] = two ? random_array(c.in_len[1]) : NULL;
    c.out = random_array(c.out_len);
    char name[128];
    snprintf(name, sizeof name, "%s %s uplo=%c trans=%c beta=%g",
             two ? "cblas_ssyr2k" : fortran ? "ssyrk_" : "cblas_ssyrk", col ? "col" : "row",
             uplo == UPPER ? 'U' : 'L', trans == NOTRANS ? 'N' : 'T', beta);
    c.name = name;
    check_call(&c);
    free(c.in[0]);
    free(c.in[1]);
    free(c.out);
}

/* ---- trmm and trsm: B is input and output ---- */

struct trxm_args {
    int layout, side, uplo, transa, diag, solve, fortran;
    blasint m, n, lda, ldb;
    float alpha;
};
static struct trxm_args ta_;

static void run_trxm(const struct call *c, int use_real, float *const in[2], float *out)
{
    (void)c;
    /* B enters as the second operand: copy it into out, where it is updated. */
    int col = ta_.layout == COL;
    size_t lines = (size_t)(col ? ta_.n : ta_.m), inner = (size_t)(col ? ta_.m : ta_.n);
    for (size_t j = 0; j < lines; j++)
        memcpy(out + j * (size_t)ta_.ldb, in[1] + j * (size_t)ta_.ldb, inner * sizeof *out);
    if (ta_.fortran) {
        char side = ta_.side == LEFT ? 'L' : 'R', uplo = ta_.uplo == UPPER ? 'U' : 'L';
        char transa = ta_.transa == NOTRANS ? 'N' : 'T', diag = ta_.diag == UNIT ? 'U' : 'N';
        void (*f)(const char *, const char *, const char *, const char *, const blasint *,
                  const blasint *, const float *, const float *, const blasint *, float *,
                  const blasint *) = use_real ? real("strmm_") : strmm_;
        f(&side, &uplo, &transa, &diag, &ta_.m, &ta_.n, &ta_.alpha, in[0], &ta_.lda, out, &ta_.ldb);
        return;
    }
    void (*f)(int, int, int, int, int, blasint, blasint, float, const float *, blasint, float *,
              blasint);
    if (ta_.solve)
        f = use_real ? real("cblas_strsm") : cblas_strsm;
    else
        f = use_real ? real("cblas_strmm") : cblas_strmm;
    f(ta_.layout, ta_.side, ta_.uplo, ta_.transa, ta_.diag, ta_.m, ta_.n, ta_.alpha, in[0], ta_.lda,
      out, ta_.ldb);
}

static void check_trxm(int solve, int fortran, int layout, int side, int uplo, int transa, int diag)
{
    ta_ = (struct trxm_args){layout, side, uplo, transa, diag, solve, fortran, 27, 19, 0, 0, 0.5f};
    blasint kk = side == LEFT ? ta_.m : ta_.n;
    int col = layout == COL;
    ta_.lda = kk + 1;
    ta_.ldb = (col ? ta_.m : ta_.n) + 2;
    /* trsm is fp32 on the CPU: it must come out unchanged. */
    struct call c = {.lowered = !solve, .run = run_trxm, .out_inner = col ? ta_.m : ta_.n,
                     .out_lines = col ? ta_.n : ta_.m, .out_ld = ta_.ldb};
    c.in_len[0] = (size_t)ta_.lda * kk;
    c.in_len[1] = (size_t)ta_.ldb * c.out_lines;
    c.out_len = c.in_len[1];
    c.in[0] = random_array(c.in_len[0]);
    if (solve) /* a well-conditioned triangle: dominant diagonal */
        for (blasint i = 0; i < kk; i++)
            c.in[0][i * ta_.lda + i] = 8.0f + c.in[0][i * ta_.lda + i];
    c.in[1] = random_array(c.in_len[1]);
    c.out = random_array(c.out_len);
    char name[160];
    snprintf(name, sizeof name, "%s %s side=%c uplo=%c transa=%c diag=%c",
             solve ? "cblas_strsm" : fortran ? "strmm_" : "cblas_strmm", col ? "col" : "row",
             side == LEFT ? 'L' : 'R', uplo == UPPER ? 'U' : 'L', transa == NOTRANS ? 'N' : 'T',
             diag == UNIT ? 'U' : 'N');
    c.name = name;
    check_call(&c);
    free(c.in[0]);
    free(c.in[1]);
    free(c.out);
}

/* ---- vector routines: unchanged by default, lowered under lower-all ---- */

static int vec_kind, vec_layout, vec_trans;
static const blasint vm = 45, vn = 38, vinc = 2;

static void run_vec(const struct call *c, int use_real, float *const in[2], float *out)
{
    (void)c;
    switch (vec_kind) {
    case 0: { /* gemv: y = A x + 0.5 y */
        void (*f)(int, int, blasint, blasint, float, const float *, blasint, const float *,
                  blasint, float, float *, blasint) = use_real ? real("cblas_sgemv") : cblas_sgemv;
        f(vec_layout, vec_trans, vm, vn, 1.0f, in[0], vec_layout == COL ? vm : vn, in[1], vinc,
          0.5f, out, 1);
        break;
    }
    case 1: { /* ger: A += x y^T, A is the output */
        void (*f)(int, blasint, blasint, float, const float *, blasint, const float *, blasint,
                  float *, blasint) = use_real ? real("cblas_sger") : cblas_sger;
        f(vec_layout, vm, vn, 0.75f, in[0], 1, in[1], vinc, out, vec_layout == COL ? vm : vn);
        break;
    }
    case 2: { /* dot, Fortran and CBLAS */
        float (*f)(blasint, const float *, blasint, const float *, blasint) =
            use_real ? real("cblas_sdot") : cblas_sdot;
        float (*g)(const blasint *, const float *, const blasint *, const float *,
                   const blasint *) = use_real ? real("sdot_") : sdot_;
        blasint one = 1;
        out[0] = f(vn, in[0], 1, in[1], vinc);
        out[1] = g(&vn, in[0], &one, in[1], &vinc);
        break;
    }
    case 3: { /* nrm2 and asum */
        float (*f)(blasint, const float *, blasint) = use_real ? real("cblas_snrm2") : cblas_snrm2;
        float (*g)(blasint, const float *, blasint) = use_real ? real("cblas_sasum") : cblas_sasum;
        out[0] = f(vn, in[0], vinc);
        out[1] = g(vn, in[0], 1);
        break;
    }
    }
}

static void check_vectors(void)
{
    static const char *const names[] = {"cblas_sgemv", "cblas_sger", "cblas_sdot + sdot_",
                                        "cblas_snrm2 + cblas_sasum"};
    for (vec_kind = 0; vec_kind < 4; vec_kind++)
        for (int l = 0; l < (vec_kind < 2 ? 2 : 1); l++)
            for (int tr = 0; tr < (vec_kind == 0 ? 2 : 1); tr++) {
                vec_layout = l ? ROW : COL;
                vec_trans = tr ? TRANS : NOTRANS;
                struct call c = {.lowered = mode == MODE_LOWER_ALL, .run = run_vec};
                size_t big = (size_t)vm * vn;
                c.in_len[0] = vec_kind == 0 ? big : (size_t)vm * vinc;
                c.in_len[1] = (size_t)vm * vinc;
                c.in[0] = random_array(c.in_len[0]);
                c.in[1] = vec_kind == 3 ? NULL : random_array(c.in_len[1]);
                c.out_len = vec_kind == 1 ? big : vec_kind == 0 ? (size_t)vm : 2;
                c.out = random_array(c.out_len);
                if (vec_kind == 0) {
                    c.out_inner = tr ? vn : vm;
                    c.out_lines = 1;
                    c.out_ld = c.out_inner;
                    c.out_read = 1;
                } else if (vec_kind == 1) {
                    c.out_inner = l ? vn : vm;
                    c.out_lines = l ? vm : vn;
                    c.out_ld = c.out_inner;
                    c.out_read = 1;
                } else {
                    c.out_inner = 2;
                    c.out_lines = 1;
                    c.out_ld = 2;
                }
                char name[96];
                snprintf(name, sizeof name, "%s %s%s", names[vec_kind], l ? "row" : "col",
                         tr ? " trans" : "");
                c.name = name;
                check_call(&c);
                free(c.in[0]);
                free(c.in[1]);
                free(c.out);
            }
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: blas_check identical|lower|lower-all [bf16|fp16|tf32]\n");
        return 2;
    }
    mode = strcmp(argv[1], "lower") == 0       ? MODE_LOWER
           : strcmp(argv[1], "lower-all") == 0 ? MODE_LOWER_ALL
                                               : MODE_IDENTICAL;
    if (mode != MODE_IDENTICAL && argc > 2) {
        dtype_fp16 = strcmp(argv[2], "fp16") == 0;
        dtype_tf32 = strcmp(argv[2], "tf32") == 0;
    }
    const char *out = getenv("AMPSHIM_OUTPUT");
    output_round = out && strcmp(out, "round") == 0;
    real_lib = dlopen(REAL_LIBRARY, RTLD_NOW | RTLD_NOLOAD);
    if (!real_lib) {
        fprintf(stderr, "blas_check: %s is not loaded: %s\n", REAL_LIBRARY, dlerror());
        return 1;
    }

    /* Every mode runs under the preload: "identical" must not pass because
     * the preload failed and no shim is there. */
    checks++;
    if (!dlsym(RTLD_DEFAULT, "ampshim_version")) {
        printf("FAIL: libampshim.so is not loaded (the test runs under LD_PRELOAD)\n");
        failures++;
    }

    static const float betas[] = {0.0f, 0.5f};
    for (int f = 0; f < 2; f++)
        for (int l = 0; l < (f ? 1 : 2); l++)
            for (int a = 0; a < 2; a++)
                for (int b = 0; b < 2; b++)
                    for (int pad = 0; pad < 2; pad++)
                        for (int be = 0; be < 2; be++)
                            check_gemm(f, l ? ROW : COL, a ? TRANS : NOTRANS, b ? TRANS : NOTRANS,
                                       pad * 3, betas[be]);
    for (int l = 0; l < 2; l++)
        for (int s = 0; s < 2; s++)
            for (int u = 0; u < 2; u++)
                for (int be = 0; be < 2; be++)
                    check_symm(l ? ROW : COL, s ? RIGHT : LEFT, u ? LOWER : UPPER, betas[be]);
    for (int two = 0; two < 2; two++)
        for (int f = 0; f < (two ? 1 : 2); f++)
            for (int l = 0; l < (f ? 1 : 2); l++)
                for (int u = 0; u < 2; u++)
                    for (int t = 0; t < 2; t++)
                        for (int be = 0; be < 2; be++)
                            check_syrk(two, f, l ? ROW : COL, u ? LOWER : UPPER,
                                       t ? TRANS : NOTRANS, betas[be]);
    for (int solve = 0; solve < 2; solve++)
        for (int f = 0; f < (solve ? 1 : 2); f++)
            for (int l = 0; l < (f ? 1 : 2); l++)
                for (int s = 0; s < 2; s++)
                    for (int u = 0; u < 2; u++)
                        for (int t = 0; t < 2; t++)
                            for (int d = 0; d < 2; d++)
                                check_trxm(solve, f, l ? ROW : COL, s ? RIGHT : LEFT,
                                           u ? LOWER : UPPER, t ? TRANS : NOTRANS,
                                           d ? UNIT : NONUNIT);
    check_vectors();

    printf("blas_check %s%s%s: %d passed, %d failed\n", argv[1], argc > 2 ? " " : "",
           argc > 2 ? argv[2] : "", checks - failures, failures);
    return failures ? 1 : 0;
}
