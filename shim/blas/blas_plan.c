/* Operand planning for the CPU BLAS hooks: what each call reads and writes,
 * and rounding an operand. It only plans: shim/blas/blas_execute.c runs a
 * planned call (audit, native or emulated) and calls nothing back here but
 * the rounding. */
#include "shim/blas/blas_plan.h"

#include <string.h>

char amp_cblas_layout(int v)
{
    return v == 102 ? 'C' : v == 101 ? 'R' : 0;
}

char amp_cblas_trans(int v)
{
    return v == 111 ? 'N' : v == 112 ? 'T' : v == 113 ? 'C' : 0;
}

char amp_cblas_uplo(int v)
{
    return v == 121 ? 'U' : v == 122 ? 'L' : 0;
}

char amp_cblas_side(int v)
{
    return v == 141 ? 'L' : v == 142 ? 'R' : 0;
}

char amp_cblas_diag(int v)
{
    return v == 131 ? 'N' : v == 132 ? 'U' : 0;
}

char amp_f77_char(const char *p)
{
    if (!p)
        return 0;
    char ch = *p;
    return ch >= 'a' && ch <= 'z' ? (char)(ch - 'a' + 'A') : ch;
}

static int64_t max1(int64_t v)
{
    return v > 1 ? v : 1;
}

/* A rows x cols matrix in the given layout. Returns 0 when ld is too small. */
static int set_matrix(struct amp_operand *o, const float *p, char layout, int64_t rows,
                      int64_t cols, int64_t ld)
{
    o->p = (float *)p;
    o->inner = layout == 'C' ? rows : cols;
    o->outer = layout == 'C' ? cols : rows;
    o->ld = ld;
    o->line_len = o->inner;
    o->tri = AMP_TRI_FULL;
    o->skip_diag = 0;
    o->free_dir = AMP_FREE_EITHER;
    if (!p || ld < max1(o->inner))
        return 0;
    if (o->ld == o->inner) { /* contiguous: one long line */
        o->inner *= o->outer;
        o->outer = 1;
        o->ld = o->inner;
    }
    return 1;
}

/* The referenced triangle of a square n x n matrix. Column-major upper keeps
 * row <= column, i.e. inner index <= line index; row major mirrors that. */
static int set_triangle(struct amp_operand *o, const float *p, char layout, char uplo, int64_t n,
                        int64_t ld, int unit_diag)
{
    o->p = (float *)p;
    o->inner = o->outer = o->line_len = n;
    o->ld = ld;
    o->tri = (uplo == 'U') == (layout == 'C') ? AMP_TRI_LE : AMP_TRI_GE;
    o->skip_diag = (uint8_t)unit_diag;
    o->free_dir = AMP_FREE_EITHER;
    return p && ld >= max1(n);
}

static int set_vector(struct amp_operand *o, const float *p, int64_t n, int64_t inc)
{
    int64_t step = inc < 0 ? -inc : inc;
    o->p = (float *)p;
    o->tri = AMP_TRI_FULL;
    o->skip_diag = 0;
    o->free_dir = AMP_FREE_EITHER;
    if (step == 1) {
        o->inner = n;
        o->outer = 1;
        o->ld = n;
        o->line_len = n;
    } else {
        o->inner = o->line_len = 1;
        o->outer = n;
        o->ld = step;
    }
    return p && inc != 0;
}

/* The free index of a multiplicand stored as `layout`: a left factor
 * (op(A) = A, or A transposed) has it in its rows, a right factor in its
 * columns. Column major, an untransposed left factor's rows run along each
 * stored line (a column); each of transposing, row major and being the
 * right factor turns that around. */
static uint8_t free_dir(char layout, int transposed, int right)
{
    return ((layout == 'C') ^ transposed ^ right) ? AMP_FREE_WITHIN : AMP_FREE_ACROSS;
}

static void add_input(struct amp_blas_call *c, const float **arg, int in_place)
{
    c->arg[c->n_in] = arg;
    c->in_place[c->n_in] = (uint8_t)in_place;
    c->n_in++;
}

