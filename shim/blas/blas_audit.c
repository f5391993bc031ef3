/* The accuracy audit of a lowered BLAS call: the same call run twice, once
 * lowered (native or emulated, as it would have run) and once as the program
 * made it (the real routine on the caller's own fp32 operands and
 * accumulator), the two outputs compared over the elements the routine
 * writes. Shadow memory is taken for the call and given back at its end:
 * the accumulator's referenced elements twice (its value before the call,
 * then the lowered output). When it cannot be had the call is simply not
 * audited. See blas_plan.h for the order of the steps. */
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shim/blas/blas_audit.h"
#include "shim/blas/native_onednn.h"
#include "kernels/cpu/compare.h"
#include "runtime/site_time.h"
#include "shim/blas/blas_native.h"
#include "shim/resolve.h"

/* Elements of an operand the routine references. */
static size_t referenced(const struct amp_operand *o)
{
    size_t n = 0;
    for (int64_t line = 0; line < o->outer; line++) {
        int64_t lo, hi;
        if (amp_operand_line(o, line, &lo, &hi))
            n += (size_t)(hi - lo);
    }
    return n;
}

/* Copies the referenced elements of o into a compact buffer (out = 1), or
 * back from one (out = 0). */
static void copy_referenced(const struct amp_operand *o, float *compact, int out)
{
    size_t at = 0;
    for (int64_t line = 0; line < o->outer; line++) {
        int64_t lo, hi;
        if (!amp_operand_line(o, line, &lo, &hi))
            continue;
        float *p = o->p + line * o->ld + lo;
        size_t n = (size_t)(hi - lo);
        if (out)
            memcpy(compact + at, p, n * sizeof *p);
        else
            memcpy(p, compact + at, n * sizeof *p);
        at += n;
    }
}

/* A lowered call the audit does not run both ways runs as the program
 * keeps it: as made with AMPSHIM_AUDIT=1 (the audit never changes the
 * program's results), lowered with follow, and with auto as its site
 * stands. Returns whether it runs lowered. */
static int not_audited(struct amp_blas_call *c)
{
    /* Without native units the program always keeps the fp32 result. */
    int lowered = !c->audit_only && amp_audit_keeps_lowered(c->audit_site, c->flops);
    if (lowered)
        amp_audit_ran_lowered(c->audit_site, c->flops);
    return lowered;
}

/* ---- auto's sampled check of a native gemm ----
 *
 * Under AMPSHIM_AUDIT=auto a gemm the native executor runs is not run twice
 * in full: it runs lowered, and the real fp32 routine recomputes a sample
 * of the output's columns (1 in 64, at least AMP_CHECK_MIN_COLS; every
 * column of a narrow output) and, of a gemm's tall output, 1 in 8 of its
 * rows (at least AMP_CHECK_MIN_ROWS, in 8 blocks spread over them), which
 * are compared with the lowered ones. Recomputing every row made the real
 * routine pack all of op(A) for a few columns: a check of a 512x1024x1024
 * product cost 15% of the lowered call. When the site's state lets the program keep the lowered result (probation and lowered)
 * and the check passes, it keeps it; otherwise the whole call runs again as
 * made (C put back first when the call reads it) and the program keeps
 * fp32's result, as an audit over tolerance leaves it. */
#define AMP_CHECK_MIN_COLS 8
#define AMP_CHECK_SHARE 64
#define AMP_CHECK_MIN_ROWS 128
#define AMP_CHECK_ROW_SHARE 8
#define AMP_CHECK_ROW_BLOCKS 8

/* The most a check or a pay check copies aside (the output before the
 * call, and a pay check's lowered output): 256 MiB. A larger output is not
 * checked: the program's memory is not doubled for a measurement. */
#define AMP_CHECK_SHADOW_MAX ((size_t)256 << 20)

enum { FORM_CBLAS, FORM_F77 };
static const uint8_t hook_form[AMP_HOOK_COUNT] = {
#define AMP_X_FORM(sym, routine, KIND, FORM, INTS, op, op_beta) [AMP_HOOK_##sym] = FORM_##FORM,
    AMPSHIM_HOOK_LIST_BLAS(AMP_X_FORM)
#undef AMP_X_FORM
};

/* The sample of c's output to recompute: its columns in column-major
 * terms (a row-major C is the column-major C^T = op(B)^T op(A)^T), strided
 * where the operand they come from lets a leading dimension step over the
 * others, else one block; `turn` moves the sample from check to check. */
static int64_t sample_columns(int64_t n)
{
    int64_t r = n <= 2 * AMP_CHECK_MIN_COLS ? n : n / AMP_CHECK_SHARE;
    return r < AMP_CHECK_MIN_COLS && n > r ? AMP_CHECK_MIN_COLS : r;
}

/* The sgemm hook of a syrk hook's family and form (cblas_ssyrk64_:
 * cblas_sgemm64_), or -1. */
static int gemm_of(enum amp_hook_id hook)
{
    static _Atomic int16_t found[AMP_HOOK_COUNT]; /* hook + 1, or -1 */
    int16_t f = atomic_load_explicit(&found[hook], memory_order_relaxed);
    if (f)
        return f - 1 < 0 ? -1 : f - 1;
    char want[64];
    const char *name = amp_hook_names[hook], *at = strstr(name, "ssyrk");
    f = -1;
    if (at && strlen(name) < sizeof want) {
        snprintf(want, sizeof want, "%.*ssgemm%s", (int)(at - name), name, at + 5);
        for (int h = 0; h < AMP_HOOK_COUNT; h++)
            if (strcmp(amp_hook_names[h], want) == 0)
                f = (int16_t)(h + 1);
    }
    atomic_store_explicit(&found[hook], f, memory_order_relaxed);
    return f - 1 < 0 ? -1 : f - 1;
}

/* The real sgemm a check or the warm-up calls: the call's own routine for
 * a gemm, the sgemm of the same library, family and form for a syrk (NULL
 * where that library has none). */
static void *real_sgemm(const struct amp_blas_call *c)
{
    if (c->native_kind != AMP_NATIVE_SYRK)
        return c->real;
    int gemm = gemm_of(c->hook);
    return gemm >= 0 ? amp_real_beside((enum amp_hook_id)gemm, c->real) : NULL;
}

/* The sample's rows: all m of them, one block. */
static void every_row(struct amp_gemm_sample *s)
{
    s->blocks = 1;
    s->block_rows = s->m;
    s->block_step = 0;
}

/* A syrk's sample: a block of C's columns, in column-major terms (a
 * row-major syrk is the column-major one of the other triangle and the
 * other transposition). */
static int plan_syrk_sample(struct amp_blas_call *c, uint64_t turn)
{
    const struct amp_gemm_args *g = &c->gemm;
    struct amp_gemm_sample *s = &c->sample;
    int row = g->layout == 'R';
    s->gemm = real_sgemm(c);
    if (!s->gemm)
        return 0;
    int notrans = (g->ta == 'N') != row;
    s->uplo = (g->tb == 'U') != row ? 'U' : 'L';
    int64_t n = g->n, r = sample_columns(n);
    s->first = r < n ? (int64_t)((turn * (uint64_t)r) % (uint64_t)(n - r + 1)) : 0;
    s->ta = notrans ? 'N' : 'T';
    s->tb = notrans ? 'T' : 'N';
    s->m = n;
    s->n = r;
    s->k = g->k;
    s->a = c->in[0].p;
    s->lda = s->ldb = g->lda;
    every_row(s);
    s->b = notrans ? s->a + s->first : s->a + s->first * g->lda;
    s->c = g->c + s->first * g->ldc;
    s->cols = g->ldc;
    return 1;
}