/* What the audit records of a call: its flops and shape. */
static void set_work(struct amp_blas_call *c, double flops, int64_t m, int64_t n, int64_t k)
{
    c->flops = flops;
    c->shape[0] = m;
    c->shape[1] = n;
    c->shape[2] = k;
}

static int is_trans(char t)
{
    return t == 'N' || t == 'T' || t == 'C';
}

int amp_plan_gemm(struct amp_blas_call *c, char layout, char ta, char tb, int64_t m, int64_t n,
                  int64_t k, float alpha, const float **a, int64_t lda, const float **b,
                  int64_t ldb, float beta, float *cm, int64_t ldc)
{
    if (!layout || !is_trans(ta) || !is_trans(tb) || m < 0 || n < 0 || k < 0)
        return 0;
    int ok = set_matrix(&c->in[0], *a, layout, ta == 'N' ? m : k, ta == 'N' ? k : m, lda) &
             set_matrix(&c->in[1], *b, layout, tb == 'N' ? k : n, tb == 'N' ? n : k, ldb) &
             set_matrix(&c->acc, cm, layout, m, n, ldc);
    c->in[0].free_dir = free_dir(layout, ta != 'N', 0);
    c->in[1].free_dir = free_dir(layout, tb != 'N', 1);
    add_input(c, a, 0);
    add_input(c, b, 0);
    c->has_acc = 1;
    c->acc_read = beta != 0.0f;
    c->native_kind = AMP_NATIVE_GEMM;
    c->gemm = (struct amp_gemm_args){layout, ta, tb, m, n, k, ldc, alpha, beta, cm, lda, ldb};
    set_work(c, 2.0 * (double)m * (double)n * (double)k, m, n, k);
    return ok && m && n && k && alpha != 0.0f;
}

int amp_plan_gemv(struct amp_blas_call *c, char layout, char trans, int64_t m, int64_t n,
                  float alpha, const float **a, int64_t lda, const float **x, int64_t incx,
                  float beta, float *y, int64_t incy)
{
    if (!layout || !is_trans(trans) || m < 0 || n < 0)
        return 0;
    int64_t lenx = trans == 'N' ? n : m, leny = trans == 'N' ? m : n;
    int ok = set_matrix(&c->in[0], *a, layout, m, n, lda) & set_vector(&c->in[1], *x, lenx, incx) &
             set_vector(&c->acc, y, leny, incy);
    c->in[0].free_dir = free_dir(layout, trans != 'N', 0);
    add_input(c, a, 0);
    add_input(c, x, 0);
    c->has_acc = 1;
    c->acc_read = beta != 0.0f;
    set_work(c, 2.0 * (double)m * (double)n, m, n, 0);
    return ok && m && n && alpha != 0.0f;
}

int amp_plan_ger(struct amp_blas_call *c, char layout, int64_t m, int64_t n, float alpha,
                 const float **x, int64_t incx, const float **y, int64_t incy, float *a,
                 int64_t lda)
{
    if (!layout || m < 0 || n < 0)
        return 0;
    int ok = set_vector(&c->in[0], *x, m, incx) & set_vector(&c->in[1], *y, n, incy) &
             set_matrix(&c->acc, a, layout, m, n, lda);
    add_input(c, x, 0);
    add_input(c, y, 0);
    c->has_acc = 1;
    c->acc_read = 1;
    set_work(c, 2.0 * (double)m * (double)n, m, n, 0);
    return ok && m && n && alpha != 0.0f;
}

int amp_plan_vectors(struct amp_blas_call *c, int64_t n, const float **x, int64_t incx,
                     const float **y, int64_t incy)
{
    if (n <= 0)
        return 0;
    int ok = set_vector(&c->in[0], *x, n, incx);
    add_input(c, x, 0);
    if (y) {
        ok &= set_vector(&c->in[1], *y, n, incy);
        add_input(c, y, 0);
    } else {
        ok &= incx > 0; /* nrm2 and asum do nothing for incx <= 0 */
    }
    set_work(c, 2.0 * (double)n, n, 0, 0);
    return ok;
}