static int plan_sample(struct amp_blas_call *c, uint64_t turn)
{
    const struct amp_gemm_args *g = &c->gemm;
    struct amp_gemm_sample *s = &c->sample;
    if (c->native_kind == AMP_NATIVE_SYRK)
        return plan_syrk_sample(c, turn);
    s->uplo = 0;
    s->first = 0;
    s->gemm = real_sgemm(c);
    int row = g->layout == 'R';
    s->ta = row ? g->tb : g->ta;
    s->tb = row ? g->ta : g->tb;
    s->m = row ? g->n : g->m;
    int64_t n = row ? g->m : g->n;
    s->k = g->k;
    s->a = row ? c->in[1].p : c->in[0].p;
    s->lda = row ? g->ldb : g->lda;
    const float *b = row ? c->in[0].p : c->in[1].p;
    int64_t ldb = row ? g->lda : g->ldb;
    int64_t r = sample_columns(n);
    s->n = r;
    /* 1 in 8 of the rows, in AMP_CHECK_ROW_BLOCKS blocks spread evenly
     * over them (a spread measured on one block of neighbouring rows, a
     * convolution's neighbouring pixels, is too small), moving within
     * their stretches from check to check. op(A)'s rows are A's rows
     * (A + row) or, transposed, its columns (A + row * lda). */
    every_row(s);
    int64_t row0 = 0, stretch = s->m / AMP_CHECK_ROW_BLOCKS;
    int64_t rows = stretch / AMP_CHECK_ROW_SHARE;
    rows = rows < AMP_CHECK_MIN_ROWS / AMP_CHECK_ROW_BLOCKS
               ? AMP_CHECK_MIN_ROWS / AMP_CHECK_ROW_BLOCKS
               : rows;
    if (rows < stretch) {
        row0 = (int64_t)((turn * (uint64_t)rows) % (uint64_t)(stretch - rows + 1));
        s->a += s->ta == 'N' ? row0 : row0 * s->lda;
        s->blocks = AMP_CHECK_ROW_BLOCKS;
        s->block_rows = rows;
        s->block_step = stretch;
        s->m = rows * AMP_CHECK_ROW_BLOCKS;
    }
    if (s->tb == 'N' && r < n) { /* columns of B: every (n / r)-th */
        int64_t step = n / r, first = (int64_t)(turn % (uint64_t)step);
        s->b = b + first * ldb;
        s->ldb = step * ldb;
        s->c = g->c + first * g->ldc + row0;
        s->cols = step * g->ldc;
    } else { /* rows of a transposed B: a block of them */
        int64_t first = r < n ? (int64_t)((turn * (uint64_t)r) % (uint64_t)(n - r + 1)) : 0;
        s->b = s->tb == 'N' ? b + first * ldb : b + first;
        s->ldb = ldb;
        s->c = g->c + first * g->ldc + row0;
        s->cols = g->ldc;
    }
    return 1;
}

/* The rows of sampled column j a check compares: a syrk's triangle. */
static void sample_rows(const struct amp_gemm_sample *s, int64_t j, int64_t *lo, int64_t *hi)
{
    int64_t col = s->first + j;
    *lo = s->uplo == 'L' ? col : 0;
    *hi = s->uplo == 'U' ? col + 1 : s->m;
}

/* The real routine on one block of the sample's rows (rows of op(A) from
 * a) into out, whose leading dimension is the sample's m. */
static void sample_block_fp32(const struct amp_blas_call *c, const float *a, int64_t rows,
                              float *out)
{
    const struct amp_gemm_sample *s = &c->sample;
    float alpha = c->gemm.alpha, beta = c->gemm.beta;
    if (hook_form[c->hook] == FORM_CBLAS) {
        typedef void (*cblas_fn)(int, int, int, int64_t, int64_t, int64_t, float, const float *,
                                 int64_t, const float *, int64_t, float, float *, int64_t);
        ((cblas_fn)s->gemm)(102 /* CblasColMajor */, s->ta == 'N' ? 111 : 112,
                            s->tb == 'N' ? 111 : 112, rows, s->n, s->k, alpha, a, s->lda, s->b,
                            s->ldb, beta, out, s->m);
        return;
    }
    typedef void (*f77_fn)(const char *, const char *, const void *, const void *, const void *,
                           const float *, const float *, const void *, const float *, const void *,
                           const float *, float *, const void *, size_t, size_t);
    int64_t v64[6] = {rows, s->n, s->k, s->lda, s->ldb, s->m};
    int32_t v32[6];
    for (int i = 0; i < 6; i++)
        v32[i] = (int32_t)v64[i];
    int wide = amp_hook_ilp64(c->hook);
#define AMP_INT(i) (wide ? (const void *)&v64[i] : (const void *)&v32[i])
    ((f77_fn)s->gemm)(&s->ta, &s->tb, AMP_INT(0), AMP_INT(1), AMP_INT(2), &alpha, a, AMP_INT(3),
                      s->b, AMP_INT(4), &beta, out, AMP_INT(5), 1, 1);
#undef AMP_INT
}

/* The real routine on the sample: C[rows I, columns J] into out (m x n,
 * dense), one call per block of rows. */
static void sample_fp32(const struct amp_blas_call *c, float *out)
{
    const struct amp_gemm_sample *s = &c->sample;
    for (int64_t b = 0; b < s->blocks; b++) {
        int64_t row = b * s->block_step;
        sample_block_fp32(c, s->a + (s->ta == 'N' ? row : row * s->lda), s->block_rows,
                          out + b * s->block_rows);
    }
}

void amp_blas_warm_real(struct amp_blas_call *c)
{
    static _Atomic int warmed;
    if (atomic_load_explicit(&warmed, memory_order_relaxed) || atomic_exchange(&warmed, 1))
        return;
    /* 128: a 64^3 product took OpenBLAS 0.3.21's small-matrix path, which takes
     * no buffer (tests/stress/memory_runs_out.c) */
    enum { N = 128 };
    static float a[N * N], out[N * N];
    struct amp_blas_call w = *c;
    struct amp_gemm_sample *s = &w.sample;
    s->gemm = real_sgemm(c);
    if (!s->gemm)
        return;
    s->ta = s->tb = 'N';
    s->m = s->n = s->k = s->lda = s->ldb = N;
    every_row(s);
    s->a = s->b = a;
    w.gemm.alpha = 1.0f;
    w.gemm.beta = 0.0f;
    sample_fp32(&w, out);
}

/* Whether auto checks this call by its sample rather than running it twice. */
static int sampled(const struct amp_blas_call *c)
{
    return amp_audit_auto() && !c->audit_only && c->real && amp_blas_native_takes(c) &&
           !amp_live_load(&amp_rt.cfg.output_round) && c->gemm.k > 0;
}

/* The sample's rows of C, column by column, into out (m x n, dense). */
static void gather_sample(const struct amp_gemm_sample *s, float *out)
{
    for (int64_t j = 0; j < s->n; j++)
        for (int64_t b = 0; b < s->blocks; b++)
            memcpy(out + j * s->m + b * s->block_rows, s->c + j * s->cols + b * s->block_step,
                   (size_t)s->block_rows * sizeof(float));
}

/* Sets up a check: the sample's before-values (its reference starts from
 * them) and, when the call reads C, all of C for a run again as made. */
static int check_begin(struct amp_blas_call *c)
{
    uint64_t turn = atomic_load_explicit(&c->audit_site->audited, memory_order_relaxed);
    if (!plan_sample(c, turn))
        return 0;
    const struct amp_gemm_sample *s = &c->sample;
    /* The shadow: C as it was (when read), the reference, the lowered
     * sample gathered (m x n each). */
    size_t before = c->acc_read ? referenced(&c->acc) : 0, ref = (size_t)(s->m * s->n);
    if (ref > SIZE_MAX / sizeof(float) / 4 || before > SIZE_MAX / sizeof(float) / 4 - 2 * ref ||
        (before + 2 * ref) * sizeof(float) > AMP_CHECK_SHADOW_MAX)
        return 0;
    c->shadow = amp_shadow_alloc((before + 2 * ref) * sizeof(float));
    if (!c->shadow)
        return 0;
    c->shadow_elems = before;
    if (before)
        copy_referenced(&c->acc, c->shadow, 1);
    if (c->acc_read)
        gather_sample(s, c->shadow + before);
    enum amp_auto_state st =
        amp_auto_state_of(atomic_load_explicit(&c->audit_site->auto_state, memory_order_acquire));
    c->check_keeps = st == AMP_AUTO_PROBATION ||
                     (st == AMP_AUTO_LOWERED && !amp_audit_slow_size(c->audit_site, c->flops));
    c->check = 1;
    c->audit_mark = amp_cpu_now_ns(); /* the lowered run's CPU time, for a pay check */
    c->made_mark = amp_onednn_made();
    return 1;
}