int amp_plan_symm(struct amp_blas_call *c, char layout, char side, char uplo, int64_t m, int64_t n,
                  float alpha, const float **a, int64_t lda, const float **b, int64_t ldb,
                  float beta, float *cm, int64_t ldc)
{
    if (!layout || (side != 'L' && side != 'R') || (uplo != 'U' && uplo != 'L') || m < 0 || n < 0)
        return 0;
    int ok = set_triangle(&c->in[0], *a, layout, uplo, side == 'L' ? m : n, lda, 0) &
             set_matrix(&c->in[1], *b, layout, m, n, ldb) &
             set_matrix(&c->acc, cm, layout, m, n, ldc);
    c->in[1].free_dir = free_dir(layout, 0, side == 'L'); /* A B: B's columns; B A: its rows */
    add_input(c, a, 0);
    add_input(c, b, 0);
    c->has_acc = 1;
    c->acc_read = beta != 0.0f;
    set_work(c, 2.0 * (double)m * (double)n * (double)(side == 'L' ? m : n), m, n, 0);
    return ok && m && n && alpha != 0.0f;
}

int amp_plan_syrk(struct amp_blas_call *c, char layout, char uplo, char trans, int64_t n, int64_t k,
                  float alpha, const float **a, int64_t lda, const float **b, int64_t ldb,
                  float beta, float *cm, int64_t ldc)
{
    if (!layout || (uplo != 'U' && uplo != 'L') || !is_trans(trans) || n < 0 || k < 0)
        return 0;
    int64_t rows = trans == 'N' ? n : k, cols = trans == 'N' ? k : n;
    int ok = set_matrix(&c->in[0], *a, layout, rows, cols, lda) &
             set_triangle(&c->acc, cm, layout, uplo, n, ldc, 0);
    c->in[0].free_dir = free_dir(layout, trans != 'N', 0); /* op(A) op(A)^T: A's n side */
    add_input(c, a, 0);
    if (b) { /* syr2k */
        ok &= set_matrix(&c->in[1], *b, layout, rows, cols, ldb);
        c->in[1].free_dir = c->in[0].free_dir;
        add_input(c, b, 0);
    } else {
        c->native_kind = AMP_NATIVE_SYRK;
        c->gemm =
            (struct amp_gemm_args){layout, trans, uplo, n, n, k, ldc, alpha, beta, cm, lda, lda};
    }
    c->has_acc = 1;
    c->acc_read = beta != 0.0f;
    set_work(c, (b ? 2.0 : 1.0) * (double)n * (double)(n + 1) * (double)k, n, n, k);
    return ok && n && k && alpha != 0.0f;
}

int amp_plan_trmm(struct amp_blas_call *c, char layout, char side, char uplo, char transa,
                  char diag, int64_t m, int64_t n, float alpha, const float **a, int64_t lda,
                  float *b, int64_t ldb)
{
    if (!layout || (side != 'L' && side != 'R') || (uplo != 'U' && uplo != 'L') ||
        !is_trans(transa) || (diag != 'U' && diag != 'N') || m < 0 || n < 0)
        return 0;
    int ok = set_triangle(&c->in[0], *a, layout, uplo, side == 'L' ? m : n, lda, diag == 'U') &
             set_matrix(&c->in[1], b, layout, m, n, ldb);
    c->in[1].free_dir = free_dir(layout, 0, side == 'L');
    add_input(c, a, 0);
    /* B is both multiplicand and output: rounding it in place loses nothing
     * the routine would not overwrite. */
    add_input(c, NULL, 1);
    c->acc = c->in[1];
    c->has_acc = 1;
    c->acc_read = 0;
    set_work(c, (double)m * (double)n * (double)(side == 'L' ? m : n), m, n, 0);
    return ok && m && n && alpha != 0.0f;
}

void amp_cpu_time_add(const struct amp_blas_call *c)
{
    amp_cpu_time_record(c->hook, c->flops, amp_now_ns() - c->t0,
                        c->outcome == AMP_OUTCOME_LOWERED && !c->audit_only, c->timed_caller);
}

void amp_blas_round_output(struct amp_blas_call *c)
{
    c->converted += amp_operand_round(&c->acc, c->acc.p, c->dtype);
}