int amp_blas_audit_check(struct amp_blas_call *c)
{
    c->check = 0;
    const struct amp_gemm_sample *s = &c->sample;
    float *ref = c->shadow + c->shadow_elems, *lowered = ref + s->m * s->n;
    struct amp_audit_result r = {.flops = c->flops};
    c->ns_lowered = amp_cpu_now_ns() - c->audit_mark;
    gather_sample(s, lowered);
    sample_fp32(c, ref);
    const struct amp_compare_kernels *k = amp_compare();
    struct amp_compare_sums sums = {0};
    struct amp_audit_spread spread;
    amp_audit_spread_begin(&spread, s->m);
    for (int pass = 0; pass < 2; pass++)
        for (int64_t j = 0; j < s->n; j++) {
            int64_t lo, hi;
            sample_rows(s, j, &lo, &hi);
            const float *low = lowered + j * s->m + lo, *fp32 = ref + j * s->m + lo;
            if (pass == 0) {
                k->sum(&sums, low, fp32, hi - lo);
                amp_audit_spread_line(&spread, low, fp32, lo, hi - lo);
            } else {
                r.elem_max = k->elem_max(&sums, low, fp32, hi - lo, r.elem_max);
            }
        }
    r.err = amp_compare_relative_error(&sums);
    r.spread_err = amp_audit_spread_error(&spread);
    r.spread_free = !amp_audit_holds_spread(amp_site_op(c->site));
    r.nonfinite = sums.nonfinite;
    r.sampled = 1;
    amp_audit_record(c->audit_site, &r);
    int keep = c->check_keeps && amp_audit_clean(&r);
    if (!keep && c->shadow_elems)
        copy_referenced(&c->acc, c->shadow, 0);
    amp_shadow_free(c->shadow);
    c->shadow = NULL;
    if (keep) {
        amp_audit_ran_lowered(c->audit_site, c->flops);
    } else if (c->site) {
        /* The run as made that follows is timed: a pay check for free. */
        c->pay = 2;
        c->audit_mark = amp_cpu_now_ns();
    }
    return keep;
}

/* A pay check's verdict, to auto's site when auto decides (it runs the
 * calls of a class that costs as made). */
static void pay_verdict(struct amp_blas_call *c, uint64_t ns_made)
{
    /* A lowered run that generated its kernel (a new shape's first native
     * call) timed oneDNN's code generator, not lowering: the check counts
     * as taken, with no vote (on an AMX Xeon such votes sent a ResNet-50
     * size class 2.4 times faster lowered to fp32). Leaving the check to
     * the class's next call instead cost a whole fp32 run per new shape
     * in a model's first pass. */
    if (amp_onednn_made() != c->made_mark) {
        amp_pay_record(c->site, c->flops, 0, 0);
        return;
    }
    enum amp_pay_verdict v = amp_pay_record(c->site, c->flops, c->ns_lowered, ns_made);
    if (c->audit_site && amp_audit_auto())
        amp_audit_pay_verdict(c->audit_site, c->flops, v, c->ns_lowered, ns_made);
}

void amp_blas_pay_rerun_done(struct amp_blas_call *c)
{
    c->pay = 0;
    pay_verdict(c, amp_cpu_now_ns() - c->audit_mark);
}

void amp_blas_pay_begin(struct amp_blas_call *c)
{
    /* Counted when the program is to keep its lowered result; checked
     * unless auto's check already runs on this call (the next takes it). */
    int kept = !c->check || c->check_keeps;
    if (!c->site || c->audit || !kept || !amp_pay_due(c->site, c->flops) || c->check ||
        !c->has_acc || amp_live_load(&amp_rt.cfg.output_round))
        return;
    for (int i = 0; i < c->n_in; i++)
        c->saved_arg[i] = c->arg[i] ? *c->arg[i] : NULL;
    size_t n = referenced(&c->acc);
    c->shadow = n && n <= AMP_CHECK_SHADOW_MAX / (2 * sizeof(float))
                    ? amp_shadow_alloc(2 * n * sizeof(float))
                    : NULL;
    if (!c->shadow)
        return; /* too large, or no memory for it: this call is not checked */
    c->shadow_elems = n;
    copy_referenced(&c->acc, c->shadow, 1);
    c->audit = 1;
    c->pay = 1;
    c->audit_mark = amp_cpu_now_ns();
    c->made_mark = amp_onednn_made();
}

int amp_blas_audit_begin(struct amp_blas_call *c)
{
    int audit_this;
    c->audit_site = amp_audit_enter(c->site, c->dtype, c->flops, c->shape, &audit_this);
    /* A call the audit does not run both ways (the sampling skips it, or
     * it has no site to be recorded at: the site table is full) runs as the
     * program keeps it: as made (AMPSHIM_AUDIT=1: the audit never changes
     * the program's results), or lowered (follow). */
    /* AMPSHIM_AUDIT=auto: a call-site entry the user wrote for this site
     * wins over what auto would decide (it reaches here when it lowers) */
    if (amp_unlikely(amp_audit_auto()) &&
        amp_site_entry(c->t, AMP_DEVICE_CPU, c->hook, c->acc_read) != AMP_CAT_UNSET) {
        amp_audit_ran_lowered(c->audit_site, c->flops);
        return 1;
    }
    if (!c->audit_site || !audit_this)
        return not_audited(c);
    if (sampled(c)) {
        if (check_begin(c))
            return 1;
        return not_audited(c);
    }
    for (int i = 0; i < c->n_in; i++)
        c->saved_arg[i] = c->arg[i] ? *c->arg[i] : NULL;
    c->shadow = NULL;
    c->shadow_elems = 0;
    if (c->has_acc) {
        size_t n = referenced(&c->acc);
        /* The accumulator as it was, then the lowered output. */
        c->shadow = n && n <= SIZE_MAX / (2 * sizeof(float))
                        ? amp_shadow_alloc(2 * n * sizeof(float))
                        : NULL;
        if (!c->shadow) {
            static _Atomic int said;
            if (!atomic_exchange(&said, 1))
                amp_log(AMP_LOG_INFO, "audit: no memory for a call's shadow output; calls "
                                      "without it are not audited");
            return not_audited(c);
        }
        c->shadow_elems = n;
        copy_referenced(&c->acc, c->shadow, 1);
    }
    c->audit = 1;
    c->audit_mark = amp_now_ns(); /* the lowered run starts */
    return 1;
}

void amp_blas_audit_cancel(struct amp_blas_call *c)
{
    if (!c->audit && !c->check)
        return;
    c->check = 0;
    c->pay = 0;
    amp_shadow_free(c->shadow);
    c->shadow = NULL;
    c->audit = 0;
}

/* The audit's clock: a pay check's is the process's CPU time. */
static uint64_t audit_clock(const struct amp_blas_call *c)
{
    return c->pay ? amp_cpu_now_ns() : amp_now_ns();
}

void amp_blas_audit_swap(struct amp_blas_call *c)
{
    amp_audit_test_slow_lowered(c->flops);
    c->ns_lowered = audit_clock(c) - c->audit_mark;
    /* What the program would have had from the lowered call. */
    if (c->has_acc && amp_live_load(&amp_rt.cfg.output_round))
        amp_blas_round_output(c);
    c->output_rounded = 1;
    for (int i = 0; i < c->n_in; i++)
        if (c->arg[i])
            *c->arg[i] = c->saved_arg[i];
    if (c->has_acc) {
        float *before = c->shadow, *lowered = c->shadow + c->shadow_elems;
        copy_referenced(&c->acc, lowered, 1);
        copy_referenced(&c->acc, before, 0);
    }
    c->audit_mark = audit_clock(c); /* the run as made starts */
}

void amp_blas_audit_finish(struct amp_blas_call *c)
{
    uint64_t ns_fp32 = audit_clock(c) - c->audit_mark;
    if (!c->has_acc)
        return;
    if (c->pay)
        pay_verdict(c, ns_fp32);
    const float *lowered = c->shadow + c->shadow_elems;
    const struct amp_compare_kernels *k = amp_compare();
    struct amp_compare_sums sums = {0};
    struct amp_audit_result r = {.flops = c->flops};
    r.ns_lowered = c->ns_lowered;
    r.ns_fp32 = ns_fp32;
    /* Both passes walk the output's lines; the lowered copy is compact. The
     * spread is measured on the matrix's own lines (line_len long), also
     * where a contiguous output is walked as one long line: as one, its
     * "spread along a line" was the whole output's, and its places array
     * as long as the output (16 MiB of doubles for a 512x1024 C). */
    int64_t width =
        c->acc.line_len > 0 && c->acc.line_len < c->acc.inner ? c->acc.line_len : c->acc.inner;
    struct amp_audit_spread spread;
    amp_audit_spread_begin(&spread, width);
    for (int pass = 0; pass < 2; pass++) {
        size_t at = 0;
        for (int64_t line = 0; line < c->acc.outer; line++) {
            int64_t lo, hi;
            if (!amp_operand_line(&c->acc, line, &lo, &hi))
                continue;
            const float *fp32 = c->acc.p + line * c->acc.ld + lo;
            if (pass == 0) {
                k->sum(&sums, lowered + at, fp32, hi - lo);
                for (int64_t i = lo; i < hi;) { /* one matrix line at a time */
                    int64_t end = (i / width + 1) * width;
                    end = end < hi ? end : hi;
                    amp_audit_spread_line(&spread, lowered + at + (i - lo), fp32 + (i - lo),
                                          i % width, end - i);
                    i = end;
                }
            } else {
                r.elem_max = k->elem_max(&sums, lowered + at, fp32, hi - lo, r.elem_max);
            }
            at += (size_t)(hi - lo);
        }
    }
    r.err = amp_compare_relative_error(&sums);
    r.spread_err = amp_audit_spread_error(&spread);
    r.spread_free = !amp_audit_holds_spread(amp_site_op(c->site));
    r.nonfinite = sums.nonfinite;
    int clean = amp_audit_clean(&r);
    if (c->pay) {
        /* A pay check: the program keeps the lowered output, but under
         * auto one over tolerance keeps fp32's and moves its site. */
        c->pay = 0;
        if (c->audit_site)
            amp_audit_record(c->audit_site, &r);
        if (clean || !amp_audit_auto()) { /* its lowered flops are counted already */
            copy_referenced(&c->acc, c->shadow + c->shadow_elems, 0);
        } else {
            c->outcome = AMP_OUTCOME_FP32;
            c->t->fp32_depth++;
        }
        amp_shadow_free(c->shadow);
        c->shadow = NULL;
        return;
    }
    amp_audit_record(c->audit_site, &r);
    if (amp_audit_follows() && !c->audit_only) {
        copy_referenced(&c->acc, c->shadow + c->shadow_elems, 0);
        amp_audit_ran_lowered(c->audit_site, c->flops);
    }
    amp_shadow_free(c->shadow);
    c->shadow = NULL;
}

float amp_blas_audit_scalar(struct amp_blas_call *c, float lowered, float fp32)
{
    struct amp_compare_sums sums = {0};
    struct amp_audit_result r = {.flops = c->flops};
    r.ns_lowered = c->ns_lowered;
    r.ns_fp32 = amp_now_ns() - c->audit_mark;
    amp_compare()->sum(&sums, &lowered, &fp32, 1);
    r.elem_max = amp_compare()->elem_max(&sums, &lowered, &fp32, 1, 0.0);
    r.err = amp_compare_relative_error(&sums);
    r.nonfinite = sums.nonfinite;
    amp_audit_record(c->audit_site, &r);
    if (!amp_audit_follows() || c->audit_only)
        return fp32;
    amp_audit_ran_lowered(c->audit_site, c->flops);
    return lowered;
}
